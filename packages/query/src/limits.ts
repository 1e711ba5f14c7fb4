import { InvalidQueryError } from './types.js';

/**
 * How large a search request may be. Every bound is checked before the index runs, so a
 * hostile request costs at most a linear pass over its (capped) text; over a bound, the
 * caller gets InvalidRequest naming the limit and its value.
 *
 * The defaults leave real clients room: Solr's own maxBooleanClauses is 1,024, MetacatUI nests
 * a handful of groups and sends under ten `fq`, and a POSTed form of 1,024 long identifiers
 * stays well under the body cap.
 */
export interface QueryLimits {
  /** Largest POSTed query body (bytes); a larger Content-Length is refused before reading. */
  maxBodyBytes: number;
  /** Deepest nesting of parentheses and field groups in one `q` or `fq`. */
  maxDepth: number;
  /** Most clauses (terms, phrases, ranges, wildcards...) in `q` and every `fq` together. */
  maxClauses: number;
  /**
   * Most clauses on the package link fields (resourceMap, documents, isDocumentedBy): each
   * one checks who may see the link, several times the cost of another clause.
   */
  maxLinkClauses: number;
  /** Longest term, phrase or range bound (characters). */
  maxTermLength: number;
  /** Most `*` and `?` in one wildcard term (each one multiplies the cost of matching). */
  maxWildcards: number;
  /** Most `fq` parameters. */
  maxFilterQueries: number;
  /** Largest `start` (deep paging costs the index the whole offset). */
  maxStart: number;
}

export const DEFAULT_QUERY_LIMITS: Readonly<QueryLimits> = {
  maxBodyBytes: 1024 * 1024,
  maxDepth: 32,
  maxClauses: 1024,
  maxLinkClauses: 64,
  maxTermLength: 1024,
  maxWildcards: 8,
  maxFilterQueries: 100,
  maxStart: 10_000_000,
};

/** A request over one of the {@link QueryLimits}: InvalidRequest, saying which limit and its value. */
export class QueryLimitError extends InvalidQueryError {
  constructor(
    readonly limit: keyof QueryLimits,
    readonly value: number,
    what: string,
  ) {
    super(`${what} (limit ${limit} = ${value})`);
    this.name = 'QueryLimitError';
  }
}

export function queryLimits(overrides: Partial<QueryLimits> = {}): QueryLimits {
  return { ...DEFAULT_QUERY_LIMITS, ...overrides };
}
