import type { Context, Hono } from 'hono';
import { fail, xmlResponse, type ExtensionKit, type NodeExtension, type ObjectChange } from '@memberkit/core';
import { QueryEngineDescriptionCodec, QueryEngineListCodec, type ApiVersion } from '@memberkit/types';
import { CatalogueIndexer, type IndexerOptions } from './indexer.js';
import { queryLimits, QueryLimitError } from './limits.js';
import { QuerySyntaxError } from './parser.js';
import { SolrQueryEngine, type SolrEngineOptions } from './solr-engine.js';
import { PostgresSearchIndex } from './sql/postgres-index.js';
import { SqliteSearchIndex } from './sql/sqlite-index.js';
import { InvalidQueryError, type QueryEngine, type QueryParamList, type SearchIndex } from './types.js';

export type IndexConfig =
  | { kind: 'sqlite'; /** Index database file; ':memory:' rebuilds from the catalogue at each start. */ file: string }
  | { kind: 'postgres'; url: string; schema?: string };

export interface QueryExtensionOptions extends IndexerOptions, SolrEngineOptions {
  /** The search index: a SearchIndex instance, or how to open one. Default: SQLite in memory. */
  index?: SearchIndex | IndexConfig;
  /** Further engines besides `solr` (their own indexes, kept current by their owners). */
  engines?: readonly QueryEngine[];
  /**
   * Another process keeps `index` current (`memberkit serve --workers`: the first worker
   * indexes, the others read the shared index): this process runs no indexer, so one index
   * is never written by two (a late writer could put an older version back). Before each
   * query it asks that process, with `catchUp`, to apply every change committed so far, so an
   * object made private anywhere is refused here at once too.
   */
  indexedElsewhere?: { catchUp(): Promise<void> };
}

export interface QueryExtension extends NodeExtension {
  readonly index: SearchIndex;
  readonly indexer: CatalogueIndexer | undefined;
  readonly engines: ReadonlyMap<string, QueryEngine>;
}

function openIndex(config: SearchIndex | IndexConfig | undefined): SearchIndex {
  if (!config) return new SqliteSearchIndex({ file: ':memory:' });
  if ('search' in config) return config;
  if (config.kind === 'sqlite') return new SqliteSearchIndex({ file: config.file });
  return new PostgresSearchIndex({ url: config.url, ...(config.schema ? { schema: config.schema } : {}) });
}

/** Where the engine name starts in a raw URL: after `/{version}/query/`. */
function splitQueryUrl(url: string, version: ApiVersion): { engine: string; rest: string } | undefined {
  const marker = `/${version}/query/`;
  const at = url.indexOf(marker);
  if (at < 0) return undefined;
  const tail = url.slice(at + marker.length);
  const end = tail.search(/[/?]/);
  const engineRaw = end < 0 ? tail : tail.slice(0, end);
  let engine: string;
  try {
    engine = decodeURIComponent(engineRaw);
  } catch {
    engine = engineRaw;
  }
  return { engine, rest: end < 0 ? '' : tail.slice(end) };
}

/**
 * The engine's parameters from the remainder of the URL after the engine name, taken
 * verbatim: `/?q=...`, `/select?q=...`, `?q=...`, or a bare `/q=...&fl=...` (the query
 * string written as the path).
 */
export function engineParams(rest: string): Array<[string, string]> {
  const qm = rest.indexOf('?');
  let query: string;
  if (qm >= 0) query = rest.slice(qm + 1);
  else {
    const path = rest.replace(/^\/+/, '');
    query = path.includes('=') ? path : '';
  }
  return [...new URLSearchParams(query)];
}

/** Requests whose body was refused unread: their answer closes the connection (the rest is never read). */
const refusedBodies = new WeakSet<Request>();

/**
 * The request body, at most `max` bytes: a larger declared Content-Length is refused before
 * a byte is read, and a body that grows past the cap (chunked, or lying) is cut off there.
 */
async function readBodyCapped(req: Request, max: number): Promise<Uint8Array> {
  const tooLarge = () => {
    refusedBodies.add(req);
    return new QueryLimitError('maxBodyBytes', max, `the query body is larger than ${max} bytes; send fewer or shorter clauses`);
  };
  const declared = Number(req.headers.get('content-length') ?? '');
  if (Number.isFinite(declared) && declared > max) throw tooLarge();
  if (!req.body) return new Uint8Array(0);
  const reader = req.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      reader.releaseLock();
      throw tooLarge();
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

async function formParams(c: Context, maxBodyBytes: number): Promise<Array<[string, string]>> {
  const type = c.req.header('content-type') ?? '';
  const body = await readBodyCapped(c.req.raw, maxBodyBytes);
  if (/multipart\/form-data/i.test(type)) {
    const form = await new Response(body, { headers: { 'Content-Type': type } }).formData().catch(() => {
      throw new InvalidQueryError('the multipart/form-data body cannot be read (boundary missing or body malformed)');
    });
    const out: Array<[string, string]> = [];
    form.forEach((v, k) => {
      if (typeof v === 'string') out.push([k, v]);
    });
    return out;
  }
  return [...new URLSearchParams(new TextDecoder().decode(body))];
}

/** The syntax error with a caret under the problem. */
function describeSyntaxError(err: QuerySyntaxError): string {
  const from = Math.max(0, err.position - 40);
  const excerpt = err.input.slice(from, err.position + 40);
  return `query syntax error: ${err.message}: '${excerpt}' (the problem is at character ${err.position - from + 1} of this excerpt)`;
}

/**
 * MNQuery as a node extension: listQueryEngines, getQueryEngineDescription and query over the
 * `solr` engine (and any given engines), with an index kept current by {@link CatalogueIndexer}.
 */
export function createQueryExtension(options: QueryExtensionOptions = {}): QueryExtension {
  const index = openIndex(options.index);
  const solr = new SolrQueryEngine(index, options);
  const maxBodyBytes = queryLimits(options.limits).maxBodyBytes;
  const engines = new Map<string, QueryEngine>([[solr.name, solr]]);
  for (const e of options.engines ?? []) engines.set(e.name, e);
  let indexer: CatalogueIndexer | undefined;

  const ext: QueryExtension = {
    name: 'query',
    services: [{ name: 'MNQuery', versions: ['v1', 'v2'] }],
    index,
    engines,
    get indexer() {
      return indexer;
    },
    async open(kit: ExtensionKit) {
      await index.open();
      if (options.indexedElsewhere) {
        kit.logger.debug({}, 'query index: read here, kept current by another process');
        return;
      }
      indexer = new CatalogueIndexer(index, { metadata: kit.metadata, storage: kit.storage, logger: kit.logger }, options);
      indexer.start();
      kit.logger.debug({}, 'query index: this process follows the change feed into the index');
    },
    async close() {
      await indexer?.stop();
      await index.close();
    },
    async onChange(change: ObjectChange) {
      await indexer?.onChange(change);
    },
    routes(app: Hono, version: ApiVersion, kit: ExtensionKit) {
      const list = kit.operation('MNQuery.listQueryEngines', async () => xmlResponse(QueryEngineListCodec.encode({ queryEngine: [...engines.keys()] }, version)));
      const describe = kit.operation('MNQuery.getQueryEngineDescription', async (c) => {
        const parts = splitQueryUrl(c.req.url, version);
        const engine = parts && engines.get(parts.engine);
        if (!engine) throw fail('MNQuery.getQueryEngineDescription', 'NotFound', `no query engine named '${parts?.engine ?? ''}' on this node (see listQueryEngines: ${[...engines.keys()].join(', ')})`);
        return xmlResponse(QueryEngineDescriptionCodec.encode(engine.description(), version));
      });
      const query = kit.operation('MNQuery.query', async (c, ctx) => {
        const parts = splitQueryUrl(c.req.url, version);
        const engine = parts && engines.get(parts.engine);
        if (!parts || !engine) throw fail('MNQuery.query', 'NotFound', `no query engine named '${parts?.engine ?? ''}' on this node (see listQueryEngines: ${[...engines.keys()].join(', ')})`);
        const readableBy = kit.access.listingFilter(ctx.session);
        // Every change committed so far, by any process, is in the index before it answers.
        await (indexer ? indexer.catchUp() : options.indexedElsewhere?.catchUp());
        try {
          const params: QueryParamList = [...engineParams(parts.rest), ...(c.req.method === 'POST' ? await formParams(c, maxBodyBytes) : [])];
          const r = await engine.query(params, { ...(readableBy ? { readableBy } : {}), ...(ctx.signal ? { signal: ctx.signal } : {}) });
          return new Response(r.body, { status: 200, headers: { 'Content-Type': r.contentType } });
        } catch (err) {
          if (err instanceof QuerySyntaxError) throw fail('MNQuery.query', 'InvalidRequest', describeSyntaxError(err));
          if (err instanceof InvalidQueryError) throw fail('MNQuery.query', 'InvalidRequest', err.message);
          throw err;
        }
      });
      app.get('/query', list);
      const queryClosing = async (c: Context): Promise<Response> => {
        const res = await query(c);
        if (!refusedBodies.has(c.req.raw)) return res;
        const headers = new Headers(res.headers);
        headers.set('Connection', 'close');
        return new Response(res.body, { status: res.status, headers });
      };
      app.on(['GET', 'POST'], '/query/*', (c) => {
        const parts = splitQueryUrl(c.req.url, version);
        if (!parts || parts.engine === '') return c.req.method === 'GET' ? list(c) : queryClosing(c);
        if (c.req.method === 'GET' && parts.rest === '') return describe(c);
        return queryClosing(c);
      });
    },
  };
  return ext;
}
