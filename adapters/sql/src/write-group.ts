import type { ClockTick } from './clock.js';
import { saveClockSteps } from './clock.js';
import { fusedWrites, statementsOf, type Routine, type Statement } from './executor.js';
import { applyPositionDeltasTogether, type PositionDelta, type PositionTable, type SqlSteps } from './position-index.js';
import type { SqlStore } from './sql-store.js';

/**
 * What the routines of one write transaction share (SqlStore.writing runs the writes that
 * arrive together as one transaction; if one fails, the transaction rolls back and each runs
 * again with a group of its own): the catalogue clock, locked by the first routine that needs
 * it and saved once, and the work every write does on the same rows (the listings' position
 * index, the row counters), done once after the last routine.
 */
export class WriteGroup {
  /** The clock of this transaction (clock.ts), once a routine locked it. */
  tick: ClockTick | undefined;
  readonly #positions = new Map<PositionTable, PositionDelta[]>();
  readonly #deferred = new Map<string, { rows: unknown[][]; write: (rows: unknown[][]) => Routine<void>; resultFree: boolean; behind: boolean }>();
  #objects = 0;
  #events = 0;
  #behindRows = 0;

  /** Rows deferred with `behind` and not yet written: a caller flushes past a bound (statement size). */
  get behindRows(): number {
    return this.#behindRows;
  }

  /**
   * @param writeBehind PostgreSQL groups of several writes: new objects' rows may be deferred
   *   too (`defer` with `behind`), written by `flushBehind` before a routine that reads them.
   */
  constructor(
    private readonly store: SqlStore,
    readonly writeBehind = false,
  ) {}

  /** A routine's share of the work done once: position deltas per listing, counter deltas. */
  add(work: { positions?: ReadonlyArray<readonly [PositionTable, readonly PositionDelta[]]>; objects?: number; events?: number }): void {
    for (const [table, deltas] of work.positions ?? []) {
      if (deltas.length === 0) continue;
      const list = this.#positions.get(table);
      if (list) list.push(...deltas);
      else this.#positions.set(table, [...deltas]);
    }
    this.#objects += work.objects ?? 0;
    this.#events += work.events ?? 0;
  }

  /**
   * Rows of `kind` that `write` inserts (or deletes) once for the whole group, after the last
   * routine, instead of one statement per routine: a round trip per kind and group on
   * PostgreSQL and MySQL, one cold statement instead of several on SQLite. Only for rows no
   * later routine of the group reads or could conflict on (event entries, feed entries,
   * settled intents); `write` is the same for every call of a kind. `resultFree`: `write` reads
   * nothing its statements return, so on PostgreSQL they go out in one statement with the
   * counters and the clock (`finish`). `behind` (write-behind groups only): rows of new objects
   * that a later routine may read; that routine calls `flushBehind` first, a bucket split writes
   * them before it counts rows, else they go out with the last statement.
   */
  defer(kind: string, rows: readonly unknown[][], write: (rows: unknown[][]) => Routine<void>, options: { resultFree?: boolean; behind?: boolean } = {}): void {
    if (rows.length === 0) return;
    if (options.behind) this.#behindRows += rows.length;
    const pending = this.#deferred.get(kind);
    if (pending) pending.rows.push(...rows);
    else this.#deferred.set(kind, { rows: [...rows], write, resultFree: (options.resultFree ?? false) || (options.behind ?? false), behind: options.behind ?? false });
  }

  /**
   * Writes the rows deferred with `behind` now, as one statement (a write-behind group is
   * PostgreSQL's): a routine that may read or change rows of new objects calls it first.
   */
  *flushBehind(): SqlSteps<void> {
    this.#behindRows = 0;
    const statements: Statement[] = [];
    for (const [kind, { rows, write, behind }] of this.#deferred) {
      if (!behind) continue;
      this.#deferred.delete(kind);
      statements.push(...statementsOf(write(rows)));
    }
    if (statements.length > 0) yield fusedWrites(statements, this.store.db);
  }

  /** The shared work, after the last routine (same transaction, before COMMIT). */
  *finish(): Routine<void> {
    const store = this.store;
    // PostgreSQL: the writes that read no result (on different tables) as one statement, last.
    const fused: Statement[] | undefined = store.dialect.name === 'postgres' ? [] : undefined;
    // First the deferred rows: writing events adds their positions. Rows held behind wait for
    // the position index: a split counts a bucket's rows in the table, so it writes them first.
    for (const { rows, write, resultFree, behind } of this.#deferred.values()) {
      if (behind) continue;
      if (fused && resultFree) fused.push(...statementsOf(write(rows)));
      else yield* write(rows);
    }
    yield* applyPositionDeltasTogether(store.dialect.name, [...this.#positions], store.positionBucketRows, () => this.flushBehind());
    for (const { rows, write, behind } of this.#deferred.values()) {
      if (!behind) continue;
      if (fused) fused.push(...statementsOf(write(rows)));
      else yield* write(rows);
    }
    const counters = store.bump({ objects: this.#objects, events: this.#events });
    const clock = this.tick ? saveClockSteps(this.tick) : undefined;
    if (fused === undefined) {
      yield* counters;
      if (clock) yield* clock;
      return;
    }
    fused.push(...statementsOf(counters), ...(clock ? statementsOf(clock) : []));
    if (fused.length > 0) yield fusedWrites(fused, store.db);
  }
}
