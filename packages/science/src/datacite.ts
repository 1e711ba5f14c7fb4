import { attr, kid, kids, num, orcidOf, path, text, uniq, type Node } from './xml.js';
import { emptyMetadata, type Creator, type ScienceMetadata } from './types.js';
import { creatorFromString, organization, person } from './names.js';

/** DataCite metadata kernel 2.x, 3.x, 4.x. */
export function isDataCiteFormat(formatId: string): boolean {
  return /^https?:\/\/datacite\.org\/schema\/kernel-\d/.test(formatId);
}

function creator(c: Node): Creator | undefined {
  const nameNode = kid(c, 'creatorName');
  const raw = text(nameNode);
  const given = text(kid(c, 'givenName'));
  const family = text(kid(c, 'familyName'));
  const nameType = attr(nameNode, 'nameType');
  const aff = text(kid(c, 'affiliation'));
  let out: Creator;
  // The kind as the kernel says it (nameType, kernel 4.1+), else by given/family names, else by the name's form.
  if (nameType === 'Organizational') out = organization(raw ?? family ?? given ?? '');
  else if (given || family) out = person({ ...(raw ? { written: raw } : {}), ...(given ? { given } : {}), ...(family ? { family } : {}) });
  else if (raw) out = creatorFromString(raw, nameType === 'Personal' ? 'person' : undefined);
  else return undefined;
  if (!out.name) return undefined;
  for (const id of kids(c, 'nameIdentifier')) {
    if (/orcid/i.test(attr(id, 'nameIdentifierScheme') ?? '')) {
      const o = orcidOf(text(id));
      if (o) out.orcid = o;
    }
  }
  if (aff && out.kind !== 'organization') out.organization = aff;
  return out;
}

/** "lat long" (kernel 3 geoLocationPoint) or pointLatitude/pointLongitude (kernel 4). */
function point(p: Node | undefined): { lat: number; lon: number } | undefined {
  if (!p) return undefined;
  let lat = num(text(kid(p, 'pointLatitude')));
  let lon = num(text(kid(p, 'pointLongitude')));
  if (lat === undefined && lon === undefined) [lat, lon] = (text(p) ?? '').split(/[\s,]+/).map(num);
  if (lat === undefined || lon === undefined || Math.abs(lat) > 90 || Math.abs(lon) > 180) return undefined;
  return { lat, lon };
}

export function readDataCite(formatId: string, root: Node): ScienceMetadata {
  const md = emptyMetadata(formatId);
  const titles = path(root, 'titles', 'title');
  const title = text(titles.find((t) => !attr(t, 'titleType')) ?? titles[0]);
  if (title) md.title = title;
  for (const c of path(root, 'creators', 'creator')) {
    const x = creator(c);
    if (x) md.creators.push(x);
  }
  const descriptions = path(root, 'descriptions', 'description');
  const abstract = text(descriptions.find((d) => attr(d, 'descriptionType') === 'Abstract') ?? descriptions[0]);
  if (abstract) md.abstract = abstract;
  md.keywords = uniq(path(root, 'subjects', 'subject').map(text));
  for (const d of path(root, 'dates', 'date')) {
    const type = attr(d, 'dateType');
    if (type !== 'Collected' && type !== 'Coverage' && type !== 'Valid') continue;
    const v = text(d);
    if (!v) continue;
    const [begin, end] = v.includes('/') ? v.split('/', 2) : [v, v];
    md.temporal.push({ ...(begin ? { begin } : {}), ...(end ? { end } : {}) });
  }
  for (const g of path(root, 'geoLocations', 'geoLocation')) {
    const description = text(kid(g, 'geoLocationPlace'));
    const box = kid(g, 'geoLocationBox');
    if (!box) {
      // A point is a box of no extent; a place alone is kept by name.
      const at = point(kid(g, 'geoLocationPoint'));
      if (at) md.spatial.push({ west: at.lon, east: at.lon, north: at.lat, south: at.lat, ...(description ? { description } : {}) });
      else if (description) (md.places ??= []).push(description);
      continue;
    }
    let west: number | undefined, east: number | undefined, north: number | undefined, south: number | undefined;
    if (kid(box, 'westBoundLongitude')) {
      west = num(text(kid(box, 'westBoundLongitude')));
      east = num(text(kid(box, 'eastBoundLongitude')));
      north = num(text(kid(box, 'northBoundLatitude')));
      south = num(text(kid(box, 'southBoundLatitude')));
    } else {
      // Kernel 3: "south west north east" as one string.
      const parts = (text(box) ?? '').split(/\s+/).map(num);
      [south, west, north, east] = parts;
    }
    if (west === undefined || east === undefined || north === undefined || south === undefined) continue;
    md.spatial.push(description ? { west, east, north, south, description } : { west, east, north, south });
  }
  const rights = path(root, 'rightsList', 'rights')[0];
  if (rights) {
    const name = text(rights) ?? attr(rights, 'rightsIdentifier');
    const url = attr(rights, 'rightsURI');
    md.license = { ...(name ? { name } : {}), ...(url ? { url } : {}) };
  }
  const publisher = text(kid(root, 'publisher'));
  if (publisher) md.publisher = publisher;
  const pubDate = text(kid(root, 'publicationYear'));
  if (pubDate) md.pubDate = pubDate;
  const id = kid(root, 'identifier');
  const primary = text(id);
  md.alternateIdentifiers = uniq([
    primary && attr(id, 'identifierType') === 'DOI' && !/^doi:/i.test(primary) ? `doi:${primary}` : primary,
    ...path(root, 'alternateIdentifiers', 'alternateIdentifier').map(text),
  ]);
  return md;
}
