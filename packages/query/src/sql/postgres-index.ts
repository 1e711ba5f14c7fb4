import pg from 'pg';
import { FIELD_BY_NAME, TEXT_FIELDS } from '../schema.js';
import type { IndexDoc, Relation, SearchIndex, SearchRequest, SearchResult } from '../types.js';
import { accessScope } from './access.js';
import { columnType, columnValues, docColumns, facetValue, likePattern, multiRows, q, rowToDoc, SqlCompiler, type Dialect } from './compile.js';

export interface PostgresIndexOptions {
  /** Connection string (postgres://user@host:port/db); or pass `pool`. */
  url?: string;
  pool?: pg.Pool;
  /** Schema holding the index tables (created when missing). Default `memberkit_query`. */
  schema?: string;
}

const tsv = (field: string): string => q(`tsv_${field}`);

const DOC_COLUMNS = docColumns(true);

const dialect: Dialect = {
  textInDocs: true,
  textMatch(field, kind, tokens, params) {
    // Tokens are letters and digits only: safe inside to_tsquery syntax.
    const expr = tokens.map((t, i) => (kind === 'prefix' && i === tokens.length - 1 ? `${t}:*` : t)).join(' <-> ');
    params.push(expr);
    return `d.${tsv(field)} @@ to_tsquery('simple', ?)`;
  },
  wildcard(expr, pattern, params, caseInsensitive) {
    params.push(likePattern(pattern));
    return caseInsensitive ? `lower(${expr}) LIKE ?` : `${expr} LIKE ?`;
  },
};

/** `?` placeholders to `$1, $2...` (the compiled SQL never holds a literal '?'). */
function numbered(sql: string): string {
  let i = 0;
  return sql.replace(/\?/g, () => `$${++i}`);
}

/** The text as PostgreSQL's tsvector should see it: tokens as the query side splits them. */
function tsText(value: unknown): string {
  if (value === undefined || value === null) return '';
  return (String(value).normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).join(' ');
}

/**
 * A shared search index on PostgreSQL: the same tables as the SQLite index in a schema of
 * its own, full text in tsvector columns (configuration `simple`, diacritics folded before
 * indexing) with GIN indexes.
 */
export class PostgresSearchIndex implements SearchIndex {
  private pool: pg.Pool | undefined;
  private ownPool = false;
  private readonly compiler = new SqlCompiler(dialect);
  readonly schema: string;

  constructor(private readonly options: PostgresIndexOptions) {
    this.schema = options.schema ?? 'memberkit_query';
    if (!/^[A-Za-z_][A-Za-z0-9_]*$/.test(this.schema)) throw new Error(`invalid schema name ${this.schema}`);
  }

  private get db(): pg.Pool {
    if (!this.pool) throw new Error('search index is not open');
    return this.pool;
  }

  async open(): Promise<void> {
    if (this.options.pool) this.pool = this.options.pool;
    else {
      // JIT compilation costs more than these short queries save.
      this.pool = new pg.Pool({ connectionString: this.options.url, max: 8, options: '-c jit=off' });
      this.ownPool = true;
    }
    const s = this.schema;
    const cols = DOC_COLUMNS.map((d) => `${q(d.name)} ${columnType(d, 'postgres')}`).join(', ');
    const tsvCols = TEXT_FIELDS.map((f) => `${tsv(f)} tsvector`).join(', ');
    const client = await this.pool.connect();
    try {
      await client.query(`SELECT pg_advisory_lock(hashtext($1))`, [`memberkit_query:${s}`]);
      await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
      await client.query(`SET search_path TO ${s}`);
      await client.query(`
        CREATE TABLE IF NOT EXISTS docs (rid bigserial PRIMARY KEY, id TEXT NOT NULL UNIQUE, ${cols}, ${tsvCols});
        CREATE TABLE IF NOT EXISTS mv (pid TEXT NOT NULL, field TEXT NOT NULL, value TEXT NOT NULL, ord INTEGER NOT NULL, src TEXT NOT NULL DEFAULT '');
        CREATE INDEX IF NOT EXISTS mv_value ON mv (field, value, pid);
        CREATE INDEX IF NOT EXISTS mv_pid ON mv (pid, field);
        CREATE INDEX IF NOT EXISTS mv_src ON mv (src) WHERE src <> '';
        CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      `);
      // Schemas made before a field was added get its column (empty until documents are re-indexed).
      for (const d of DOC_COLUMNS) await client.query(`ALTER TABLE docs ADD COLUMN IF NOT EXISTS ${q(d.name)} ${columnType(d, 'postgres')}`);
      for (const f of TEXT_FIELDS) await client.query(`CREATE INDEX IF NOT EXISTS docs_tsv_${f} ON docs USING gin (${tsv(f)})`);
      for (const name of ['formatId', 'formatType', 'dateUploaded', 'dateModified', 'seriesId', 'rightsHolder', 'obsoletedBy', 'size', 'beginDate', 'endDate']) {
        await client.query(`CREATE INDEX IF NOT EXISTS "docs_${name}" ON docs (${q(name)})`);
      }
    } finally {
      await client.query(`SELECT pg_advisory_unlock(hashtext($1))`, [`memberkit_query:${s}`]).catch(() => {});
      await client.query('RESET search_path').catch(() => {});
      client.release();
    }
  }

  async close(): Promise<void> {
    if (this.ownPool) await this.pool?.end();
    this.pool = undefined;
  }

  /** Tables qualified with the schema (the compiled SQL names docs and mv bare). */
  private qualify(sql: string): string {
    return sql.replace(/\b(FROM|JOIN|INTO|UPDATE) (docs|mv|state)\b/g, `$1 ${this.schema}.$2`);
  }

  private async tx<T>(fn: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const c = await this.db.connect();
    try {
      await c.query('BEGIN');
      const r = await fn(c);
      await c.query('COMMIT');
      return r;
    } catch (err) {
      await c.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      c.release();
    }
  }

  async upsert(doc: IndexDoc): Promise<void> {
    await this.upsertMany([doc]);
  }

  async upsertMany(docs: readonly IndexDoc[]): Promise<void> {
    const colNames = DOC_COLUMNS.map((d) => q(d.name));
    const n = colNames.length;
    const tsvNames = TEXT_FIELDS.map(tsv);
    const sql = this.qualify(
      `INSERT INTO docs (id, ${colNames.join(', ')}, ${tsvNames.join(', ')}) VALUES ($1, ${colNames.map((_, i) => `$${i + 2}`).join(', ')}, ${tsvNames
        .map((_, i) => `to_tsvector('simple', $${n + 2 + i})`)
        .join(', ')})
       ON CONFLICT (id) DO UPDATE SET ${[...colNames, ...tsvNames].map((c) => `${c} = excluded.${c}`).join(', ')}`,
    );
    await this.tx(async (c) => {
      for (const doc of docs) {
        await c.query(sql, [doc.id, ...columnValues(doc, DOC_COLUMNS), ...TEXT_FIELDS.map((f) => tsText(doc[f]))]);
        await c.query(this.qualify(`DELETE FROM mv WHERE pid = $1 AND src = ''`), [doc.id]);
        const rows = multiRows(doc);
        if (rows.length) {
          const values: unknown[] = [];
          const tuples = rows.map(([field, value, ord], i) => {
            values.push(doc.id, field, value, ord);
            return `($${i * 4 + 1}, $${i * 4 + 2}, $${i * 4 + 3}, $${i * 4 + 4}, '')`;
          });
          await c.query(this.qualify(`INSERT INTO mv (pid, field, value, ord, src) VALUES ${tuples.join(', ')}`), values);
        }
      }
    });
  }

  async remove(pid: string): Promise<void> {
    await this.tx(async (c) => {
      await c.query(this.qualify('DELETE FROM docs WHERE id = $1'), [pid]);
      await c.query(this.qualify(`DELETE FROM mv WHERE (pid = $1 AND src = '') OR src = $1`), [pid]);
    });
  }

  async setRelations(source: string, relations: readonly Relation[]): Promise<void> {
    await this.tx(async (c) => {
      await c.query(this.qualify('DELETE FROM mv WHERE src = $1'), [source]);
      for (let i = 0; i < relations.length; i += 500) {
        const chunk = relations.slice(i, i + 500);
        const values: unknown[] = [];
        const tuples = chunk.map((r, j) => {
          values.push(r.pid, r.field, r.value, 1_000_000 + i + j, source);
          return `($${j * 5 + 1}, $${j * 5 + 2}, $${j * 5 + 3}, $${j * 5 + 4}, $${j * 5 + 5})`;
        });
        await c.query(this.qualify(`INSERT INTO mv (pid, field, value, ord, src) VALUES ${tuples.join(', ')}`), values);
      }
    });
  }

  async search(req: SearchRequest): Promise<SearchResult> {
    const scope = accessScope(req.readableBy);
    const with_ = scope.cte;
    const params: unknown[] = [...scope.cteParams];
    const where = this.compiler.where(req, params, scope);
    const order = this.compiler.orderBy(req);
    const run = async <T extends pg.QueryResultRow>(sql: string, args: unknown[]): Promise<T[]> => (await this.db.query<T>(numbered(this.qualify(sql)), args)).rows;
    const [countRow] = await run<{ n: string }>(`${with_}SELECT count(*) AS n FROM docs d WHERE ${where}`, params);
    const numFound = Number(countRow?.n ?? 0);
    let docs: IndexDoc[] = [];
    if (req.rows > 0 && numFound > req.start) {
      const rows = await run<Record<string, unknown>>(`${with_}SELECT d.* FROM docs d WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`, [...params, req.rows, req.start]);
      const multiFields = req.fields.filter((f) => FIELD_BY_NAME.get(f)?.multivalued);
      const multi = new Map<string, Array<{ field: string; value: string }>>();
      if (rows.length && multiFields.length) {
        const mrows = await run<{ pid: string; field: string; value: string }>(
          `${with_}SELECT m.pid, m.field, m.value FROM mv m WHERE m.pid = ANY(?) AND m.field = ANY(?) AND ${this.compiler.visibleValue('m', scope)} ORDER BY m.pid, m.field, m.ord`,
          [...scope.cteParams, rows.map((r) => String(r.id)), multiFields],
        );
        for (const m of mrows) {
          let list = multi.get(m.pid);
          if (!list) multi.set(m.pid, (list = []));
          list.push(m);
        }
      }
      docs = rows.map((r) => rowToDoc(r, multi.get(String(r.id)) ?? [], req.fields));
    }
    const result: SearchResult = { numFound, docs };
    if (req.facet) {
      result.facets = {};
      const whereParams = params.slice(scope.cteParams.length);
      for (const name of req.facet.fields) {
        const def = FIELD_BY_NAME.get(name)!;
        const limit = req.facet.limit < 0 ? null : req.facet.limit;
        const sql = def.multivalued
          ? `${with_}SELECT m.value AS v, count(DISTINCT m.pid) AS n FROM mv m JOIN docs d ON d.id = m.pid WHERE m.field = ? AND ${this.compiler.visibleValue('m', scope)} AND ${where} GROUP BY m.value HAVING count(DISTINCT m.pid) >= ? ORDER BY n DESC, v ASC LIMIT ?`
          : `${with_}SELECT d.${q(name)} AS v, count(*) AS n FROM docs d WHERE ${where} AND d.${q(name)} IS NOT NULL GROUP BY d.${q(name)} HAVING count(*) >= ? ORDER BY n DESC, v ASC LIMIT ?`;
        const args = def.multivalued ? [...scope.cteParams, name, ...whereParams, req.facet.minCount, limit] : [...params, req.facet.minCount, limit];
        const rows = await run<{ v: unknown; n: string }>(sql, args);
        result.facets[name] = rows.map((r) => [facetValue(def, r.v), Number(r.n)]);
      }
    }
    return result;
  }

  async ids(after: string | undefined, limit: number): Promise<string[]> {
    const r = await this.db.query<{ id: string }>(this.qualify('SELECT id FROM docs WHERE id > $1 ORDER BY id LIMIT $2'), [after ?? '', limit]);
    return r.rows.map((x) => x.id);
  }

  async state(key: string): Promise<string | undefined> {
    const r = await this.db.query<{ value: string }>(this.qualify('SELECT value FROM state WHERE key = $1'), [key]);
    return r.rows[0]?.value;
  }

  async setState(key: string, value: string): Promise<void> {
    await this.db.query(this.qualify('INSERT INTO state (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value'), [key, value]);
  }

  /** Refresh the planner's statistics (after bulk loads). */
  async analyze(): Promise<void> {
    await this.db.query(`ANALYZE ${this.schema}.docs; ANALYZE ${this.schema}.mv`);
  }

  /** Drop the index's schema (tests). */
  async drop(): Promise<void> {
    await this.db.query(`DROP SCHEMA IF EXISTS ${this.schema} CASCADE`);
  }
}
