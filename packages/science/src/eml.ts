import { attr, firstUrl, kid, kids, num, orcidOf, paragraphs, path, text, uniq, type Node } from './xml.js';
import { emptyMetadata, type Creator, type ScienceMetadata } from './types.js';

/** EML 2.0.x, 2.1.x, 2.2.x (`eml://ecoinformatics.org/eml-2.*`, `https://eml.ecoinformatics.org/eml-2.*`). */
export function isEmlFormat(formatId: string): boolean {
  return /^(eml:\/\/ecoinformatics\.org\/eml-2\.|https?:\/\/eml\.ecoinformatics\.org\/eml-2\.)/.test(formatId);
}

export function emlParty(p: Node): Creator | undefined {
  const ind = kid(p, 'individualName');
  const given = kids(ind, 'givenName').map(text).filter((s): s is string => !!s);
  const family = text(kid(ind, 'surName'));
  const organization = text(kid(p, 'organizationName'));
  const position = text(kid(p, 'positionName'));
  const personal = [...given, family].filter(Boolean).join(' ');
  const name = personal || organization || position;
  if (!name) return undefined;
  const c: Creator = { name };
  // As the federation's indexer: an individualName is a person, an organizationName alone an organisation.
  if (personal) c.kind = 'person';
  else if (organization) c.kind = 'organization';
  if (given.length) c.givenName = given.join(' ');
  if (family) c.familyName = family;
  if (organization) c.organization = organization;
  const email = text(kid(p, 'electronicMailAddress'));
  if (email) c.email = email;
  for (const u of kids(p, 'userId')) {
    const dir = attr(u, 'directory') ?? '';
    const o = orcidOf(text(u));
    if (o && (/orcid/i.test(dir) || /orcid/i.test(text(u) ?? '') || dir === '')) {
      c.orcid = o;
      break;
    }
  }
  return c;
}

function partyName(p: Node | undefined): string | undefined {
  if (!p) return undefined;
  return text(kid(p, 'organizationName')) ?? emlParty(p)?.name;
}

/** Elements carrying an `id` attribute, first one per id, found by a bounded iterative walk. */
function elementsById(root: Node): Map<string, Node> {
  const byId = new Map<string, Node>();
  const stack: Array<{ node: Node; depth: number }> = [{ node: root, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop()!;
    const id = attr(node, 'id');
    if (id !== undefined && !byId.has(id)) byId.set(id, node);
    if (depth >= 64) continue;
    for (const [k, v] of Object.entries(node)) {
      if (k.startsWith('@_') || k === '#text' || !Array.isArray(v)) continue;
      for (const c of v) stack.push({ node: c, depth: depth + 1 });
    }
  }
  return byId;
}

/**
 * A party as written, or the earlier party it names by `<references>` (EML lets a creator,
 * contact or publisher be given once with an id and referred to afterwards). A reference
 * to a party that itself only references is followed no further.
 */
function resolveParty(p: Node, byId: () => Map<string, Node>): Node {
  const ref = text(kid(p, 'references'));
  if (!ref) return p;
  const target = byId().get(ref);
  return target && !kid(target, 'references') ? target : p;
}

export function readEml(formatId: string, root: Node): ScienceMetadata {
  const md = emptyMetadata(formatId);
  const ds = kid(root, 'dataset') ?? kid(root, 'citation') ?? kid(root, 'software') ?? kid(root, 'protocol');
  if (!ds) return md;
  const title = text(kid(ds, 'title'));
  if (title) md.title = title;
  let ids: Map<string, Node> | undefined;
  const byId = (): Map<string, Node> => (ids ??= elementsById(root));
  for (const p of kids(ds, 'creator')) {
    const c = emlParty(resolveParty(p, byId));
    if (c) md.creators.push(c);
  }
  const abstract = paragraphs(kid(ds, 'abstract'));
  if (abstract) md.abstract = abstract;
  md.keywords = uniq(path(ds, 'keywordSet', 'keyword').map(text));
  const coverage = kid(ds, 'coverage');
  for (const g of kids(coverage, 'geographicCoverage')) {
    const b = kid(g, 'boundingCoordinates');
    const west = num(text(kid(b, 'westBoundingCoordinate')));
    const east = num(text(kid(b, 'eastBoundingCoordinate')));
    const north = num(text(kid(b, 'northBoundingCoordinate')));
    const south = num(text(kid(b, 'southBoundingCoordinate')));
    if (west === undefined || east === undefined || north === undefined || south === undefined) continue;
    const description = text(kid(g, 'geographicDescription'));
    md.spatial.push(description ? { west, east, north, south, description } : { west, east, north, south });
  }
  for (const t of kids(coverage, 'temporalCoverage')) {
    for (const r of kids(t, 'rangeOfDates')) {
      const begin = text(kid(kid(r, 'beginDate'), 'calendarDate'));
      const end = text(kid(kid(r, 'endDate'), 'calendarDate'));
      if (begin || end) md.temporal.push({ ...(begin ? { begin } : {}), ...(end ? { end } : {}) });
    }
    for (const s of kids(t, 'singleDateTime')) {
      const d = text(kid(s, 'calendarDate'));
      if (d) md.temporal.push({ begin: d, end: d });
    }
  }
  const licensed = kid(ds, 'licensed');
  if (licensed) {
    const name = text(kid(licensed, 'licenseName')) ?? text(kid(licensed, 'identifier'));
    const url = text(kid(licensed, 'url'));
    md.license = { ...(name ? { name } : {}), ...(url ? { url } : {}) };
  } else {
    const rights = kid(ds, 'intellectualRights');
    const name = paragraphs(rights);
    if (name) {
      const ulink = path(rights, 'para', 'ulink')[0] ?? path(rights, 'ulink')[0];
      const url = attr(ulink, 'url') ?? firstUrl(name);
      md.license = url ? { name, url } : { name };
    }
  }
  const publisherNode = kid(ds, 'publisher');
  const publisher = partyName(publisherNode && resolveParty(publisherNode, byId));
  if (publisher) md.publisher = publisher;
  const pubDate = text(kid(ds, 'pubDate'));
  if (pubDate) md.pubDate = pubDate;
  md.alternateIdentifiers = uniq(kids(ds, 'alternateIdentifier').map(text));
  return md;
}
