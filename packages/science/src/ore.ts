import { RdfXmlParser } from 'rdfxml-streaming-parser';
import { decodeDocument, DEFAULT_MAX_DOCUMENT_BYTES } from './xml.js';
import type { ResourceMap } from './types.js';

/** OAI-ORE resource maps (RDF/XML). */
export function isResourceMapFormat(formatId: string): boolean {
  return formatId === 'http://www.openarchives.org/ore/terms';
}

const RDF_TYPE = 'http://www.w3.org/1999/02/22-rdf-syntax-ns#type';
const ORE = 'http://www.openarchives.org/ore/terms/';
const DCTERMS_ID = 'http://purl.org/dc/terms/identifier';
const DC_ID = 'http://purl.org/dc/elements/1.1/identifier';
const CITO = 'http://purl.org/spar/cito/';

interface Triple {
  s: string;
  p: string;
  o: string;
  literal: boolean;
}

function parseTriples(xml: string): Promise<Triple[] | undefined> {
  return new Promise((resolve) => {
    const triples: Triple[] = [];
    let done = false;
    const finish = (v: Triple[] | undefined): void => {
      if (!done) (done = true), resolve(v);
    };
    try {
      const parser = new RdfXmlParser({ baseIRI: 'https://cn.dataone.org/cn/v2/resolve/' });
      parser.on('data', (q: { subject: { value: string }; predicate: { value: string }; object: { value: string; termType: string } }) => {
        triples.push({ s: q.subject.value, p: q.predicate.value, o: q.object.value, literal: q.object.termType === 'Literal' });
        if (triples.length > 1_000_000) finish(undefined);
      });
      parser.on('error', () => finish(undefined));
      parser.on('end', () => finish(triples));
      parser.on('finish', () => setImmediate(() => finish(triples)));
      parser.write(xml);
      parser.end();
    } catch {
      finish(undefined);
    }
  });
}

/**
 * The PID a URI names: its dcterms:identifier literal when the map gives one, else the last
 * path segment of a resolve URI (`https://cn.dataone.org/cn/v2/resolve/<urlencoded pid>`),
 * else the URI itself.
 */
function pidResolver(triples: Triple[]): (uri: string) => string {
  const ids = new Map<string, string>();
  for (const t of triples) if ((t.p === DCTERMS_ID || t.p === DC_ID) && t.literal && !ids.has(t.s)) ids.set(t.s, t.o.trim());
  return (uri) => {
    const id = ids.get(uri);
    if (id) return id;
    const m = /\/(?:cn|mn)\/v[12]\/(?:resolve|object)\/([^?#]+)$/.exec(uri) ?? /\/resolve\/([^?#]+)$/.exec(uri);
    if (m) {
      try {
        return decodeURIComponent(m[1]!);
      } catch {
        return m[1]!;
      }
    }
    return uri;
  };
}

/**
 * Read an OAI-ORE resource map (RDF/XML): the aggregation, its members, and the CiTO
 * documents/isDocumentedBy relations, all as PIDs. Undefined for anything unreadable or
 * without an aggregation; never throws. DOCTYPEs are refused, size is bounded.
 */
export async function readResourceMap(input: string | Uint8Array, options: { maxBytes?: number } = {}): Promise<ResourceMap | undefined> {
  const xml = decodeDocument(input, options.maxBytes ?? DEFAULT_MAX_DOCUMENT_BYTES);
  if (xml === undefined || /<!DOCTYPE|<!ENTITY/i.test(xml)) return undefined;
  const triples = await parseTriples(xml);
  if (!triples) return undefined;
  const pidOf = pidResolver(triples);
  const aggregations = triples.filter((t) => t.p === RDF_TYPE && t.o === `${ORE}Aggregation`).map((t) => t.s);
  const aggregation = aggregations[0] ?? triples.find((t) => t.p === `${ORE}aggregates`)?.s;
  if (!aggregation) return undefined;
  const aggregated: string[] = [];
  for (const t of triples) {
    if (t.literal || t.s !== aggregation || t.p !== `${ORE}aggregates`) continue;
    const pid = pidOf(t.o);
    if (!aggregated.includes(pid)) aggregated.push(pid);
  }
  for (const t of triples) {
    if (t.literal || t.o !== aggregation || t.p !== `${ORE}isAggregatedBy`) continue;
    const pid = pidOf(t.s);
    if (!aggregated.includes(pid)) aggregated.push(pid);
  }
  const documents: ResourceMap['documents'] = [];
  const add = (metadata: string, data: string): void => {
    if (!documents.some((d) => d.metadata === metadata && d.data === data)) documents.push({ metadata, data });
  };
  for (const t of triples) {
    if (t.literal) continue;
    // A metadata document saying it documents itself (common in DataONE maps) says nothing.
    if (t.s === t.o) continue;
    if (t.p === `${CITO}documents`) add(pidOf(t.s), pidOf(t.o));
    else if (t.p === `${CITO}isDocumentedBy`) add(pidOf(t.o), pidOf(t.s));
  }
  const mapUri = triples.find((t) => t.p === `${ORE}describes` && t.o === aggregation)?.s;
  const out: ResourceMap = { aggregation, aggregated, documents };
  if (mapUri) out.resourceMap = pidOf(mapUri);
  return out;
}
