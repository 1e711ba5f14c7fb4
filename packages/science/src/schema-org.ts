/**
 * schema.org Dataset in JSON-LD, as the federation's science-on-schema.org guidelines write
 * it. JSON is not XML: the document is checked by a linear pre-scan (size, nesting depth,
 * values, characters of strings) against the same budgets before JSON.parse, and read by
 * bounded walks. No remote @context is fetched: terms are read by their schema.org names
 * (with or without a `schema:`/`so:`/`sdo:` prefix or the full IRI).
 */
import { budgetsOf, type DocumentBudgets } from './budgets.js';
import { decodeDocument } from './xml.js';
import { emptyMetadata, type Creator, type ScienceMetadata, type ScienceRead } from './types.js';
import { creatorFromString, organization, person } from './names.js';
import { orcidOf, uniq } from './xml.js';

export const SCHEMA_ORG_FORMAT = 'science-on-schema.org/Dataset;ld+json';

export function isSchemaOrgFormat(formatId: string): boolean {
  return formatId === SCHEMA_ORG_FORMAT;
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json };
type Obj = { [key: string]: Json };

const isObj = (v: Json | undefined): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

/**
 * One pass over the text: nesting depth, values (as elements), string characters (as text).
 * `budget` failures mean not indexed; syntax is JSON.parse's job afterwards.
 */
export function scanJson(json: string, b: DocumentBudgets): { ok: true } | { ok: false; budget: boolean; reason: string } {
  let depth = 0;
  let values = 0;
  let chars = 0;
  const n = json.length;
  for (let i = 0; i < n; i++) {
    const c = json.charCodeAt(i);
    if (c === 0x22 /* " */) {
      let j = i + 1;
      while (j < n) {
        const d = json.charCodeAt(j);
        if (d === 0x5c) j += 2;
        else if (d === 0x22) break;
        else j++;
      }
      chars += j - i - 1;
      if (chars > b.maxTextChars) return { ok: false, budget: true, reason: `more than ${b.maxTextChars} characters of text` };
      if (++values > b.maxElements) return { ok: false, budget: true, reason: `more than ${b.maxElements} values` };
      i = j;
    } else if (c === 0x7b || c === 0x5b /* { [ */) {
      if (++depth > b.maxDepth) return { ok: false, budget: true, reason: `values nested more than ${b.maxDepth} deep` };
      if (++values > b.maxElements) return { ok: false, budget: true, reason: `more than ${b.maxElements} values` };
    } else if (c === 0x7d || c === 0x5d) {
      if (--depth < 0) return { ok: false, budget: false, reason: 'not JSON: a bracket is closed that was not opened' };
    }
  }
  return { ok: true };
}

/** Plain text of a JSON document: its string values, joined (bounded walk). */
function jsonText(root: Json): string {
  const parts: string[] = [];
  const stack: Json[] = [root];
  while (stack.length > 0) {
    const v = stack.pop()!;
    if (typeof v === 'string') {
      if (!/^https?:\/\//.test(v)) parts.push(v);
    } else if (Array.isArray(v)) for (let i = v.length - 1; i >= 0; i--) stack.push(v[i]!);
    else if (isObj(v)) {
      const entries = Object.entries(v);
      for (let i = entries.length - 1; i >= 0; i--) if (!entries[i]![0].startsWith('@')) stack.push(entries[i]![1]);
    }
  }
  return parts.join(' ').replace(/\s+/g, ' ').trim();
}

/** Read a schema.org JSON-LD Dataset document. Never throws. */
export function readSchemaOrgResult(formatId: string, input: string | Uint8Array, budgets: Partial<DocumentBudgets> = {}, withText = false): ScienceRead<ScienceMetadata> {
  const b = budgetsOf(budgets);
  const size = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.byteLength;
  if (size > b.maxBytes) return { status: 'not-indexed', reason: `larger than ${b.maxBytes} bytes` };
  // JSON is UTF-8 (RFC 8259); decodeDocument strips a BOM and finds no XML declaration here.
  const json = typeof input === 'string' ? input.replace(/^\uFEFF/, '') : decodeDocument(input, b.maxBytes);
  if (json === undefined || json.trim() === '') return { status: 'unreadable', reason: 'empty or not decodable' };
  const scan = scanJson(json, b);
  if (!scan.ok) return scan.budget ? { status: 'not-indexed', reason: scan.reason } : { status: 'unreadable', reason: scan.reason };
  let root: Json;
  try {
    root = JSON.parse(json) as Json;
  } catch (err) {
    return { status: 'unreadable', reason: `not JSON: ${(err as Error).message}`.slice(0, 200) };
  }
  try {
    const dataset = findDataset(root);
    if (!dataset) return { status: 'unreadable', reason: 'no schema.org Dataset in the document' };
    const value = readDataset(formatId, dataset.node, dataset.graph);
    return withText ? { status: 'read', value, text: jsonText(root) } : { status: 'read', value };
  } catch (err) {
    return { status: 'unreadable', reason: `not readable: ${(err as Error)?.message ?? String(err)}`.slice(0, 200) };
  }
}

/** A term's value by its schema.org name, whichever way the document spells it. */
function prop(node: Obj | undefined, name: string): Json | undefined {
  if (!node) return undefined;
  for (const k of [name, `schema:${name}`, `so:${name}`, `sdo:${name}`, `https://schema.org/${name}`, `http://schema.org/${name}`]) {
    if (node[k] !== undefined) return node[k];
  }
  return undefined;
}

function typesOf(node: Obj): string[] {
  const t = node['@type'];
  const list = Array.isArray(t) ? t : [t];
  return list.filter((x): x is string => typeof x === 'string').map((x) => x.replace(/^(?:https?:\/\/schema\.org\/|schema:|so:|sdo:)/, ''));
}

/** Values of a term as a list: a single value, an array, or a JSON-LD `@list` / `@set`. */
function list(v: Json | undefined): Json[] {
  if (v === undefined || v === null) return [];
  if (Array.isArray(v)) return v.flatMap((x) => (isObj(x) && Array.isArray(x['@list'] ?? x['@set']) ? ((x['@list'] ?? x['@set']) as Json[]) : [x]));
  if (isObj(v) && Array.isArray(v['@list'] ?? v['@set'])) return (v['@list'] ?? v['@set']) as Json[];
  return [v];
}

/** A string from a literal, a `{"@value"}` object or the first of a list. */
function str(v: Json | undefined): string | undefined {
  for (const x of list(v)) {
    const s = typeof x === 'string' ? x : typeof x === 'number' ? String(x) : isObj(x) && (typeof x['@value'] === 'string' || typeof x['@value'] === 'number') ? String(x['@value']) : undefined;
    const t = s?.replace(/\s+/g, ' ').trim();
    if (t) return t;
  }
  return undefined;
}

interface Graph {
  byId: Map<string, Obj>;
}

/** A node, with a bare `{"@id"}` reference resolved against the document's @graph. */
function deref(v: Json | undefined, g: Graph): Obj | undefined {
  if (!isObj(v)) return undefined;
  const id = v['@id'];
  if (typeof id === 'string' && Object.keys(v).length === 1) return g.byId.get(id) ?? v;
  return v;
}

/**
 * The Dataset the document describes: the top-level node, or the @graph member typed
 * Dataset that no other member names as a part (hasPart), as the federation's indexer does.
 */
function findDataset(root: Json): { node: Obj; graph: Graph } | undefined {
  const top = Array.isArray(root) ? root.filter(isObj) : isObj(root) ? [root] : [];
  const members: Obj[] = [];
  for (const t of top) {
    const graph = t['@graph'];
    if (Array.isArray(graph)) members.push(...graph.filter(isObj));
    else if (isObj(graph)) members.push(graph);
    else members.push(t);
  }
  const byId = new Map<string, Obj>();
  for (const m of members) if (typeof m['@id'] === 'string') byId.set(m['@id'], m);
  const parts = new Set<string>();
  for (const m of members) for (const p of list(prop(m, 'hasPart'))) if (isObj(p) && typeof p['@id'] === 'string') parts.add(p['@id']);
  const datasets = members.filter((m) => typesOf(m).includes('Dataset'));
  const main = datasets.find((d) => !(typeof d['@id'] === 'string' && parts.has(d['@id']))) ?? datasets[0];
  return main ? { node: main, graph: { byId } } : undefined;
}

function agent(v: Json | undefined, g: Graph): Creator | undefined {
  if (typeof v === 'string') return creatorFromString(v);
  let node = deref(v, g);
  if (!node) return undefined;
  // science-on-schema.org: a Role wraps the creator to give a role name or an order.
  if (typesOf(node).includes('Role')) node = deref(prop(node, 'creator'), g) ?? deref(prop(node, 'author'), g) ?? node;
  const types = typesOf(node);
  const name = str(prop(node, 'name'));
  const given = str(prop(node, 'givenName'));
  const family = str(prop(node, 'familyName'));
  let c: Creator;
  if (types.includes('Organization') || types.some((t) => /Organization$|Institution$|^Consortium$|^ResearchProject$/.test(t))) {
    if (!name) return undefined;
    c = organization(name);
  } else if (types.includes('Person') || given || family) {
    c = given || family ? person({ ...(name ? { written: name } : {}), ...(given ? { given } : {}), ...(family ? { family } : {}) }) : creatorFromString(name ?? '', 'person');
    if (!c.name) return undefined;
  } else if (name) c = creatorFromString(name);
  else return undefined;
  const ids = [node['@id'], ...list(prop(node, 'identifier')).map((i) => (isObj(i) ? str(i['value'] ?? i['url'] ?? i['@id']) : str(i))), str(prop(node, 'url'))];
  for (const id of ids) {
    const o = typeof id === 'string' && /orcid/i.test(id) ? orcidOf(id) : undefined;
    if (o) {
      c.orcid = o;
      break;
    }
  }
  const email = str(prop(node, 'email'));
  if (email) c.email = email.replace(/^mailto:/i, '');
  if (c.kind === 'person') {
    const aff = list(prop(node, 'affiliation'))[0];
    const affName = typeof aff === 'string' ? aff : str(prop(deref(aff, g), 'name'));
    if (affName) c.organization = affName;
  }
  return c;
}

/** "S W N E" (science-on-schema.org's GeoShape box: lower corner then upper corner, each "lat lon" or "lat,lon"). */
function box(s: string | undefined): { south: number; west: number; north: number; east: number } | undefined {
  const parts = (s ?? '').trim().split(/[\s,]+/).map(Number);
  if (parts.length !== 4 || parts.some((x) => !Number.isFinite(x))) return undefined;
  const [south, west, north, east] = parts as [number, number, number, number];
  return { south, west, north, east };
}

function readDataset(formatId: string, ds: Obj, g: Graph): ScienceMetadata {
  const md = emptyMetadata(formatId);
  const title = str(prop(ds, 'name'));
  if (title) md.title = title;
  const abstract = str(prop(ds, 'description'));
  if (abstract) md.abstract = abstract;
  for (const c of list(prop(ds, 'creator')).length ? list(prop(ds, 'creator')) : list(prop(ds, 'author'))) {
    const x = agent(c, g);
    if (x) md.creators.push(x);
  }
  const keywords: Array<string | undefined> = [];
  for (const k of list(prop(ds, 'keywords'))) {
    if (typeof k === 'string') keywords.push(...k.split(',').map((x) => x.trim()));
    else if (isObj(k)) keywords.push(str(prop(deref(k, g), 'name')) ?? str(k));
  }
  md.keywords = uniq(keywords);
  for (const t of list(prop(ds, 'temporalCoverage'))) {
    const s = str(t);
    if (!s) continue;
    const [begin, end] = s.includes('/') ? s.split('/', 2).map((x) => (x.trim() === '..' ? '' : x.trim())) : [s, s];
    if (begin || end) md.temporal.push({ ...(begin ? { begin } : {}), ...(end ? { end } : {}) });
  }
  for (const p of list(prop(ds, 'spatialCoverage'))) {
    const place = deref(p, g);
    if (!place) {
      if (typeof p === 'string') (md.places ??= []).push(p);
      continue;
    }
    const description = str(prop(place, 'name')) ?? str(prop(place, 'description'));
    let located = false;
    for (const geo of list(prop(place, 'geo'))) {
      const gn = deref(geo, g);
      if (!gn) continue;
      const types = typesOf(gn);
      const b = types.includes('GeoShape') || prop(gn, 'box') !== undefined ? box(str(prop(gn, 'box'))) : undefined;
      if (b) {
        md.spatial.push({ ...b, ...(description ? { description } : {}) });
        located = true;
        continue;
      }
      const lat = Number(str(prop(gn, 'latitude')));
      const lon = Number(str(prop(gn, 'longitude')));
      if (str(prop(gn, 'latitude')) !== undefined && Number.isFinite(lat) && Number.isFinite(lon) && Math.abs(lat) <= 90 && Math.abs(lon) <= 180) {
        md.spatial.push({ west: lon, east: lon, north: lat, south: lat, ...(description ? { description } : {}) });
        located = true;
      }
    }
    if (!located && description) (md.places ??= []).push(description);
  }
  const license = list(prop(ds, 'license'))[0];
  if (typeof license === 'string') md.license = /^https?:\/\//.test(license) ? { url: license } : { name: license };
  else {
    const l = deref(license, g);
    const name = str(prop(l, 'name'));
    const url = str(prop(l, 'url')) ?? (typeof l?.['@id'] === 'string' ? l['@id'] : undefined);
    if (name || url) md.license = { ...(name ? { name } : {}), ...(url ? { url } : {}) };
  }
  const pubDate = str(prop(ds, 'datePublished'));
  if (pubDate) md.pubDate = pubDate;
  const publisher = list(prop(ds, 'publisher'))[0];
  const publisherName = typeof publisher === 'string' ? publisher : str(prop(deref(publisher, g), 'name'));
  if (publisherName) md.publisher = publisherName;
  const ids: Array<string | undefined> = [];
  for (const id of [...list(prop(ds, 'identifier')), ds['@id']]) {
    if (typeof id === 'string') ids.push(doiOf(id) ?? (id.startsWith('_:') ? undefined : id));
    else if (isObj(id)) {
      const value = str(id['value'] ?? prop(id, 'value'));
      const url = str(id['url'] ?? prop(id, 'url'));
      const scheme = str(id['propertyID'] ?? prop(id, 'propertyID')) ?? '';
      ids.push((/doi/i.test(scheme) && value ? doiOf(value) ?? `doi:${value}` : undefined) ?? doiOf(value ?? '') ?? doiOf(url ?? '') ?? value ?? url);
    }
  }
  md.alternateIdentifiers = uniq(ids);
  for (const d of list(prop(ds, 'distribution'))) {
    const node = deref(d, g);
    if (!node) continue;
    const url = str(prop(node, 'contentUrl')) ?? str(prop(node, 'url'));
    const name = str(prop(node, 'name'));
    const mediaType = str(prop(node, 'encodingFormat'));
    if (url || name) (md.distribution ??= []).push({ ...(url ? { url } : {}), ...(name ? { name } : {}), ...(mediaType ? { mediaType } : {}) });
  }
  return md;
}

/** `doi:10...` from a DOI written as doi:, https://doi.org/ or a bare 10. prefix. */
function doiOf(s: string): string | undefined {
  const m = /^(?:doi:|https?:\/\/(?:dx\.)?doi\.org\/)?(10\.\d{4,9}\/\S+)$/i.exec(s.trim());
  return m ? `doi:${m[1]}` : undefined;
}
