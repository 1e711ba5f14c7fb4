import type { QueryEngineDescription } from '@memberkit/types';
import { fieldsOf, parseQuery, type QueryNode } from './parser.js';
import { queryLimits, QueryLimitError, type QueryLimits } from './limits.js';
import { describeSchema, FIELDS, LINK_FIELDS, lookupField } from './schema.js';
import { InvalidQueryError, type EngineResponse, type IndexDoc, type QueryEngine, type QueryParamList, type SearchIndex, type SearchRequest, type SearchResult, type SortSpec } from './types.js';

export interface SolrEngineOptions {
  /** Largest `rows` honoured (larger values are clamped). Default 1000. */
  maxRows?: number;
  /** `rows` when the request gives none (Solr's default: 10). */
  defaultRows?: number;
  /** Bounds on the size of a request (see DEFAULT_QUERY_LIMITS). */
  limits?: Partial<QueryLimits>;
}

const RETURNABLE = FIELDS.filter((d) => d.returnable).map((d) => d.name);

/** Split a list parameter (fl, facet.field, sort) on commas and whitespace. */
function list(v: string): string[] {
  return v.split(/[\s,]+/).filter(Boolean);
}

/** Leaves of a parsed query on fields `on` accepts (iterative: depth is bounded, but cheaply so). */
function countLeaves(root: QueryNode, on: (field: string) => boolean): number {
  let n = 0;
  const stack = [root];
  for (let node = stack.pop(); node; node = stack.pop()) {
    if (node.kind === 'bool') for (const c of node.clauses) stack.push(c.node);
    else if (node.kind !== 'all' && on(node.field)) n++;
  }
  return n;
}

/** A parameter value quoted in an error: long ones cut (a description never echoes a whole body). */
const shown = (v: string): string => (v.length > 40 ? `${v.slice(0, 40)}…` : v);

function intParam(name: string, v: string | undefined, fallback: number, min: number): number {
  if (v === undefined || v.trim() === '') return fallback;
  if (!/^-?\d+$/.test(v.trim())) throw new InvalidQueryError(`${name} must be an integer (got '${shown(v)}')`);
  const n = Number(v);
  if (n < min) throw new InvalidQueryError(`${name} must be at least ${min} (got '${shown(v)}')`);
  return n;
}

export interface ParsedSolrRequest {
  request: Omit<SearchRequest, 'readableBy' | 'signal'>;
  wt: 'xml' | 'json';
  /** The parameters as received, for the responseHeader. */
  echo: QueryParamList;
  indent: boolean;
}

/** Solr parameters to a SearchRequest (without the access filter). */
export function parseSolrParams(params: QueryParamList, options: SolrEngineOptions = {}): ParsedSolrRequest {
  const all = (name: string) => params.filter(([k]) => k === name).map(([, v]) => v);
  const one = (name: string) => all(name).at(-1);
  const defaultField = one('df') ?? 'text';
  if (!lookupField(defaultField)) throw new InvalidQueryError(`undefined field ${defaultField} (df)`);
  const opRaw = (one('q.op') ?? 'OR').toUpperCase();
  if (opRaw !== 'OR' && opRaw !== 'AND') throw new InvalidQueryError(`q.op must be AND or OR`);
  const limits = queryLimits(options.limits);
  const filters = all('fq');
  if (filters.length > limits.maxFilterQueries) {
    throw new QueryLimitError('maxFilterQueries', limits.maxFilterQueries, `more than ${limits.maxFilterQueries} fq parameters (got ${filters.length}); combine filters with AND in fewer fq`);
  }
  // One clause budget for q and every fq: the index runs them as one condition.
  const parseOpts = { defaultField, defaultOperator: opRaw as 'OR' | 'AND', limits, clauseBudget: { remaining: limits.maxClauses } };
  const queries: QueryNode[] = [];
  const q = one('q');
  queries.push(parseQuery(q ?? '*:*', parseOpts));
  for (const fq of filters) if (fq.trim() !== '') queries.push(parseQuery(fq, parseOpts));
  const named = new Set<string>();
  for (const n of queries) fieldsOf(n, named);
  const linkClauses = queries.reduce((sum, n) => sum + countLeaves(n, (f) => LINK_FIELDS.includes(f)), 0);
  if (linkClauses > limits.maxLinkClauses) {
    throw new QueryLimitError('maxLinkClauses', limits.maxLinkClauses, `the query has more than ${limits.maxLinkClauses} clauses on resourceMap, documents and isDocumentedBy (got ${linkClauses})`);
  }

  // fl: returnable fields; '*' for all; score and unknown pseudo-fields ignored.
  const flRaw = all('fl').flatMap(list);
  let fields: string[];
  if (flRaw.length === 0 || flRaw.includes('*')) fields = RETURNABLE;
  else {
    fields = [];
    for (const name of flRaw) {
      if (name === 'score') continue;
      const def = lookupField(name);
      if (!def) throw new InvalidQueryError(`undefined field ${name} (fl)`);
      if (def.returnable && !fields.includes(name)) fields.push(name);
    }
  }

  const sort: SortSpec[] = [];
  const sortRaw = one('sort');
  if (sortRaw && sortRaw.trim()) {
    for (const part of sortRaw.split(',')) {
      const [name, dir = 'asc', ...rest] = part.trim().split(/\s+/);
      if (!name || rest.length || !/^(asc|desc)$/i.test(dir)) throw new InvalidQueryError(`sort must be 'field asc|desc[, ...]' (got '${shown(sortRaw)}')`);
      if (name === 'score') continue;
      const def = lookupField(name);
      if (!def) throw new InvalidQueryError(`undefined field ${name} (sort)`);
      if (!def.sortable) throw new InvalidQueryError(`field ${name} is not sortable`);
      sort.push({ field: name, direction: dir.toLowerCase() as 'asc' | 'desc' });
    }
  }

  const maxRows = options.maxRows ?? 1000;
  const rows = Math.min(intParam('rows', one('rows'), options.defaultRows ?? 10, 0), maxRows);
  const start = intParam('start', one('start'), 0, 0);
  if (start > limits.maxStart) throw new QueryLimitError('maxStart', limits.maxStart, `start is larger than ${limits.maxStart} (got ${shown(one('start') ?? '')}); narrow the query (e.g. with an fq on dateModified) instead of paging this deep`);

  const request: ParsedSolrRequest['request'] = { queries, hideArchived: !named.has('archived'), fields, sort, start, rows };
  const facetOn = /^(true|on|yes)$/i.test(one('facet') ?? '');
  const facetFields = all('facet.field').flatMap(list);
  if (facetOn && facetFields.length) {
    for (const name of facetFields) if (!lookupField(name) || lookupField(name)!.type === 'text') throw new InvalidQueryError(`cannot facet on field ${name}`);
    request.facet = {
      fields: [...new Set(facetFields)],
      limit: intParam('facet.limit', one('facet.limit'), 100, -1),
      minCount: intParam('facet.mincount', one('facet.mincount'), 0, 0),
    };
  }
  const wtRaw = (one('wt') ?? 'xml').toLowerCase();
  if (wtRaw !== 'xml' && wtRaw !== 'json') throw new InvalidQueryError(`wt must be xml or json (got '${shown(wtRaw)}')`);
  const indent = /^(true|on|yes)$/i.test(one('indent') ?? '');
  return { request, wt: wtRaw, echo: params, indent };
}

const esc = (s: string): string =>
  s.replace(/[&<>"]/g, (c) => (c === '&' ? '&amp;' : c === '<' ? '&lt;' : c === '>' ? '&gt;' : '&quot;')).replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '');

function xmlValue(field: string, v: string | number | boolean, named: boolean): string {
  const def = lookupField(field);
  const attr = named ? ` name="${esc(field)}"` : '';
  switch (def?.type) {
    case 'long':
      return `<long${attr}>${v}</long>`;
    case 'double':
      return `<double${attr}>${v}</double>`;
    case 'boolean':
      return `<bool${attr}>${v}</bool>`;
    case 'date':
      return `<date${attr}>${esc(String(v))}</date>`;
    default:
      return `<str${attr}>${esc(String(v))}</str>`;
  }
}

function headerParams(echo: QueryParamList): Map<string, string[]> {
  const m = new Map<string, string[]>();
  for (const [k, v] of echo) {
    const l = m.get(k);
    if (l) l.push(v);
    else m.set(k, [v]);
  }
  return m;
}

/** Solr's XML response writer (wt=xml). */
export function writeXml(result: SearchResult, start: number, echo: QueryParamList, qtime: number): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n<response>\n'];
  out.push(`<lst name="responseHeader"><int name="status">0</int><int name="QTime">${qtime}</int><lst name="params">`);
  for (const [k, vs] of headerParams(echo)) {
    if (vs.length === 1) out.push(`<str name="${esc(k)}">${esc(vs[0]!)}</str>`);
    else out.push(`<arr name="${esc(k)}">${vs.map((v) => `<str>${esc(v)}</str>`).join('')}</arr>`);
  }
  out.push('</lst></lst>\n');
  out.push(`<result name="response" numFound="${result.numFound}" start="${start}">`);
  for (const doc of result.docs) {
    out.push('\n<doc>');
    for (const [k, v] of Object.entries(doc)) {
      if (v === undefined) continue;
      if (Array.isArray(v)) out.push(`<arr name="${esc(k)}">${v.map((x) => xmlValue(k, x, false)).join('')}</arr>`);
      else out.push(xmlValue(k, v, true));
    }
    out.push('</doc>');
  }
  out.push('\n</result>\n');
  if (result.facets) {
    out.push('<lst name="facet_counts"><lst name="facet_queries"/><lst name="facet_fields">');
    for (const [field, counts] of Object.entries(result.facets)) {
      out.push(`<lst name="${esc(field)}">${counts.map(([v, n]) => `<int name="${esc(v)}">${n}</int>`).join('')}</lst>`);
    }
    out.push('</lst><lst name="facet_ranges"/><lst name="facet_intervals"/><lst name="facet_heatmaps"/></lst>\n');
  }
  out.push('</response>\n');
  return out.join('');
}

/** Solr's JSON response writer (wt=json, json.nl=flat for facets). */
export function writeJson(result: SearchResult, start: number, echo: QueryParamList, qtime: number, indent: boolean): string {
  const params: Record<string, string | string[]> = {};
  for (const [k, vs] of headerParams(echo)) params[k] = vs.length === 1 ? vs[0]! : vs;
  const body: Record<string, unknown> = {
    responseHeader: { status: 0, QTime: qtime, params },
    response: { numFound: result.numFound, start, docs: result.docs },
  };
  if (result.facets) {
    const fields: Record<string, Array<string | number>> = {};
    for (const [field, counts] of Object.entries(result.facets)) fields[field] = counts.flat();
    body.facet_counts = { facet_queries: {}, facet_fields: fields, facet_ranges: {}, facet_intervals: {}, facet_heatmaps: {} };
  }
  return JSON.stringify(body, null, indent ? 2 : undefined);
}

/** The `solr` query engine over a SearchIndex. */
export class SolrQueryEngine implements QueryEngine {
  readonly name = 'solr';
  constructor(
    private readonly index: SearchIndex,
    private readonly options: SolrEngineOptions = {},
  ) {}

  description(): QueryEngineDescription {
    return describeSchema(this.name);
  }

  /** Run parsed parameters; the result before writing (used by tests and benchmarks). */
  async search(params: QueryParamList, options: { readableBy?: readonly string[]; signal?: AbortSignal } = {}): Promise<{ parsed: ParsedSolrRequest; result: SearchResult }> {
    const parsed = parseSolrParams(params, this.options);
    const result = await this.index.search({
      ...parsed.request,
      ...(options.readableBy ? { readableBy: options.readableBy } : {}),
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return { parsed, result };
  }

  async query(params: QueryParamList, options: { readableBy?: readonly string[]; signal?: AbortSignal }): Promise<EngineResponse> {
    const t0 = performance.now();
    const { parsed, result } = await this.search(params, options);
    const qtime = Math.round(performance.now() - t0);
    if (parsed.wt === 'json') {
      return { contentType: 'application/json; charset=utf-8', body: writeJson(result, parsed.request.start, parsed.echo, qtime, parsed.indent) };
    }
    return { contentType: 'text/xml; charset=utf-8', body: writeXml(result, parsed.request.start, parsed.echo, qtime) };
  }
}

export type { IndexDoc };
