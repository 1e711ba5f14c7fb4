import { setTimeout as sleep } from 'node:timers/promises';
import { AdapterError } from '@memberkit/types';
import { sql, type Kysely } from 'kysely';
import type { PgPreparedReader } from './pg-prepared-reader.js';
import { beginImmediate, num, openKysely, waitForWriteLock, type DialectSql, type SqlConnectionOptions, type SqlHandle } from './dialect.js';
import { rowOf, runAsync, changesOf, q, type Routine, type SqliteSync } from './executor.js';
import { isRetryable, toAdapterError } from './errors.js';
import { COUNTER_SLOTS, migrate } from './migrations.js';
import { importLegacyTables } from './legacy-import.js';
import { POSITION_BUCKET, recount } from './position-index.js';
import { WriteGroup } from './write-group.js';
import { BatchQueue } from './batch-queue.js';

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
   * Rows per bucket of the listings' position index (default 4096; see position-index.ts): a
   * deep page walks at most twice this many index entries. Processes may differ.
   */
  positionBucketRows?: number;
}

/** Writes per group commit on PostgreSQL/MySQL (one transaction holds their row locks). */
const MAX_GROUP = 64;

type Outcome = { value: unknown } | { error: unknown };

/** How long a flush of the WAL waits for the COMMIT of the writes held while it ran (see `#commitHeld`). */
const HELD_COMMIT_WAIT_MS = 20;

/** Gives each grouped write its outcome, once the group's transaction ended. */
function settle(group: readonly GroupedWrite[], outcomes: readonly Outcome[]): void {
  group.forEach((item, i) => {
    const outcome = outcomes[i]!;
    if ('error' in outcome) item.reject(toAdapterError(outcome.error, item.what));
    else item.resolve(outcome.value);
  });
}

/** Runs `fn` on `conn` between `begin` and COMMIT; rolls back when it fails. */
async function inTransaction<T>(conn: Kysely<any>, begin: () => Promise<unknown>, fn: (trx: Kysely<any>) => Promise<T>): Promise<T> {
  await begin();
  try {
    const result = await fn(conn);
    await sql`COMMIT`.execute(conn);
    return result;
  } catch (e) {
    await sql`ROLLBACK`.execute(conn).catch(() => undefined);
    throw e;
  }
}

/** A routine waiting for a group commit, and its caller. */
interface GroupedWrite {
  what: string;
  routine: (group: WriteGroup) => Routine<unknown>;
  /** SQLite: answered once the commit is durable (see WalSync); false: once committed. */
  durable: boolean;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/** See SqlStore.changeMark: equal marks, no commit in between. */
export interface ChangeMark {
  readonly dataVersion: number;
  readonly commits: number;
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
  /** SQLite: set while a kysely transaction holds the connection (the synchronous executor waits). */
  #kyselyTransaction: Promise<void> | undefined;
  /** SQLite: the writes waiting for this turn's group commit (see `writing`). */
  #group: GroupedWrite[] | undefined;
  /** SQLite: durable writes held until the WAL flush under way ends (see `#commitOrHold`). */
  #held: GroupedWrite[] | undefined;
  /** PostgreSQL/MySQL: the writes waiting for the next group (see `#commitRemoteGroup`). */
  readonly #queued = new BatchQueue<GroupedWrite>(MAX_GROUP, (group) => this.#commitRemoteGroup(group));
  /** Write transactions this store committed (see `changeMark`). */
  #commits = 0;

  constructor(options: SqlStoreOptions) {
    this.options = { ...options };
  }

  get dialect(): DialectSql {
    return this.handle.dialect;
  }

  /** PostgreSQL: a connection beside the pool for the change feed's head read (see PgPreparedReader). */
  get preparedReader(): PgPreparedReader | undefined {
    return this.handle.preparedReader;
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
          await importLegacyTables(handle.db, handle.dialect, { busyTimeoutMs: this.#busyTimeoutMs(), bucketRows: this.positionBucketRows });
        } else await sql`SELECT 1`.execute(handle.db);
      } catch (e) {
        this.#opened = 0;
        await handle.destroy().catch(() => undefined);
        throw toAdapterError(e, `open ${this.options.dialect} database${this.#sqliteFile() ? ` ${this.#sqliteFile()}` : ''}`);
      }
      this.#handle = handle;
      if (handle.walSync) handle.walSync.beforeNext = () => this.#commitHeld();
    })();
    return this.#opening;
  }

  /**
   * On SQLite, a mark that moves whenever the database may have changed since it was last
   * read: another process committed (`PRAGMA data_version`) or this store did (a count of its
   * write commits; taken before a read, a commit racing the read moves it). Read from memory,
   * no statement on a table. Undefined on other dialects. `fresh`: `PRAGMA data_version` read
   * now rather than the turn's (see SqliteSync.dataVersion).
   */
  changeMark(fresh = false): ChangeMark | undefined {
    const sync = this.#handle?.sync();
    return sync === undefined ? undefined : { dataVersion: sync.dataVersion(fresh), commits: this.#commits };
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
   * Runs a routine of ONE statement without an explicit transaction (the statement is its own
   * snapshot): one round trip on PostgreSQL and MySQL, no BEGIN/COMMIT on SQLite.
   */
  async readOne<T>(what: string, routine: () => Routine<T>): Promise<T> {
    try {
      const sync = this.#kyselyTransaction === undefined ? this.handle.sync() : await this.#sync();
      return sync !== undefined ? sync.run(routine()) : await runAsync(this.db, this.dialect, routine());
    } catch (e) {
      throw toAdapterError(e, what);
    }
  }

  /**
   * Runs a routine of ONE write statement without an explicit transaction (a statement is
   * atomic on its own): one round trip on PostgreSQL and MySQL; a grouped write on SQLite.
   */
  async writeOne<T>(what: string, routine: () => Routine<T>): Promise<T> {
    if (this.dialect.name === 'sqlite') return this.writing(what, () => routine());
    try {
      return await runAsync(this.db, this.dialect, routine());
    } catch (e) {
      throw toAdapterError(e, what);
    }
  }

  /** Runs a routine in a read transaction (one snapshot for every statement, as `read`). */
  async reading<T>(what: string, routine: () => Routine<T>): Promise<T> {
    try {
      const sync = await this.#sync();
      if (sync === undefined) return await this.#transaction('read', (trx) => runAsync(trx, this.dialect, routine()));
      sync.exec('BEGIN');
      return this.#finish(sync, routine);
    } catch (e) {
      throw toAdapterError(e, what);
    }
  }

  /**
   * Runs a routine in a write transaction (as `write`: all or nothing, retried on deadlocks).
   * On SQLite the routines asked for in one turn of the event loop share one transaction (a
   * group commit: concurrent requests pay one BEGIN IMMEDIATE/COMMIT and write the pages they
   * share, clock, counters, index ends, once); a failing routine fails alone (the group runs
   * again one routine per transaction, `#commitGroup`); each result is given once its COMMIT
   * succeeded.
   * The routines run synchronously; only the wait for another process's write lock is
   * asynchronous. On PostgreSQL and MySQL the writes that arrive while a group commits form
   * the next group, in one transaction (see `#commitRemoteGroup`).
   * On a SQLite file the result is given once the commit is also durable (WalSync, one flush
   * for the writes that wait together); `durable: false` answers at COMMIT (a write whose loss
   * in a power cut costs nothing a later durable write would not repair).
   */
  async writing<T>(what: string, routine: (group: WriteGroup) => Routine<T>, options: { durable?: boolean } = {}): Promise<T> {
    const durable = options.durable ?? true;
    if (this.dialect.name !== 'sqlite') {
      return new Promise<T>((resolve, reject) => this.#queued.push({ what, routine, durable, resolve: resolve as (value: unknown) => void, reject }));
    }
    return new Promise<T>((resolve, reject) => {
      if (this.#group === undefined) {
        const group: GroupedWrite[] = (this.#group = []);
        setImmediate(() => {
          this.#group = undefined;
          this.#commitOrHold(group);
        });
      }
      this.#group.push({ what, routine, durable, resolve: resolve as (value: unknown) => void, reject });
    });
  }

  /**
   * PostgreSQL and MySQL: the writes queued while the previous group committed run as the
   * next group, in one transaction. Every catalogue change locks the one
   * clock row first (clock.ts), so concurrent writes wait on each other anyway; a group pays
   * that lock, BEGIN and COMMIT (and its fsync) once instead of once per write.
   */
  async #commitRemoteGroup(group: GroupedWrite[]): Promise<void> {
    const alone = async (item: GroupedWrite) => {
      try {
        item.resolve(await this.write(item.what, (trx) => runAsync(trx, this.dialect, this.#alone(item))));
      } catch (e) {
        item.reject(e);
      }
    };
    if (group.length === 1) return alone(group[0]!);
    // Optimistic: no savepoint per write (two round trips each, a fifth of a small create's).
    // A write that fails is rare (its checks ran before it was queued); then the whole
    // transaction rolls back and every write of the group runs again in one of its own, in
    // the order they were sent (a replace of an object the group creates comes after its
    // insert), so only the failing one fails (also after a deadlock, which ends MySQL's).
    let values: unknown[];
    try {
      values = await this.#transaction('write', async (trx) => {
        // New objects' rows are written behind, together at the end: no round trip per create.
        const shared = new WriteGroup(this, this.dialect.name === 'postgres');
        const done: unknown[] = [];
        for (const item of group) done.push(await runAsync(trx, this.dialect, item.routine(shared)));
        await runAsync(trx, this.dialect, shared.finish());
        return done;
      });
    } catch {
      for (const item of group) await alone(item);
      return;
    }
    settle(group, values.map((value) => ({ value })));
  }

  /** One grouped write in a transaction of its own (a group that hit a deadlock retries so). */
  *#alone(item: GroupedWrite): Routine<unknown> {
    const shared = new WriteGroup(this);
    const value = yield* item.routine(shared);
    yield* shared.finish();
    return value;
  }

  /**
   * Runs the grouped routines between one BEGIN IMMEDIATE and COMMIT (see `writing`).
   * Optimistic, as on the servers: no savepoint per write (two statements each, a tenth of a
   * small create's SQLite time). A write that fails is rare (its checks ran before it was
   * queued); then the group rolls back and each write runs again in a transaction of its own,
   * so only the failing one fails.
   */
  async #commitGroup(group: GroupedWrite[], committed?: () => void): Promise<void> {
    let outcomes: Outcome[];
    try {
      outcomes = await this.#commitEach(group);
    } catch (error) {
      outcomes = group.map(() => ({ error }));
    } finally {
      committed?.();
    }
    await this.#settleDurable(group, outcomes);
  }

  /** The group's outcomes: together in one transaction, or each alone once that failed. */
  async #commitEach(group: GroupedWrite[]): Promise<Outcome[]> {
    const together = await this.#attempt(group);
    if ('values' in together) return together.values.map((value) => ({ value }));
    if (group.length === 1) return [together];
    const outcomes: Outcome[] = [];
    for (const item of group) {
      const alone = await this.#attempt([item]);
      outcomes.push('values' in alone ? { value: alone.values[0] } : alone);
    }
    return outcomes;
  }

  /**
   * SQLite: a group of writes that all wait for durability, formed while a flush of the WAL is
   * under way, cannot be answered before the flush after it (which begins once it ends: WalSync).
   * Its COMMIT waits for that end too, with the other such groups formed meanwhile: one
   * transaction for all of them (the pages they share, index ends, clock, counters, written to
   * the WAL once instead of once per group) for no later answer. A group with a write answered
   * at its commit (`durable: false`, a write intent) commits at once.
   */
  #commitOrHold(group: GroupedWrite[]): void {
    if (this.#handle?.walSync?.flushing && group.every((item) => item.durable)) (this.#held ??= []).push(...group);
    else void this.#commitGroup(group);
  }

  /**
   * The held writes committed (WalSync.beforeNext): resolves at their COMMIT, not once durable
   * (the next flush waits for this, so that it covers them). A COMMIT kept waiting (another
   * process's write lock, a kysely transaction on the connection) holds that flush back
   * HELD_COMMIT_WAIT_MS at most: those writes then wait for a later flush, started by their own.
   */
  async #commitHeld(): Promise<void> {
    // Writes held while a held group committed go too: nothing else would start their flush.
    while (this.#held !== undefined) {
      const held = this.#held;
      this.#held = undefined;
      const committed = new Promise<boolean>((resolve) => void this.#commitGroup(held, () => resolve(true)));
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(false), HELD_COMMIT_WAIT_MS)));
      const inTime = await Promise.race([committed, late]);
      clearTimeout(timer);
      if (!inTime) {
        // not held again: the writes that wait from now on commit on their own
        const rest = this.#held;
        this.#held = undefined;
        if (rest !== undefined) void this.#commitGroup(rest);
        return;
      }
    }
  }

  /**
   * SQLite: gives failures and writes that need not wait their outcome at once, the others once
   * the WAL is flushed (WalSync; its failure fails them: their durability is unknown).
   */
  async #settleDurable(group: readonly GroupedWrite[], outcomes: readonly Outcome[]): Promise<void> {
    const handle = this.#handle;
    if (handle === undefined) {
      // Closed meanwhile (writes held until a flush ended, during close): none can be confirmed durable.
      const closed = new AdapterError('unavailable', 'the catalogue was closed before the write was flushed to the disk', { committed: true });
      return settle(group, outcomes.map((o, i) => ('error' in o || !group[i]!.durable ? o : { error: closed })));
    }
    const walSync = handle.walSync;
    const waits = group.map((item, i) => walSync !== undefined && item.durable && !('error' in outcomes[i]!));
    settle(
      group.filter((_, i) => !waits[i]),
      outcomes.filter((_, i) => !waits[i]),
    );
    if (!waits.includes(true)) return;
    const failure = await walSync!.sync().then(
      () => undefined,
      (error: unknown) => ({ error }),
    );
    settle(
      group.filter((_, i) => waits[i]),
      outcomes.filter((_, i) => waits[i]).map((outcome) => failure ?? outcome),
    );
  }

  /** `items` in one SQLite transaction: their values, or the error that rolled it back. */
  async #attempt(items: readonly GroupedWrite[]): Promise<{ values: unknown[] } | { error: unknown }> {
    try {
      // BEGIN IMMEDIATE, the routines and COMMIT run without a pause, so nothing else of
      // this process runs on the connection in between.
      return await waitForWriteLock(async () => {
        const sync = (await this.#sync())!;
        sync.exec('BEGIN IMMEDIATE');
        try {
          const shared = new WriteGroup(this);
          const values = items.map((item) => sync.run(item.routine(shared)));
          sync.run(shared.finish());
          sync.exec('COMMIT');
          this.#commits++;
          return { values };
        } catch (error) {
          if (sync.inTransaction) sync.exec('ROLLBACK');
          return { error };
        }
      }, this.#busyTimeoutMs());
    } catch (error) {
      // the write lock, not a routine: BUSY past the timeout
      return { error };
    }
  }

  /**
   * SQLite's synchronous executor once no kysely transaction holds the connection; the caller
   * must use it before awaiting anything else. Undefined on other dialects.
   */
  async #sync(): Promise<SqliteSync | undefined> {
    const sync = this.handle.sync();
    if (sync === undefined) return sync;
    while (this.#kyselyTransaction !== undefined) await this.#kyselyTransaction;
    return sync;
  }

  /** Runs `routine` synchronously in the transaction just begun, then commits (rolls back on failure). */
  #finish<T>(sync: SqliteSync, routine: () => Routine<T>): T {
    try {
      const result = sync.run(routine());
      sync.exec('COMMIT');
      return result;
    } catch (e) {
      if (sync.inTransaction) sync.exec('ROLLBACK');
      throw e;
    }
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
        const result = await this.#transaction('write', fn);
        this.#commits++;
        // SQLite: answered once durable (WalSync); the servers' COMMIT already is.
        await this.handle.walSync?.sync();
        return result;
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
        return db.connection().execute((conn) => inTransaction(conn, () => sql`BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY`.execute(conn), fn));
      }
      return db.transaction().setIsolationLevel(level).execute(fn);
    }
    // better-sqlite3 behind kysely is one connection guarded by a mutex: connection() holds
    // it for the whole transaction (and #kyselyTransaction keeps the synchronous executor
    // off it). IMMEDIATE takes the write lock up front, so two processes never deadlock
    // upgrading a read lock.
    while (this.#kyselyTransaction !== undefined) await this.#kyselyTransaction;
    let release!: () => void;
    this.#kyselyTransaction = new Promise((resolve) => (release = resolve));
    try {
      return await this.#sqliteTransaction(mode, fn);
    } finally {
      this.#kyselyTransaction = undefined;
      release();
    }
  }

  #sqliteTransaction<T>(mode: 'read' | 'write', fn: (trx: Kysely<any>) => Promise<T>): Promise<T> {
    return this.handle.db.connection().execute((conn) =>
      inTransaction(conn, () => (mode === 'write' ? beginImmediate(conn, this.#busyTimeoutMs()) : sql`BEGIN`.execute(conn)), fn),
    );
  }

  #busyTimeoutMs(): number {
    const c = this.options.connection;
    return (typeof c === 'object' && 'busyTimeoutMs' in c ? c.busyTimeoutMs : undefined) ?? 5000;
  }

  /**
   * Recomputes what the store keeps about its rows (the row counters and the listings'
   * position index, see position-index.ts) from the rows themselves, then refreshes the planner's
   * statistics. The adapter keeps both exact on every write; run this after loading or
   * deleting rows with SQL behind its back.
   */
  async reindex(): Promise<void> {
    await this.write('reindex', (trx) => recount(trx, this.dialect, this.positionBucketRows));
    const analyze = this.dialect.name === 'mysql' ? 'ANALYZE TABLE' : 'ANALYZE';
    await this.#transaction('write', async (db) => {
      for (const table of ['mk_objects', 'mk_events', 'mk_access']) await sql.raw(`${analyze} ${table}`).execute(db);
    }).catch((e) => {
      throw toAdapterError(e, 'analyze');
    });
  }

  /** @internal Rows per bucket of the position index. */
  get positionBucketRows(): number {
    return this.options.positionBucketRows ?? POSITION_BUCKET;
  }

  /**
   * @internal Adds each delta to its counter, in one statement (one random slot: concurrent
   * writers rarely wait on each other). Bump once per transaction with the sum of its changes.
   */
  *bump(deltas: { objects?: number; events?: number }): Routine<void> {
    const objects = deltas.objects ?? 0;
    const events = deltas.events ?? 0;
    if (objects === 0 && events === 0) return;
    const slot = Math.floor(Math.random() * COUNTER_SLOTS);
    // products, not CASE ... THEN <parameter>: PostgreSQL would type the parameter as text
    yield* changesOf(q`UPDATE mk_counters SET n = n + ${objects} * (CASE WHEN name = 'objects' THEN 1 ELSE 0 END)
        + ${events} * (CASE WHEN name = 'events' THEN 1 ELSE 0 END)
      WHERE slot = ${slot} AND name IN ('objects', 'events')`);
  }

  /** @internal The exact row count kept by `bump`. */
  *counter(name: 'objects' | 'events'): Routine<number> {
    const row = yield* rowOf<{ n: unknown }>(q`SELECT sum(n) AS n FROM mk_counters WHERE name = ${name}`);
    return num(row?.n ?? 0);
  }
}
