import { sql, type Kysely } from 'kysely';
import { num } from './dialect.js';
import { changesOf, FOR_UPDATE, q, rowOf, runAsync, type Routine } from './executor.js';
import type { SqlStore } from './sql-store.js';

/**
 * The catalogue's one clock, read and advanced inside a write transaction that holds the
 * `mk_clock` row lock (FOR UPDATE; SQLite's BEGIN IMMEDIATE holds the whole database). Every
 * catalogue change takes it first, so changes are serialized on it and its values follow commit
 * order across processes: a stamp is never earlier than the proposed date (the writer's clock),
 * the catalogue's previous stamp + 1 ms, or the object's previous value + 1 ms, so a host whose
 * clock lags never moves a date backwards, and listing order is commit order. `seq` numbers the
 * change feed (change-feed.ts) the same way (a database sequence is taken before commit, so its
 * values do not follow commit order on PostgreSQL).
 */
export class ClockTick {
  /** Every stamp of this transaction is after every stamp of the transactions committed before it. */
  private floorMs: number;

  constructor(
    private lastMs: number,
    private seq: number,
    /** Store proposed dates as given (SqlCatalogueOptions.clock 'proposed'); the feed is still numbered. */
    private readonly asProposed = false,
  ) {
    this.floorMs = lastMs + 1;
  }

  /**
   * The dateSysMetadataModified to store (epoch ms) for a proposed one. Records of one change
   * proposed at one instant share one stamp (an update's new object and the version it
   * obsoletes carry the same date): the floor is per transaction, not per record, so a batch of
   * thousands of records does not push the clock ahead of real time.
   */
  stamp(proposedMs: number, previousMs?: number): number {
    if (this.asProposed) return proposedMs;
    const t = Math.max(proposedMs, this.floorMs, previousMs === undefined ? -Infinity : previousMs + 1);
    this.lastMs = Math.max(this.lastMs, t);
    return t;
  }

  /**
   * The next write of the same transaction (a group: WriteGroup) stamps after every stamp of
   * the writes before it, as if it had a transaction of its own.
   */
  nextWrite(): void {
    this.floorMs = this.lastMs + 1;
  }

  /** The next change-feed position. */
  nextSeq(): number {
    return ++this.seq;
  }

  /** @internal */
  get state(): { lastMs: number; seq: number } {
    return { lastMs: this.lastMs, seq: this.seq };
  }
}

/** Locks the clock row for the rest of the write transaction and reads it. Take it before any other row lock. */
export function* lockClockSteps(store: SqlStore, asProposed = false): Routine<ClockTick> {
  const read = () => rowOf<{ last_ms: unknown; seq: unknown }>(q`SELECT last_ms, seq FROM mk_clock WHERE id = 1 ${FOR_UPDATE}`);
  let row = yield* read();
  if (row === undefined) {
    // The row is written by the migration; recreate it if someone emptied the table.
    yield* changesOf(q`INSERT INTO mk_clock (id, last_ms, seq) VALUES (1, 0, 0)`);
    row = yield* read();
  }
  return new ClockTick(num(row?.last_ms ?? 0), num(row?.seq ?? 0), asProposed);
}

/** Writes the advanced clock back (same transaction as `lockClockSteps`). */
export function* saveClockSteps(tick: ClockTick): Routine<void> {
  const { lastMs, seq } = tick.state;
  yield* changesOf(q`UPDATE mk_clock SET last_ms = ${lastMs}, seq = ${seq} WHERE id = 1`);
}

/** `lockClockSteps` in a kysely transaction `trx`. */
export function lockClock(trx: Kysely<any>, store: SqlStore, asProposed = false): Promise<ClockTick> {
  return runAsync(trx, store.dialect, lockClockSteps(store, asProposed));
}

/** `saveClockSteps` in a kysely transaction `trx`. */
export function saveClock(trx: Kysely<any>, tick: ClockTick): Promise<void> {
  return runAsync(trx, undefined, saveClockSteps(tick));
}
