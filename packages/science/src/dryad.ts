import { kids, text, uniq, type Node } from './xml.js';
import { emptyMetadata, type ScienceMetadata } from './types.js';
import { creatorFromString } from './names.js';

/** Dryad's metadata profile (v3.1 DryadDataPackage / DryadDataFile, and the older dryad terms). */
export function isDryadFormat(formatId: string): boolean {
  return formatId === 'http://datadryad.org/profile/v3.1' || formatId === 'http://purl.org/dryad/terms/';
}

/**
 * Dublin Core terms on the root: dcterms:title, dcterms:creator ("Family, Given" as Dryad
 * writes authors), dcterms:subject, dcterms:description, dcterms:spatial (place names),
 * dcterms:temporal, dcterms:dateSubmitted / available, dcterms:identifier, rights / license.
 */
export function readDryad(formatId: string, root: Node): ScienceMetadata {
  const md = emptyMetadata(formatId);
  const all = (name: string): string[] => kids(root, name).map(text).filter((s): s is string => !!s);
  const title = all('title')[0];
  if (title) md.title = title;
  // Dryad's creators are the article's authors: persons unless the name says otherwise.
  for (const name of uniq(all('creator'))) md.creators.push(creatorFromString(name));
  const abstract = all('description')[0] ?? all('abstract')[0];
  if (abstract) md.abstract = abstract;
  md.keywords = uniq([...all('subject'), ...all('scientificName')]);
  const places = uniq(all('spatial'));
  if (places.length) md.places = places;
  for (const t of all('temporal')) {
    const [begin, end] = t.includes('/') ? t.split('/', 2) : [t, t];
    if (begin || end) md.temporal.push({ ...(begin ? { begin: begin.trim() } : {}), ...(end ? { end: end.trim() } : {}) });
  }
  const pubDate = all('dateSubmitted')[0] ?? all('available')[0] ?? all('issued')[0];
  if (pubDate) md.pubDate = pubDate;
  const publisher = all('publisher')[0];
  if (publisher) md.publisher = publisher;
  const license = all('license')[0] ?? all('rights')[0];
  if (license) md.license = /^https?:\/\/\S+$/.test(license) ? { url: license } : { name: license };
  md.alternateIdentifiers = uniq(all('identifier'));
  return md;
}
