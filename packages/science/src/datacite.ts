import { attr, kid, kids, num, orcidOf, path, text, uniq, type Node } from './xml.js';
import { emptyMetadata, type Creator, type ScienceMetadata } from './types.js';

/** DataCite metadata kernel 2.x, 3.x, 4.x. */
export function isDataCiteFormat(formatId: string): boolean {
  return /^https?:\/\/datacite\.org\/schema\/kernel-\d/.test(formatId);
}

function creator(c: Node): Creator | undefined {
  const raw = text(kid(c, 'creatorName'));
  let given = text(kid(c, 'givenName'));
  let family = text(kid(c, 'familyName'));
  const nameType = attr(kid(c, 'creatorName'), 'nameType');
  if (raw && !given && !family && nameType !== 'Organizational') {
    const m = /^([^,]+),\s*(.+)$/.exec(raw);
    if (m) (family = m[1]!.trim()), (given = m[2]!.trim());
  }
  const name = given && family ? `${given} ${family}` : raw;
  if (!name) return undefined;
  const out: Creator = { name };
  if (given) out.givenName = given;
  if (family) out.familyName = family;
  for (const id of kids(c, 'nameIdentifier')) {
    if (/orcid/i.test(attr(id, 'nameIdentifierScheme') ?? '')) {
      const o = orcidOf(text(id));
      if (o) out.orcid = o;
    }
  }
  const aff = text(kid(c, 'affiliation'));
  if (aff) out.organization = aff;
  return out;
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
    if (!box) continue;
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
