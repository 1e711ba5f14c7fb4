import type { FeedEntry, FeedPage } from '@memberkit/types';
import { sql, type Kysely } from 'kysely';
import { num, text } from './dialect.js';
import type { ClockTick } from './clock.js';
import { toAdapterError } from './errors.js';
import type { SqlStore } from './sql-store.js';

/**
 * The change feed (`mk_changes`): one row per inserted, replaced or removed PID, numbered by the
 * catalogue clock in the change's own transaction, so positions follow commit order across
 * processes and a reader that saw position n has seen every change up to n. Query indexes and
 * caches of every process follow it instead of dates. Positions are dense (one per entry, from
 * the locked clock row, rolled back with their transaction), so a reader whose next entry is
 * beyond its position + 1 knows the entries between were pruned (pruneChanges) and must
 * reconcile in full instead of following.
 */
export async function recordChanges(trx: Kysely<any>, tick: ClockTick, entries: ReadonlyArray<Omit<FeedEntry, 'seq'>>): Promise<number | undefined> {
  if (entries.length === 0) return undefined;
  const at = Date.now();
  let last = 0;
  const rows = entries.map((e) => {
    last = tick.nextSeq();
    return sql`(${last}, ${e.pid}, ${e.kind}, ${at})`;
  });
  for (let i = 0; i < rows.length; i += 500) await sql`INSERT INTO mk_changes (seq, pid, kind, at) VALUES ${sql.join(rows.slice(i, i + 500))}`.execute(trx);
  return last;
}

/** Entries after `seq` (at most `limit`) and the head, from one snapshot. */
export function changesSince(store: SqlStore, seq: number, limit: number): Promise<FeedPage> {
  return store.read('read the change feed', async (trx) => {
    const head = await readHead(trx);
    const { rows } = await sql<{ seq: unknown; pid: unknown; kind: unknown }>`SELECT seq, pid, kind FROM mk_changes
      WHERE seq > ${seq} AND seq <= ${head} ORDER BY seq LIMIT ${Math.max(0, Math.floor(limit))}`.execute(trx);
    return { head, entries: rows.map((r) => ({ seq: num(r.seq), pid: text(r.pid), kind: text(r.kind) as FeedEntry['kind'] })) };
  });
}

/** The last committed feed position: one primary-key read. */
export async function changeHead(store: SqlStore): Promise<number> {
  try {
    return await readHead(store.db);
  } catch (e) {
    throw toAdapterError(e, 'read the change feed head');
  }
}

async function readHead(db: Kysely<any>): Promise<number> {
  const { rows } = await sql<{ seq: unknown }>`SELECT seq FROM mk_clock WHERE id = 1`.execute(db);
  return num(rows[0]?.seq ?? 0);
}

/**
 * Removes feed entries older than `before` and beyond the newest `keepLatest`, never the
 * newest entry: a reader that fell behind then finds its next entry beyond its position + 1
 * (the gap tells it to reconcile) instead of an empty page that would silently skip it ahead.
 * Returns the number of entries removed.
 */
export function pruneChanges(store: SqlStore, before: Date, keepLatest: number): Promise<number> {
  return store.write('prune the change feed', async (trx) => {
    const head = await readHead(trx);
    const { rows } = await sql<{ seq: unknown }>`SELECT MAX(seq) AS seq FROM mk_changes WHERE at < ${before.getTime()}`.execute(trx);
    const byAge = rows[0]?.seq === null || rows[0]?.seq === undefined ? 0 : num(rows[0].seq);
    const upTo = Math.min(head - 1, Math.max(byAge, head - Math.max(1, Math.floor(keepLatest))));
    if (upTo <= 0) return 0;
    const result = await sql`DELETE FROM mk_changes WHERE seq <= ${upTo}`.execute(trx);
    return Number(result.numAffectedRows ?? 0n);
  });
}
