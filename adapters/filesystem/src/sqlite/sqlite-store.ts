import Database from 'better-sqlite3';
import { AdapterError, RANK_BUCKET, rebuildRanks, type SqlSteps } from '@memberkit/types';
import { toAdapterError } from './errors.js';
import { EVENT_RANKS, migrateSqlite, OBJECT_RANKS, runStepsSync } from './migrations.js';
import { SqliteCatalogue } from './sqlite-catalogue.js';
import { SqliteEventLog } from './sqlite-event-log.js';
import { SqliteJobStore } from './sqlite-jobs.js';

export interface SqliteStoreOptions {
  /**
   * Path of the database file (created when absent; its directory MUST exist), or
   * ':memory:' for a private in-memory database (not shared between stores or processes).
   */
  file: string;
  /**
   * How long a statement waits for another connection's lock before failing with kind
   * 'unavailable' (PRAGMA busy_timeout). Default 5000 ms.
   */
  busyTimeoutMs?: number;
  /**
   * Rows per bucket of the listings' position index (default 4096; see rank-index.ts in
   * @memberkit/types): a page at any offset walks at most twice this many index entries.
   */
  rankBucketRows?: number;
}

/**
 * Creates the embedded SQLite store: one database file holding the catalogue
 * (MetadataAdapter) and the event log (EventLogStore). No I/O happens until `open()`.
 */
export function openSqliteStore(options: SqliteStoreOptions): SqliteStore {
  return new SqliteStore(options);
}

/**
 * One SQLite database shared by a catalogue and an event log (so the event log's
 * `readableBy` filter can join the catalogue's access data).
 *
 * `open()` and `close()` are reference counted: the store, the catalogue and the event log
 * may each be opened and closed (their open/close delegate here); the file is opened on the
 * first `open()` and closed by the matching last `close()`. Opening sets WAL mode,
 * busy_timeout, synchronous=NORMAL and foreign_keys=ON, and migrates the schema
 * (PRAGMA user_version). Several processes MAY open the same file at once.
 */
export class SqliteStore {
  readonly catalogue: SqliteCatalogue;
  readonly eventLog: SqliteEventLog;
  /** Durable jobs (replication, refreshes, notifications) in the same file. */
  readonly jobs: SqliteJobStore;
  readonly options: Readonly<SqliteStoreOptions>;
  #db: Database.Database | undefined;
  #opened = 0;
  readonly #statements = new Map<string, Database.Statement>();

  constructor(options: SqliteStoreOptions) {
    this.options = { ...options };
    this.catalogue = new SqliteCatalogue(this);
    this.eventLog = new SqliteEventLog(this);
    this.jobs = new SqliteJobStore(this);
  }

  /** The better-sqlite3 connection. Throws kind 'unavailable' before open() or after close(). */
  get database(): Database.Database {
    if (this.#db === undefined) throw new AdapterError('unavailable', 'the SQLite store is not open');
    return this.#db;
  }

  /** True between the first open() and the last close(). */
  get isOpen(): boolean {
    return this.#db !== undefined;
  }

  async open(): Promise<void> {
    if (this.#opened > 0) {
      this.#opened++;
      return;
    }
    let db: Database.Database | undefined;
    try {
      const busyTimeoutMs = this.options.busyTimeoutMs ?? 5000;
      db = new Database(this.options.file, { timeout: busyTimeoutMs });
      db.pragma(`busy_timeout = ${Math.max(0, Math.trunc(busyTimeoutMs))}`);
      db.pragma('journal_mode = WAL'); // ':memory:' stays 'memory'
      db.pragma('synchronous = NORMAL');
      db.pragma('foreign_keys = ON');
      migrateSqlite(db);
    } catch (e) {
      db?.close();
      throw toAdapterError(e, `open SQLite database ${this.options.file}`);
    }
    this.#db = db;
    this.#opened = 1;
  }

  async close(): Promise<void> {
    if (this.#opened === 0) return;
    if (--this.#opened > 0) return;
    const db = this.#db;
    this.#db = undefined;
    this.#statements.clear();
    if (db === undefined) return;
    try {
      db.pragma('optimize');
    } catch {
      // best effort: statistics only
    }
    db.close();
  }

  /** @internal A prepared statement for `sql`, cached for the life of the connection. */
  statement<Row = unknown>(sql: string): Database.Statement<unknown[], Row> {
    const db = this.database;
    let statement = this.#statements.get(sql);
    if (statement === undefined) {
      statement = db.prepare(sql);
      this.#statements.set(sql, statement);
    }
    return statement as Database.Statement<unknown[], Row>;
  }

  /** @internal Runs a routine of SQL steps (the shared position index) on this connection. */
  steps<T>(routine: SqlSteps<T>): T {
    return runStepsSync((sql) => this.statement(sql), routine);
  }

  /** @internal Rows per bucket of the position index. */
  get rankBucketRows(): number {
    return this.options.rankBucketRows ?? RANK_BUCKET;
  }

  /**
   * Recomputes the listings' position index from the rows. The store keeps it exact on every
   * write; run this after changing the tables with SQL behind its back.
   */
  reindex(): void {
    this.transaction('immediate', 'reindex', () => {
      for (const t of [OBJECT_RANKS, EVENT_RANKS]) this.steps(rebuildRanks(t, this.rankBucketRows));
    });
  }

  /** @internal Runs `fn` (a single statement, no transaction), mapping errors with toAdapterError. */
  read<T>(what: string, fn: () => T): T {
    try {
      return fn();
    } catch (e) {
      throw toAdapterError(e, what);
    }
  }

  /**
   * @internal Runs `fn` in one transaction: 'immediate' (BEGIN IMMEDIATE, takes the write
   * lock up front) for writes, 'deferred' for consistent multi-statement reads (one WAL
   * snapshot). Errors are mapped with toAdapterError.
   */
  transaction<T>(mode: 'immediate' | 'deferred', what: string, fn: () => T): T {
    const db = this.database;
    try {
      return db.transaction(fn)[mode]();
    } catch (e) {
      throw toAdapterError(e, what);
    }
  }
}
