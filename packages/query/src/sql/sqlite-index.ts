import BetterSqlite3 from 'better-sqlite3';
import { FIELD_BY_NAME, READERS_FIELD, TEXT_FIELDS } from '../schema.js';
import type { IndexDoc, Relation, SearchIndex, SearchRequest, SearchResult } from '../types.js';
import { accessScope } from './access.js';
import { columnType, columnValues, docColumns, facetValue, globPattern, likePattern, multiRows, q, rowToDoc, SqlCompiler, type Dialect } from './compile.js';

export interface SqliteIndexOptions {
  /** Database file; ':memory:' for a throw-away index. */
  file: string;
}


/** Rows of a map's relations written per transaction (a few ms each). */
const RELATION_CHUNK = 1_000;
/** Values of one document written per transaction beyond the first (see upsert). */
const VALUE_CHUNK = 2_000;
/** Fields that decide who may read a document: written with the document, never in steps. */
const ACCESS_FIELDS = new Set([READERS_FIELD, 'readPermission', 'writePermission', 'changePermission', 'rightsHolder']);
/** FTS5 expression for a phrase (or prefix on the last token) in one column. */
function ftsExpr(field: string, kind: 'phrase' | 'prefix', tokens: string[]): string {
  const phrase = `"${tokens.join(' ')}"`;
  return `${field} : ${phrase}${kind === 'prefix' ? '*' : ''}`;
}

const DOC_COLUMNS = docColumns(false);

const dialect: Dialect = {
  textInDocs: false,
  textMatch(field, kind, tokens, params) {
    params.push(ftsExpr(field, kind, tokens));
    return `d.rid IN (SELECT rowid FROM fts WHERE fts MATCH ?)`;
  },
  wildcard(expr, pattern, params, caseInsensitive) {
    if (caseInsensitive) {
      params.push(likePattern(pattern));
      return `lower(${expr}) LIKE ? ESCAPE '\\'`;
    }
    params.push(globPattern(pattern));
    return `${expr} GLOB ?`;
  },
};

/**
 * The embedded search index: SQLite with FTS5 (bundled with better-sqlite3), in its own
 * database file (WAL). Synchronous underneath; each write is one transaction.
 */
export class SqliteSearchIndex implements SearchIndex {
  private db: BetterSqlite3.Database | undefined;
  private readonly compiler = new SqlCompiler(dialect);
  private stmts!: {
    upsertDoc: BetterSqlite3.Statement;
    ridOf: BetterSqlite3.Statement;
    ftsDelete: BetterSqlite3.Statement;
    ftsInsert: BetterSqlite3.Statement;
    mvDeleteOwn: BetterSqlite3.Statement;
    mvDeleteSrc: BetterSqlite3.Statement;
    mvInsert: BetterSqlite3.Statement;
    docDelete: BetterSqlite3.Statement;
  };

  constructor(private readonly options: SqliteIndexOptions) {}

  private get conn(): BetterSqlite3.Database {
    if (!this.db) throw new Error('search index is not open');
    return this.db;
  }

  async open(): Promise<void> {
    const db = new BetterSqlite3(this.options.file);
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    const cols = DOC_COLUMNS.map((d) => `${q(d.name)} ${columnType(d, 'sqlite')}`).join(', ');
    db.exec(`
      CREATE TABLE IF NOT EXISTS docs (rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, ${cols});
      CREATE TABLE IF NOT EXISTS mv (pid TEXT NOT NULL, field TEXT NOT NULL, value TEXT NOT NULL, ord INTEGER NOT NULL, src TEXT NOT NULL DEFAULT '');
      CREATE INDEX IF NOT EXISTS mv_value ON mv (field, value, pid);
      CREATE INDEX IF NOT EXISTS mv_pid ON mv (pid, field);
      CREATE INDEX IF NOT EXISTS mv_src ON mv (src) WHERE src <> '';
      CREATE TABLE IF NOT EXISTS state (key TEXT PRIMARY KEY, value TEXT NOT NULL);
      CREATE VIRTUAL TABLE IF NOT EXISTS fts USING fts5(${TEXT_FIELDS.join(', ')}, tokenize = 'unicode61 remove_diacritics 2');
    `);
    // Index files made before a field was added get its column (empty until documents are re-indexed).
    const have = new Set((db.prepare('PRAGMA table_info(docs)').all() as Array<{ name: string }>).map((c) => c.name));
    for (const d of DOC_COLUMNS) if (!have.has(d.name)) db.exec(`ALTER TABLE docs ADD COLUMN ${q(d.name)} ${columnType(d, 'sqlite')}`);
    for (const name of ['formatId', 'formatType', 'dateUploaded', 'dateModified', 'seriesId', 'rightsHolder', 'obsoletedBy', 'size', 'beginDate', 'endDate']) {
      db.exec(`CREATE INDEX IF NOT EXISTS docs_${name} ON docs (${q(name)})`);
    }
    db.pragma('optimize = 0x10002');
    const colNames = DOC_COLUMNS.map((d) => q(d.name));
    this.stmts = {
      upsertDoc: db.prepare(
        `INSERT INTO docs (id, ${colNames.join(', ')}) VALUES (?, ${colNames.map(() => '?').join(', ')})
         ON CONFLICT (id) DO UPDATE SET ${colNames.map((c) => `${c} = excluded.${c}`).join(', ')}`,
      ),
      ridOf: db.prepare('SELECT rid FROM docs WHERE id = ?').pluck(),
      ftsDelete: db.prepare('DELETE FROM fts WHERE rowid = ?'),
      ftsInsert: db.prepare(`INSERT INTO fts (rowid, ${TEXT_FIELDS.join(', ')}) VALUES (?, ${TEXT_FIELDS.map(() => '?').join(', ')})`),
      mvDeleteOwn: db.prepare("DELETE FROM mv WHERE pid = ? AND src = ''"),
      mvDeleteSrc: db.prepare('DELETE FROM mv WHERE src = ?'),
      mvInsert: db.prepare('INSERT INTO mv (pid, field, value, ord, src) VALUES (?, ?, ?, ?, ?)'),
      docDelete: db.prepare('DELETE FROM docs WHERE rid = ?'),
    };
    this.db = db;
  }

  async close(): Promise<void> {
    this.flush();
    this.db?.pragma('optimize');
    this.db?.close();
    this.db = undefined;
  }

  /**
   * One document. Its row, full text and access fields go in one transaction; descriptive
   * values beyond the first VALUE_CHUNK follow in further transactions with the event loop
   * free in between (a record with 10,000 keywords in each of several fields is tens of
   * thousands of rows: hundreds of ms of synchronous SQLite that would hold every request).
   * Who may read the document is never partial; a search may see its last values arrive in
   * steps. The indexer writes one document of a PID at a time.
   */
  async upsert(doc: IndexDoc): Promise<void> {
    const rows = multiRows(doc);
    // Access first (ord keeps the document's own order of values).
    rows.sort((a, b) => Number(ACCESS_FIELDS.has(b[0])) - Number(ACCESS_FIELDS.has(a[0])));
    if (rows.length <= VALUE_CHUNK) {
      // The documents of one turn of the event loop (concurrent creates) share a transaction.
      return new Promise<void>((resolve, reject) => {
        this.pending.push({ doc, rows, resolve, reject });
        if (this.pending.length === 1) setImmediate(() => this.flush());
      });
    }
    this.flush();
    for (let from = 0; from < rows.length; from += VALUE_CHUNK) {
      if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      this.conn.transaction(() => this.writeDoc(doc, rows, from, Math.min(rows.length, from + VALUE_CHUNK)))();
    }
  }

  /** Small documents waiting for their shared transaction (see upsert). */
  private pending: Array<{ doc: IndexDoc; rows: ReturnType<typeof multiRows>; resolve: () => void; reject: (e: unknown) => void }> = [];

  /**
   * Writes the waiting documents in one transaction. Every other operation flushes first, so
   * the index applies operations in the order they were asked for. A failing document fails
   * the group: each is then written alone, so only it fails.
   */
  private flush(): void {
    const batch = this.pending;
    if (batch.length === 0) return;
    this.pending = [];
    try {
      this.conn.transaction(() => {
        for (const p of batch) this.writeDoc(p.doc, p.rows, 0, p.rows.length);
      })();
    } catch {
      for (const p of batch) {
        try {
          this.conn.transaction(() => this.writeDoc(p.doc, p.rows, 0, p.rows.length))();
          p.resolve();
        } catch (err) {
          p.reject(err);
        }
      }
      return;
    }
    for (const p of batch) p.resolve();
  }

  /** Rows `from`..`end` of a document's values; from 0, its row and text first. */
  private writeDoc(doc: IndexDoc, rows: ReturnType<typeof multiRows>, from: number, end: number): void {
    const s = this.stmts;
    if (from === 0) {
      s.upsertDoc.run(doc.id, ...columnValues(doc, DOC_COLUMNS));
      const rid = s.ridOf.get(doc.id) as number;
      s.ftsDelete.run(rid);
      s.ftsInsert.run(rid, ...TEXT_FIELDS.map((f) => (doc[f] === undefined ? null : String(doc[f]))));
      s.mvDeleteOwn.run(doc.id);
    }
    for (let i = from; i < end; i++) s.mvInsert.run(doc.id, rows[i]![0], rows[i]![1], rows[i]![2], '');
  }

  /** Many documents in one transaction (bulk loads, benchmarks). */
  upsertMany(docs: readonly IndexDoc[]): void {
    this.flush();
    const s = this.stmts;
    this.conn.transaction(() => {
      for (const doc of docs) {
        s.upsertDoc.run(doc.id, ...columnValues(doc, DOC_COLUMNS));
        const rid = s.ridOf.get(doc.id) as number;
        s.ftsDelete.run(rid);
        s.ftsInsert.run(rid, ...TEXT_FIELDS.map((f) => (doc[f] === undefined ? null : String(doc[f]))));
        s.mvDeleteOwn.run(doc.id);
        for (const [field, value, ord] of multiRows(doc)) s.mvInsert.run(doc.id, field, value, ord, '');
      }
    })();
  }

  async remove(pid: string): Promise<void> {
    this.flush();
    const s = this.stmts;
    this.conn.transaction(() => {
      const rid = s.ridOf.get(pid) as number | undefined;
      if (rid !== undefined) {
        s.ftsDelete.run(rid);
        s.docDelete.run(rid);
      }
      s.mvDeleteOwn.run(pid);
      s.mvDeleteSrc.run(pid);
    })();
  }

  /**
   * A map's relations, written in transactions of RELATION_CHUNK rows with the event loop
   * free in between: a map of 60,000 links is 180,000 rows, seconds of synchronous SQLite
   * that would stop every request. Searches may see a map's links arrive in steps (the index
   * is eventually consistent anyway); the indexer writes one map's relations at a time.
   */
  async setRelations(source: string, relations: readonly Relation[]): Promise<void> {
    this.flush();
    const s = this.stmts;
    for (let from = 0; from === 0 || from < relations.length; from += RELATION_CHUNK) {
      if (from > 0) await new Promise<void>((resolve) => setImmediate(resolve));
      this.conn.transaction(() => {
        if (from === 0) s.mvDeleteSrc.run(source);
        const end = Math.min(relations.length, from + RELATION_CHUNK);
        for (let i = from; i < end; i++) {
          const r = relations[i]!;
          s.mvInsert.run(r.pid, r.field, r.value, 1_000_000 + i, source);
        }
      })();
    }
  }

  async search(req: SearchRequest): Promise<SearchResult> {
    this.flush();
    const db = this.conn;
    const scope = accessScope(req.readableBy);
    const with_ = scope.cte;
    const params: unknown[] = [...scope.cteParams];
    const where = this.compiler.where(req, params, scope);
    const order = this.compiler.orderBy(req);
    const numFound = Number(db.prepare(`${with_}SELECT count(*) FROM docs d WHERE ${where}`).pluck().get(...params));
    let docs: IndexDoc[] = [];
    if (req.rows > 0 && numFound > req.start) {
      const rows = db.prepare(`${with_}SELECT d.* FROM docs d WHERE ${where} ORDER BY ${order} LIMIT ? OFFSET ?`).all(...params, req.rows, req.start) as Array<Record<string, unknown>>;
      const multiFields = req.fields.filter((f) => FIELD_BY_NAME.get(f)?.multivalued);
      const multi = new Map<string, Array<{ field: string; value: string }>>();
      if (rows.length && multiFields.length) {
        const ids = rows.map((r) => String(r.id));
        const mrows = db
          .prepare(
            `${with_}SELECT m.pid, m.field, m.value FROM mv m WHERE m.pid IN (${ids.map(() => '?').join(', ')}) AND m.field IN (${multiFields.map(() => '?').join(', ')}) AND ${this.compiler.visibleValue('m', scope)} ORDER BY m.pid, m.field, m.ord`,
          )
          .all(...scope.cteParams, ...ids, ...multiFields) as Array<{ pid: string; field: string; value: string }>;
        for (const m of mrows) {
          let list = multi.get(m.pid);
          if (!list) multi.set(m.pid, (list = []));
          list.push(m);
        }
      }
      // Text fields are stored in the FTS5 table only.
      const textFields = req.fields.filter((f) => FIELD_BY_NAME.get(f)?.type === 'text');
      if (rows.length && textFields.length) {
        const texts = db
          .prepare(`SELECT rowid, ${textFields.map(q).join(', ')} FROM fts WHERE rowid IN (${rows.map(() => '?').join(', ')})`)
          .all(...rows.map((r) => r.rid)) as Array<Record<string, unknown>>;
        const byRid = new Map(texts.map((t) => [t.rowid, t]));
        for (const r of rows) Object.assign(r, byRid.get(r.rid) ?? {}, { rowid: undefined });
      }
      docs = rows.map((r) => rowToDoc(r, multi.get(String(r.id)) ?? [], req.fields));
    }
    const result: SearchResult = { numFound, docs };
    if (req.facet) {
      result.facets = {};
      const whereParams = params.slice(scope.cteParams.length);
      for (const name of req.facet.fields) {
        const def = FIELD_BY_NAME.get(name)!;
        const limit = req.facet.limit < 0 ? -1 : req.facet.limit;
        const sql = def.multivalued
          ? `${with_}SELECT m.value AS v, count(DISTINCT m.pid) AS n FROM mv m JOIN docs d ON d.id = m.pid WHERE m.field = ? AND ${this.compiler.visibleValue('m', scope)} AND ${where} GROUP BY m.value HAVING count(DISTINCT m.pid) >= ? ORDER BY n DESC, v ASC LIMIT ?`
          : `${with_}SELECT d.${q(name)} AS v, count(*) AS n FROM docs d WHERE ${where} AND d.${q(name)} IS NOT NULL GROUP BY d.${q(name)} HAVING count(*) >= ? ORDER BY n DESC, v ASC LIMIT ?`;
        const args = def.multivalued ? [...scope.cteParams, name, ...whereParams, req.facet.minCount, limit] : [...params, req.facet.minCount, limit];
        const rows = db.prepare(sql).all(...args) as Array<{ v: unknown; n: number }>;
        result.facets[name] = rows.map((r) => [facetValue(def, r.v), Number(r.n)]);
      }
    }
    return result;
  }

  /** Refresh the planner's statistics (after bulk loads). */
  analyze(): void {
    this.flush();
    this.conn.exec('ANALYZE');
  }

  async ids(after: string | undefined, limit: number): Promise<string[]> {
    this.flush();
    return this.conn
      .prepare('SELECT id FROM docs WHERE id > ? ORDER BY id LIMIT ?')
      .pluck()
      .all(after ?? '', limit) as string[];
  }

  async state(key: string): Promise<string | undefined> {
    this.flush();
    return this.conn.prepare('SELECT value FROM state WHERE key = ?').pluck().get(key) as string | undefined;
  }

  async setState(key: string, value: string): Promise<void> {
    this.flush();
    this.conn.prepare('INSERT INTO state (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value').run(key, value);
  }
}
