import type { FeedEntry, FeedPage } from '@memberkit/types';
import { sql, type Kysely } from 'kysely';
import { num, text } from './dialect.js';
import type { ClockTick } from './clock.js';
import { changesOf, q, rowOf, rowsOf, Rows, runAsync, type Routine } from './executor.js';
import type { ChangeMark, SqlStore } from './sql-store.js';
import { toAdapterError } from './errors.js';

/**
 * The change feed (`mk_changes`): one row per inserted, replaced or removed PID, numbered by the
 * catalogue clock in the change's own transaction, so positions follow commit order across
 * processes and a reader that saw position n has seen every change up to n. Query indexes and
 * caches of every process follow it instead of dates. Positions are dense (one per entry, from
 * the locked clock row, rolled back with their transaction), so a reader whose next entry is
 * beyond its position + 1 knows the entries between were pruned (pruneChanges) and must
 * reconcile in full instead of following.
 */
export function* recordChangesSteps(tick: ClockTick, entries: ReadonlyArray<Omit<FeedEntry, 'seq'>>): Routine<number | undefined> {
  const { rows, last } = feedRows(tick, entries);
  yield* insertFeedRows(rows);
  return last;
}

/** The feed rows of `entries`, numbered from `tick` now (inserted by insertFeedRows, later in the transaction if need be). */
export function feedRows(tick: ClockTick, entries: ReadonlyArray<Omit<FeedEntry, 'seq'>>): { rows: unknown[][]; last: number | undefined } {
  if (entries.length === 0) return { rows: [], last: undefined };
  const at = Date.now();
  let last = 0;
  const rows = entries.map((e) => {
    last = tick.nextSeq();
    return [last, e.pid, e.kind, at];
  });
  return { rows, last };
}

/** Inserts feed rows from `feedRows` (any number, in multi-row statements). */
export function* insertFeedRows(rows: readonly unknown[][]): Routine<void> {
  for (let i = 0; i < rows.length; i += 500) yield* changesOf(q`INSERT INTO mk_changes (seq, pid, kind, at) VALUES ${new Rows(rows.slice(i, i + 500))}`);
}

/** `recordChangesSteps` in a kysely transaction `trx`. */
export function recordChanges(trx: Kysely<any>, tick: ClockTick, entries: ReadonlyArray<Omit<FeedEntry, 'seq'>>): Promise<number | undefined> {
  return runAsync(trx, undefined, recordChangesSteps(tick, entries));
}

/** Entries after `seq` (at most `limit`) and the head, from one snapshot. */
export function changesSince(store: SqlStore, seq: number, limit: number): Promise<FeedPage> {
  return store.reading('read the change feed', function* () {
    const head = yield* readHead();
    const rows = yield* rowsOf<{ seq: unknown; pid: unknown; kind: unknown }>(sql`SELECT seq, pid, kind FROM mk_changes
      WHERE seq > ${seq} AND seq <= ${head} ORDER BY seq LIMIT ${Math.max(0, Math.floor(limit))}`);
    return { head, entries: rows.map((r) => ({ seq: num(r.seq), pid: text(r.pid), kind: text(r.kind) as FeedEntry['kind'] })) };
  });
}

/** The head read last per store, with the SQLite change mark taken before that read. */
const heads = new WeakMap<SqlStore, { mark: ChangeMark; head: number }>();

/** The head read last, while the store's change mark has not moved since (SQLite only). */
export function knownChangeHead(store: SqlStore): number | undefined {
  return headAt(store, store.changeMark());
}

function headAt(store: SqlStore, mark: ChangeMark | undefined): number | undefined {
  const known = mark && heads.get(store);
  return known && known.mark.dataVersion === mark.dataVersion && known.mark.commits === mark.commits ? known.head : undefined;
}

/**
 * The last committed feed position: one primary-key read. On SQLite, answered from memory
 * while the store's change mark has not moved (the per-request check of caches and query
 * indexes then costs no statement). The mark is read fresh: catch-ups ask from any phase of the
 * event loop (the query index's after a local commit, at a check phase), not only while requests
 * are handled.
 */
export async function changeHead(store: SqlStore): Promise<number> {
  const mark = store.changeMark(true);
  const known = headAt(store, mark);
  if (known !== undefined) return known;
  const reader = store.preparedReader;
  if (reader !== undefined) {
    try {
      return num((await reader.rows('mk_change_head', HEAD_SQL))[0]?.[0] ?? 0);
    } catch (e) {
      throw toAdapterError(e, 'read the change feed head');
    }
  }
  const head = await store.readOne('read the change feed head', readHead);
  if (mark !== undefined) heads.set(store, { mark, head });
  return head;
}

const HEAD_SQL = 'SELECT seq FROM mk_clock WHERE id = 1';
const HEAD = sql.raw(HEAD_SQL);

function* readHead(): Routine<number> {
  const row = yield* rowOf<{ seq: unknown }>(HEAD);
  return num(row?.seq ?? 0);
}

/**
 * Removes feed entries older than `before` and beyond the newest `keepLatest`, never the
 * newest entry: a reader that fell behind then finds its next entry beyond its position + 1
 * (the gap tells it to reconcile) instead of an empty page that would silently skip it ahead.
 * Returns the number of entries removed.
 *
 * By age, the oldest entries up to the first one at or after `before`: a walk of the primary
 * key from its start that stops there (it reads about what it deletes), so `at` needs no
 * index. An entry stamped early by a lagging clock after a later one waits for the next pass.
 */
export function pruneChanges(store: SqlStore, before: Date, keepLatest: number): Promise<number> {
  return store.writing('prune the change feed', function* () {
    const head = yield* readHead();
    const young = yield* rowOf<{ seq: unknown }>(sql`SELECT seq FROM mk_changes WHERE at >= ${before.getTime()} ORDER BY seq LIMIT 1`);
    const byAge = young ? num(young.seq) - 1 : head;
    const upTo = Math.min(head - 1, Math.max(byAge, head - Math.max(1, Math.floor(keepLatest))));
    if (upTo <= 0) return 0;
    return yield* changesOf(sql`DELETE FROM mk_changes WHERE seq <= ${upTo}`);
  });
}
