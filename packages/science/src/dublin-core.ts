import { kids, num, text, uniq, type Node } from './xml.js';
import { emptyMetadata, type ScienceMetadata } from './types.js';
import { creatorFromString } from './names.js';

/** Dublin Core records: DataONE's ONEDCX, OAI-PMH oai_dc, bare dc/dcterms documents. */
export function isDublinCoreFormat(formatId: string): boolean {
  return (
    formatId === 'http://ns.dataone.org/metadata/schema/onedcx/v1.0' ||
    formatId === 'http://www.openarchives.org/OAI/2.0/oai_dc/' ||
    formatId === 'http://purl.org/dc/elements/1.1/' ||
    formatId === 'http://purl.org/dc/terms/'
  );
}

/** DCMI Box / Period encodings: `name=value; name=value`. */
function dcmiPairs(s: string): Map<string, string> | undefined {
  if (!/=/.test(s)) return undefined;
  const m = new Map<string, string>();
  for (const part of s.split(';')) {
    const i = part.indexOf('=');
    if (i > 0) m.set(part.slice(0, i).trim().toLowerCase(), part.slice(i + 1).trim());
  }
  return m;
}

export function readDublinCore(formatId: string, root: Node): ScienceMetadata {
  const md = emptyMetadata(formatId);
  // Elements may sit on the root (oai_dc) or one level down (ONEDCX simpleDc / dcTerms).
  const containers = [root, ...Object.entries(root).filter(([k, v]) => !k.startsWith('@_') && k !== '#text' && Array.isArray(v)).flatMap(([, v]) => v as Node[])];
  const all = (name: string): string[] => containers.flatMap((c) => kids(c, name)).map(text).filter((s): s is string => !!s);
  const title = all('title')[0];
  if (title) md.title = title;
  // Kept as written ("McClure, Sarah (Penn State)") and split: family, given, affiliation.
  for (const name of uniq(all('creator'))) md.creators.push(creatorFromString(name));
  const abstract = all('abstract')[0] ?? all('description')[0];
  if (abstract) md.abstract = abstract;
  md.keywords = uniq(all('subject'));
  for (const t of all('temporal')) {
    const p = dcmiPairs(t);
    if (p) {
      const begin = p.get('start');
      const end = p.get('end');
      if (begin || end) md.temporal.push({ ...(begin ? { begin } : {}), ...(end ? { end } : {}) });
    } else if (t.includes('/')) {
      const [begin, end] = t.split('/', 2);
      md.temporal.push({ ...(begin ? { begin } : {}), ...(end ? { end } : {}) });
    } else md.temporal.push({ begin: t, end: t });
  }
  for (const s of all('spatial')) {
    const p = dcmiPairs(s);
    if (!p) {
      (md.places ??= []).push(s);
      continue;
    }
    // DCMI Point: east=; north=.
    const px = num(p.get('east'));
    const py = num(p.get('north'));
    if (px !== undefined && py !== undefined) {
      const name = p.get('name');
      md.spatial.push({ west: px, east: px, north: py, south: py, ...(name ? { description: name } : {}) });
      continue;
    }
    const west = num(p.get('westlimit'));
    const east = num(p.get('eastlimit'));
    const north = num(p.get('northlimit'));
    const south = num(p.get('southlimit'));
    if (west === undefined || east === undefined || north === undefined || south === undefined) continue;
    const description = p.get('name');
    md.spatial.push(description ? { west, east, north, south, description } : { west, east, north, south });
  }
  const licenseText = all('license')[0] ?? all('rights')[0];
  if (licenseText) md.license = /^https?:\/\/\S+$/.test(licenseText) ? { url: licenseText } : { name: licenseText };
  const publisher = all('publisher')[0];
  if (publisher) md.publisher = publisher;
  const pubDate = all('issued')[0] ?? all('date')[0];
  if (pubDate) md.pubDate = pubDate;
  md.alternateIdentifiers = uniq(all('identifier'));
  return md;
}
