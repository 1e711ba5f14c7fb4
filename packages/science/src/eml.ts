import { attr, firstUrl, kid, kids, num, orcidOf, paragraphs, path, text, uniq, type Node } from './xml.js';
import { emptyMetadata, type Creator, type DataEntity, type EntityAttribute, type ScienceMetadata } from './types.js';

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
 * An element as written, or the earlier one it names by `<references>` (EML lets a creator,
 * contact, publisher, entity or attributeList be given once with an id and referred to
 * afterwards). A reference to an element that itself only references is followed no further.
 */
function resolveReference(p: Node, byId: () => Map<string, Node>): Node {
  const ref = text(kid(p, 'references'));
  if (!ref) return p;
  const target = byId().get(ref);
  return target && !kid(target, 'references') ? target : p;
}

/** What one document contributes as entities: a page is for people, and a document may list 100,000 tables. */
export const ENTITY_LIMITS = { entities: 500, attributes: 300, urls: 10, textChars: 2000 } as const;

/** EML's data entity elements, in the order its schema lists them (the parsed tree keeps order within a kind only). */
const ENTITY_KINDS = ['dataTable', 'spatialRaster', 'spatialVector', 'storedProcedure', 'view', 'otherEntity'] as const;

const bounded = (s: string | undefined): string | undefined => (s === undefined ? undefined : s.slice(0, ENTITY_LIMITS.textChars).replace(/[\uD800-\uDBFF]$/, '') || undefined);

function entityAttribute(a: Node): EntityAttribute | undefined {
  const name = bounded(text(kid(a, 'attributeName')));
  if (!name) return undefined;
  const out: EntityAttribute = { name };
  const label = bounded(text(kid(a, 'attributeLabel')));
  const definition = bounded(text(kid(a, 'attributeDefinition')));
  if (label) out.label = label;
  if (definition) out.definition = definition;
  // Only ratio and interval scales carry a unit.
  for (const scale of ['ratio', 'interval']) {
    const unit = kid(kid(kid(a, 'measurementScale'), scale), 'unit');
    const u = bounded(text(kid(unit, 'standardUnit')) ?? text(kid(unit, 'customUnit')));
    if (u) {
      out.unit = u;
      break;
    }
  }
  return out;
}

/**
 * The data entities of an EML `dataset` (name, description, file name, distribution URLs,
 * variables), within ENTITY_LIMITS. An entity or attributeList given as `<references>` to an
 * earlier one with an id is read from that one.
 */
function readEntities(ds: Node, resolve: (n: Node) => Node): DataEntity[] {
  const out: DataEntity[] = [];
  for (const kind of ENTITY_KINDS) {
    for (const written of kids(ds, kind)) {
      if (out.length >= ENTITY_LIMITS.entities) return out;
      const e = resolve(written);
      const objectName = bounded(path(e, 'physical', 'objectName').map(text).find(Boolean));
      const name = bounded(text(kid(e, 'entityName'))) ?? objectName;
      if (!name) continue;
      const entity: DataEntity = { kind, name, urls: [], attributes: [] };
      const id = bounded(attr(written, 'id')?.trim() || attr(e, 'id')?.trim());
      const description = bounded(text(kid(e, 'entityDescription')));
      if (id) entity.id = id;
      if (description) entity.description = description;
      if (objectName) entity.objectName = objectName;
      entity.urls = uniq(path(e, 'physical', 'distribution', 'online', 'url').map((u) => bounded(text(u)))).slice(0, ENTITY_LIMITS.urls);
      const list = kid(e, 'attributeList');
      for (const a of kids(list && resolve(list), 'attribute')) {
        if (entity.attributes.length >= ENTITY_LIMITS.attributes) break;
        const attribute = entityAttribute(a);
        if (attribute) entity.attributes.push(attribute);
      }
      out.push(entity);
    }
  }
  return out;
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
    const c = emlParty(resolveReference(p, byId));
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
  const publisher = partyName(publisherNode && resolveReference(publisherNode, byId));
  if (publisher) md.publisher = publisher;
  const pubDate = text(kid(ds, 'pubDate'));
  if (pubDate) md.pubDate = pubDate;
  md.alternateIdentifiers = uniq(kids(ds, 'alternateIdentifier').map(text));
  if (kid(root, 'dataset') === ds) {
    const entities = readEntities(ds, (n) => resolveReference(n, byId));
    if (entities.length) md.entities = entities;
  }
  return md;
}
