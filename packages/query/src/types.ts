import type { QueryEngineDescription } from '@memberkit/types';
import type { QueryNode } from './parser.js';

/** A value of an indexed field: strings (also ISO dates), numbers, booleans; arrays for multi-valued fields. */
export type FieldValue = string | number | boolean;

/**
 * One indexed object: field name to value(s), with the federation's field names (see
 * schema.ts). `id` is required. Multi-valued fields are arrays. `_readers` (every subject
 * that may read the object: rightsHolder and every subject of any access rule) is required
 * for access filtering and never returned.
 */
export interface IndexDoc {
  id: string;
  [field: string]: FieldValue | FieldValue[] | undefined;
}

/** A relation contributed to another document by a source (a resource map). */
export interface Relation {
  /** The document the value belongs to. */
  pid: string;
  field: 'resourceMap' | 'documents' | 'isDocumentedBy';
  value: string;
}

export interface SortSpec {
  field: string;
  direction: 'asc' | 'desc';
}

/** A parsed search: what a SearchIndex executes. */
export interface SearchRequest {
  /** The main query and the filter queries: a document must match all of them. */
  queries: QueryNode[];
  /**
   * Only documents one of these subjects may read (compared with `_readers`); undefined: no
   * access filter (administrators, CNs); an empty array matches nothing.
   */
  readableBy?: readonly string[];
  /** Leave out archived documents (true unless the query names the `archived` field). */
  hideArchived: boolean;
  /** Fields to return (returnable fields only; the index may return more). */
  fields: readonly string[];
  sort: readonly SortSpec[];
  start: number;
  rows: number;
  facet?: { fields: readonly string[]; limit: number; minCount: number };
  signal?: AbortSignal;
}

export interface SearchResult {
  numFound: number;
  docs: IndexDoc[];
  /** Per facet field, value and count, most frequent first. */
  facets?: Record<string, Array<[string, number]>>;
}

/**
 * Where indexed documents live and how queries run on them. Implementations: SQLite FTS5
 * (embedded default), PostgreSQL full text; a Solr or OpenSearch backend implements the same
 * five operations (upsert = add/replace a document, relations = atomic updates of the
 * multi-valued relation fields, search = translate the QueryNode AST to the backend's query DSL).
 *
 * Contract:
 * - `upsert` replaces the whole document (its own fields); relations set by `setRelations`
 *   are kept, whatever the order of upserts and relation changes.
 * - `setRelations(source, rels)` replaces every relation contributed by `source` (a
 *   resource map's PID) with `rels`; `[]` clears them. Relations may name documents not yet
 *   indexed; they show up when the document arrives.
 * - `remove` deletes the document and the relations it contributed as a source.
 * - `search` applies every query, the access filter and the archived rule; `numFound` counts
 *   all matches ignoring start/rows.
 * - `state`/`setState`: small persistent key/values (the follow loop's watermark).
 */
export interface SearchIndex {
  open(): Promise<void>;
  close(): Promise<void>;
  upsert(doc: IndexDoc): Promise<void>;
  remove(pid: string): Promise<void>;
  setRelations(source: string, relations: readonly Relation[]): Promise<void>;
  search(request: SearchRequest): Promise<SearchResult>;
  /** Every indexed PID, in pages (for reconciliation with the catalogue). */
  ids(after: string | undefined, limit: number): Promise<string[]>;
  state(key: string): Promise<string | undefined>;
  setState(key: string, value: string): Promise<void>;
}

/** The raw query of MNQuery.query: Solr-style parameters, names may repeat (fq, facet.field). */
export type QueryParamList = ReadonlyArray<readonly [string, string]>;

export interface EngineResponse {
  contentType: string;
  body: string;
}

/**
 * A query engine of MNQuery. `query` receives the parameters as the client sent them (the
 * remainder of the URL after the engine name, form-decoded) and answers in its own format.
 * Throws QuerySyntaxError / InvalidQueryError for requests it cannot run.
 */
export interface QueryEngine {
  readonly name: string;
  description(): QueryEngineDescription;
  query(params: QueryParamList, options: { readableBy?: readonly string[]; signal?: AbortSignal }): Promise<EngineResponse>;
}

/** A well-formed request the engine cannot run (unknown field, bad rows...): InvalidRequest. */
export class InvalidQueryError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidQueryError';
  }
}
