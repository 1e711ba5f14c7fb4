import { setTimeout as sleep } from 'node:timers/promises';
import { AdapterError } from '@memberkit/types';
import { sql, type Kysely } from 'kysely';
import { beginImmediate, num, openKysely, type DialectSql, type SqlConnectionOptions, type SqlHandle } from './dialect.js';
import { isRetryable, toAdapterError } from './errors.js';
import { COUNTER_SLOTS, migrate } from './migrations.js';
import { importLegacyTables } from './legacy-import.js';
import { RANK_BUCKET, recount } from './rank-index.js';

/** Options of every store of this package. */
export interface SqlStoreOptions extends SqlConnectionOptions {
  /**
   * Run the migrations on open (default true). Turn off when a deployment migrates with a
   * separate step; open then fails with 'internal' only when a query finds a table missing.
   */
  migrate?: boolean;
  /** Attempts of a transaction that hits a deadlock or serialization failure (default 5). */
  maxAttempts?: number;
  /**
   * Rows per bucket of the listings' position index (default 4096; see rank-index.ts): a
   * deep page walks at most twice this many index entries. Processes may differ.
   */
  rankBucketRows?: number;
}

/**
 * One connection pool shared by a catalogue, an event log, a job queue and a mapping overlay.
 * `open()`/`close()` are reference counted: every part's open/close delegates here; the pool
 * is created on the first open (and the schema migrated) and ended by the last close.
 * @internal Parts reach the pool through `read`/`write`.
 */
export class SqlStore {
  readonly options: Readonly<SqlStoreOptions>;
  #handle: SqlHandle | undefined;
  #opening: Promise<void> | undefined;
  #opened = 0;

  constructor(options: SqlStoreOptions) {
    this.options = { ...options };
  }

  get dialect(): DialectSql {
    return this.handle.dialect;
  }

  /** The kysely instance. Throws 'unavailable' before open() or after close(). */
  get db(): Kysely<any> {
    return this.handle.db;
  }

  private get handle(): SqlHandle {
    if (this.#handle === undefined) throw new AdapterError('unavailable', 'the SQL store is not open');
    return this.#handle;
  }

  async open(): Promise<void> {
    this.#opened++;
    if (this.#opened > 1) return this.#opening;
    this.#opening = (async () => {
      const handle = openKysely(this.options);
      try {
        if (this.options.migrate !== false) {
          await migrate(handle.db, handle.dialect, this.#busyTimeoutMs());
          // A data folder of the embedded store before this one: its tables move in once.
          await importLegacyTables(handle.db, handle.dialect, { busyTimeoutMs: this.#busyTimeoutMs(), bucketRows: this.rankBucketRows });
        } else await sql`SELECT 1`.execute(handle.db);
      } catch (e) {
        this.#opened = 0;
        await handle.destroy().catch(() => undefined);
        throw toAdapterError(e, `open ${this.options.dialect} database${this.#sqliteFile() ? ` ${this.#sqliteFile()}` : ''}`);
      }
      this.#handle = handle;
    })();
    return this.#opening;
  }

  /** True between the first open() and the last close(). */
  get isOpen(): boolean {
    return this.#handle !== undefined;
  }

  /** The SQLite file, named in open errors (a file in a missing folder is a configuration error). */
  #sqliteFile(): string | undefined {
    const c = this.options.connection;
    if (this.options.dialect !== 'sqlite') return undefined;
    return typeof c === 'string' ? c.replace(/^sqlite:(\/\/)?/, '') : (c as { file?: string }).file;
  }

  async close(): Promise<void> {
    if (this.#opened === 0) return;
    if (--this.#opened > 0) return;
    const handle = this.#handle;
    this.#handle = undefined;
    this.#opening = undefined;
    await handle?.destroy();
  }

  /**
   * Runs `fn` in a read transaction: one snapshot for every statement (REPEATABLE READ, read
   * only, on PostgreSQL and MySQL; a deferred transaction on SQLite).
   */
  async read<T>(what: string, fn: (trx: Kysely<any>) => Promise<T>): Promise<T> {
    try {
      return await this.#transaction('read', fn);
    } catch (e) {
      throw toAdapterError(e, what);
    }
  }

  /**
   * Runs `fn` in a write transaction (READ COMMITTED with row locks and unique constraints on
   * PostgreSQL and MySQL; BEGIN IMMEDIATE on SQLite), all or nothing. Deadlocks and
   * serialization failures are retried with jittered backoff, then reported 'unavailable'.
   */
  async write<T>(what: string, fn: (trx: Kysely<any>) => Promise<T>): Promise<T> {
    const attempts = this.options.maxAttempts ?? 5;
    for (let attempt = 1; ; attempt++) {
      try {
        return await this.#transaction('write', fn);
      } catch (e) {
        if (!AdapterError.is(e) && isRetryable(e) && attempt < attempts) {
          await sleep(5 * 2 ** attempt * (0.5 + Math.random()));
          continue;
        }
        throw toAdapterError(e, what);
      }
    }
  }

  async #transaction<T>(mode: 'read' | 'write', fn: (trx: Kysely<any>) => Promise<T>): Promise<T> {
    const { db, dialect } = this.handle;
    if (dialect.name !== 'sqlite') {
      const level = mode === 'read' ? 'repeatable read' : 'read committed';
      if (dialect.name === 'postgres' && mode === 'read') {
        return db.connection().execute(async (conn) => {
          await sql`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`.execute(conn);
          try {
            const result = await fn(conn);
            await sql`COMMIT`.execute(conn);
            return result;
          } catch (e) {
            await sql`ROLLBACK`.execute(conn).catch(() => undefined);
            throw e;
          }
        });
      }
      return db.transaction().setIsolationLevel(level).execute(fn);
    }
    // better-sqlite3 behind kysely is one connection guarded by a mutex: connection() holds
    // it for the whole transaction. IMMEDIATE takes the write lock up front, so two
    // processes never deadlock upgrading a read lock.
    return db.connection().execute(async (conn) => {
      if (mode === 'write') await beginImmediate(conn, this.#busyTimeoutMs());
      else await sql`BEGIN`.execute(conn);
      try {
        const result = await fn(conn);
        await sql`COMMIT`.execute(conn);
        return result;
      } catch (e) {
        await sql`ROLLBACK`.execute(conn).catch(() => undefined);
        throw e;
      }
    });
  }

  #busyTimeoutMs(): number {
    const c = this.options.connection;
    return (typeof c === 'object' && 'busyTimeoutMs' in c ? c.busyTimeoutMs : undefined) ?? 5000;
  }

  /**
   * Recomputes what the store keeps about its rows (the row counters and the listings'
   * position index, see rank-index.ts) from the rows themselves, then refreshes the planner's
   * statistics. The adapter keeps both exact on every write; run this after loading or
   * deleting rows with SQL behind its back.
   */
  async reindex(): Promise<void> {
    await this.write('reindex', (trx) => recount(trx, this.dialect, this.rankBucketRows));
    const analyze = this.dialect.name === 'mysql' ? 'ANALYZE TABLE' : 'ANALYZE';
    await this.#transaction('write', async (db) => {
      for (const table of ['mk_objects', 'mk_events', 'mk_access']) await sql.raw(`${analyze} ${table}`).execute(db);
    }).catch((e) => {
      throw toAdapterError(e, 'analyze');
    });
  }

  /** @internal Rows per bucket of the position index. */
  get rankBucketRows(): number {
    return this.options.rankBucketRows ?? RANK_BUCKET;
  }

  /** @internal Adds `delta` to counter `name` (one random slot: concurrent writers rarely wait on each other). */
  async bump(trx: Kysely<any>, name: 'objects' | 'events', delta: number): Promise<void> {
    if (delta === 0) return;
    const slot = Math.floor(Math.random() * COUNTER_SLOTS);
    await sql`UPDATE mk_counters SET n = n + ${delta} WHERE name = ${name} AND slot = ${slot}`.execute(trx);
  }

  /** @internal The exact row count kept by `bump`. */
  async counter(trx: Kysely<any>, name: 'objects' | 'events'): Promise<number> {
    const { rows } = await sql<{ n: unknown }>`SELECT sum(n) AS n FROM mk_counters WHERE name = ${name}`.execute(trx);
    return num(rows[0]?.n ?? 0);
  }
}
