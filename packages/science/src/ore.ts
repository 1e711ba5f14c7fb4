import { RdfXmlParser } from 'rdfxml-streaming-parser';
import { budgetsOf, scanDocument, type DocumentBudgets } from './budgets.js';
import { decodeDocument } from './xml.js';
import type { ResourceMap, ScienceRead } from './types.js';

/** OAI-ORE resource maps (RDF/XML). */
export function isResourceMapFormat(formatId: string): boolean {
  return formatId === 'http://www.openarchives.org/ore/terms';
}

const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const ORE = 'http://www.openarchives.org/ore/terms/';
const DCTERMS_ID = 'http://purl.org/dc/terms/identifier';
const DC_ID = 'http://purl.org/dc/elements/1.1/identifier';
const CITO = 'http://purl.org/spar/cito/';

const BASE_IRI = 'https://cn.dataone.org/cn/v2/resolve/';
const PROV_AT_LOCATION = 'http://www.w3.org/ns/prov#atLocation';

export interface Triple {
  s: string;
  p: string;
  o: string;
  literal: boolean;
}

type TripleSink = (t: Triple) => void;

function parseTriples(xml: string, maxTriples: number): Promise<Triple[] | undefined> {
  return new Promise((resolve) => {
    const triples: Triple[] = [];
    let done = false;
    const finish = (v: Triple[] | undefined): void => {
      if (!done) (done = true), resolve(v);
    };
    try {
      // IRIs are not validated: maps written by real clients name PIDs with spaces and other
      // characters an IRI may not hold, and a PID is what we want from them anyway.
      const parser = new RdfXmlParser({ baseIRI: BASE_IRI, validateUri: false });
      // Blank node labels (rdf:nodeID) only need to be equal to each other within the map;
      // clients write labels that are not NCNames (`_:b0`, UUIDs starting with a digit),
      // which the parser would refuse as a whole document.
      (parser as unknown as { validateNcname: (v: string) => void }).validateNcname = () => undefined;
      const sink: TripleSink = (t) => {
        triples.push(t);
        if (triples.length > maxTriples) finish(undefined);
      };
      parser.on('data', (q: { subject: { value: string; termType: string }; predicate: { value: string }; object: { value: string; termType: string } }) => {
        const blank = (term: { value: string; termType: string }) => (term.termType === 'BlankNode' ? `_:${term.value}` : term.value);
        sink({ s: blank(q.subject), p: q.predicate.value, o: q.object.termType === 'Literal' ? q.object.value : blank(q.object), literal: q.object.termType === 'Literal' });
      });
      parser.on('error', () => finish(undefined));
      parser.on('end', () => finish(triples));
      parser.on('finish', () => setImmediate(() => finish(triples)));
      // In chunks: the parser copes better with 64 KiB strings than with one of 16 MB.
      for (let i = 0; i < xml.length && !done; i += 65_536) parser.write(xml.slice(i, i + 65_536));
      parser.end();
    } catch {
      finish(undefined);
    }
  });
}

const RESOLVE_SEGMENT = /\/(?:cn|mn)\/v[12]\/(?:resolve|object)\/([\s\S]+)$/;
const RESOLVE_SHORT = /\/resolve\/([\s\S]+)$/;

/**
 * The PID a URI names: its dcterms:identifier literal when the map gives one, else the last
 * path segment of a resolve URI (`https://cn.dataone.org/cn/v2/resolve/<urlencoded pid>`),
 * else the URI itself. Memoized; linear in the URI's length.
 */
function pidResolver(triples: Triple[]): (uri: string) => string {
  const ids = new Map<string, string>();
  for (const t of triples) if ((t.p === DCTERMS_ID || t.p === DC_ID) && t.literal && !ids.has(t.s)) ids.set(t.s, t.o.trim());
  const memo = new Map<string, string>();
  return (uri) => {
    const id = ids.get(uri);
    if (id) return id;
    const known = memo.get(uri);
    if (known !== undefined) return known;
    // The PID part may hold no '?' or '#': look only after the last of them (the former
    // /…([^?#]+)$/ retried from every '/resolve/' and was quadratic on long URIs).
    const tail = uri.slice(Math.max(uri.lastIndexOf('?'), uri.lastIndexOf('#')) + 1);
    const m = RESOLVE_SEGMENT.exec(tail) ?? RESOLVE_SHORT.exec(tail);
    let pid = uri;
    if (m) {
      try {
        pid = decodeURIComponent(m[1]!);
      } catch {
        pid = m[1]!;
      }
    }
    memo.set(uri, pid);
    return pid;
  };
}

export interface ReadMapOptions {
  /** Largest document read (bytes); same as `budgets.maxBytes`. */
  maxBytes?: number;
  /** Budgets checked before parsing (defaults: DEFAULT_BUDGETS). */
  budgets?: Partial<DocumentBudgets>;
}

/**
 * Read an OAI-ORE resource map (RDF/XML), saying why when it cannot: `not-indexed` when it
 * exceeds a budget (checked by a linear pre-scan before the RDF parser runs), `unreadable`
 * when it is not RDF/XML or has no aggregation. Runs on the calling thread (see SciencePool
 * for untrusted documents on a server). Never throws. Linear in the number of statements.
 */
export async function readResourceMapResult(input: string | Uint8Array, options: ReadMapOptions = {}): Promise<ScienceRead<ResourceMap>> {
  const budgets = budgetsOf({ ...options.budgets, ...(options.maxBytes ? { maxBytes: options.maxBytes } : {}) });
  const size = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.byteLength;
  if (size > budgets.maxBytes) return { status: 'not-indexed', reason: `larger than ${budgets.maxBytes} bytes` };
  const xml = decodeDocument(input, budgets.maxBytes);
  if (xml === undefined || xml.trim() === '') return { status: 'unreadable', reason: 'empty or not decodable' };
  const scan = scanDocument(xml, budgets, { links: true });
  if (!scan.ok) return scan.budget ? { status: 'not-indexed', reason: scan.reason } : { status: 'unreadable', reason: scan.reason };
  // Every statement is an element or an attribute: the scan's counts bound the triples.
  const triples = await parseTriples(xml, budgets.maxElements + budgets.maxAttributes);
  if (!triples) return { status: 'unreadable', reason: 'could not be read as OAI-ORE RDF/XML' };
  const map = mapOf(triples);
  return map ? { status: 'read', value: map } : { status: 'unreadable', reason: 'no ore:Aggregation in the map' };
}

/**
 * Read an OAI-ORE resource map (RDF/XML): the aggregation, its members, the CiTO
 * documents/isDocumentedBy relations, all as PIDs, and members' prov:atLocation. Undefined
 * for anything unreadable, over a budget or without an aggregation; never throws.
 */
export async function readResourceMap(input: string | Uint8Array, options: ReadMapOptions = {}): Promise<ResourceMap | undefined> {
  const r = await readResourceMapResult(input, options);
  return r.status === 'read' ? r.value : undefined;
}

/** The ResourceMap of parsed statements (exported for tests); linear in their number. */
export function mapOf(triples: Triple[]): ResourceMap | undefined {
  const pidOf = pidResolver(triples);
  const aggregation = triples.find((t) => t.p === RDF_TYPE && t.o === `${ORE}Aggregation`)?.s ?? triples.find((t) => t.p === `${ORE}aggregates`)?.s;
  if (!aggregation) return undefined;
  const members = new Set<string>();
  for (const t of triples) {
    if (t.literal) continue;
    if (t.s === aggregation && t.p === `${ORE}aggregates`) members.add(pidOf(t.o));
  }
  for (const t of triples) {
    if (t.literal) continue;
    if (t.o === aggregation && t.p === `${ORE}isAggregatedBy`) members.add(pidOf(t.s));
  }
  const documents: ResourceMap['documents'] = [];
  const seen = new Set<string>();
  const add = (metadata: string, data: string): void => {
    const key = `${metadata.length}:${metadata}${data}`;
    if (seen.has(key)) return;
    seen.add(key);
    documents.push({ metadata, data });
  };
  const locations: NonNullable<ResourceMap['locations']> = [];
  const located = new Set<string>();
  for (const t of triples) {
    if (t.p === PROV_AT_LOCATION) {
      const pid = pidOf(t.s);
      // A literal path as written; an IRI the parser resolved against our base loses the base again.
      const location = (t.literal || !t.o.startsWith(BASE_IRI) ? t.o : t.o.slice(BASE_IRI.length)).trim();
      if (location && members.has(pid) && !located.has(pid)) located.add(pid), locations.push({ pid, location });
      continue;
    }
    if (t.literal) continue;
    // A metadata document saying it documents itself (common in DataONE maps) says nothing.
    if (t.s === t.o) continue;
    if (t.p === `${CITO}documents`) add(pidOf(t.s), pidOf(t.o));
    else if (t.p === `${CITO}isDocumentedBy`) add(pidOf(t.o), pidOf(t.s));
  }
  const mapUri = triples.find((t) => t.p === `${ORE}describes` && t.o === aggregation)?.s;
  const out: ResourceMap = { aggregation, aggregated: [...members], documents, locations };
  if (mapUri) out.resourceMap = pidOf(mapUri);
  return out;
}
