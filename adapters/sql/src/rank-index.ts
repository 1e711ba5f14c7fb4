import { AdapterError } from '@memberkit/types';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { num, text, type DialectSql } from './dialect.js';

/**
 * The position index of the two ordered listings (listObjects, getLogRecords).
 *
 * DataONE pages by `start`/`count`, so a page at offset k would have to skip k index entries.
 * Instead, the sort order is cut into buckets: each row of `mk_ranks` holds a bucket's first
 * sort key and how many rows (and how many public rows) lie between it and the next bucket's
 * first key. A page at any offset sums the bucket counts (a few hundred small rows per million)
 * and walks at most one bucket of the index.
 *
 * The counts are exact because every transaction that adds, moves or removes a listed row
 * applies its deltas here before committing, holding the bucket's row lock. A bucket that grows
 * past 2 × RANK_BUCKET rows is split in two by the writer that grew it (under the same lock),
 * so buckets stay between one and two RANK_BUCKETs apart from removals. Writers and splitters
 * stay exact together because a writer looks its bucket up again after the lock is granted
 * (READ COMMITTED: that statement sees a split committed meanwhile), and a splitter counts the
 * rows it moves with the lock held, when nobody else can change that bucket's count.
 */
export const RANK_BUCKET = 4096;

/** The first bucket's key: before every row (dates are epoch ms, keys non-empty). */
const FIRST: RankKey = { date: Number.MIN_SAFE_INTEGER, key: '' };

/** A position in a listing's sort order: the date column, then the unique key as text. */
export interface RankKey {
  date: number;
  key: string;
}

/** A change to a listing: +1 for a row appearing at `date`/`key`, −1 for one leaving it. */
export interface RankDelta extends RankKey {
  n: number;
  /** The same for the public subset (objects readable by `public`); 0 when not tracked. */
  pub: number;
}

/** A listing kept in `mk_ranks`. */
export interface RankedTable {
  readonly list: 'objects' | 'events';
  readonly table: string;
  readonly dateCol: string;
  readonly keyCol: string;
  /** The column that is 1 on public rows, when the listing tracks them. */
  readonly publicCol?: string;
  /** The index on (publicCol, dateCol, keyCol). */
  readonly publicIndex?: string;
  /** The stored text of a key (event keys are zero-padded so that text order is numeric order). */
  keyText(value: unknown): string;
  /** A key text as the SQL value compared with `keyCol`. */
  keyValue(key: string): unknown;
}

export const OBJECT_RANKS: RankedTable = {
  list: 'objects',
  table: 'mk_objects',
  dateCol: 'date_modified',
  keyCol: 'pid',
  publicCol: 'is_public',
  publicIndex: 'mk_objects_public',
  keyText: text,
  keyValue: (key) => key,
};

export const EVENT_RANKS: RankedTable = {
  list: 'events',
  table: 'mk_events',
  dateCol: 'date_logged',
  keyCol: 'entry_id',
  keyText: (value) => String(value).padStart(20, '0'),
  keyValue: (key) => (key === '' ? 0 : Number(key)),
};

/** Sort order of keys: date, then the key's UTF-8 bytes (code point order, as the columns sort). */
export function compareRankKeys(a: RankKey, b: RankKey): number {
  return a.date - b.date || Buffer.compare(Buffer.from(a.key), Buffer.from(b.key));
}

/** `o.(date, key) >= lo`, written so that every engine uses it as an index range. */
export function fromKey(t: RankedTable, lo: RankKey, alias = 'o'): RawBuilder<unknown> {
  if (lo.date === FIRST.date) return sql`1 = 1`;
  const date = sql.ref(`${alias}.${t.dateCol}`);
  const key = sql.ref(`${alias}.${t.keyCol}`);
  return sql`${date} >= ${lo.date} AND (${date} > ${lo.date} OR ${key} >= ${t.keyValue(lo.key)})`;
}

function keyOf(t: RankedTable, row: { d: unknown; k: unknown }): RankKey {
  return { date: num(row.d), key: t.keyText(row.k) };
}

const forUpdate = (d: DialectSql) => sql.raw(d.name === 'sqlite' ? '' : 'FOR UPDATE');

/**
 * Applies `deltas` in the caller's write transaction (READ COMMITTED or SQLite's single
 * writer). Buckets are locked in key order, so two writers never wait on each other in a cycle
 * here. Call once per transaction, after the rows themselves were written.
 */
export async function applyRankDeltas(trx: Kysely<any>, d: DialectSql, t: RankedTable, deltas: readonly RankDelta[], bucketRows = RANK_BUCKET): Promise<void> {
  const sorted = deltas.filter((x) => x.n !== 0 || x.pub !== 0).sort(compareRankKeys);
  const grown: Array<{ lo: RankKey; next: RankKey | undefined }> = [];
  for (let i = 0; i < sorted.length; ) {
    const bucket = await lockBucket(trx, d, t, sorted[i]!);
    let n = 0;
    let pub = 0;
    for (; i < sorted.length && (bucket.next === undefined || compareRankKeys(sorted[i]!, bucket.next) < 0); i++) {
      n += sorted[i]!.n;
      pub += sorted[i]!.pub;
    }
    const where = sql`list = ${t.list} AND lo_date = ${bucket.lo.date} AND lo_key = ${bucket.lo.key}`;
    await sql`UPDATE mk_ranks SET n = n + ${n}, n_public = n_public + ${pub} WHERE ${where}`.execute(trx);
    if (n > 0) {
      const { rows } = await sql<{ n: unknown }>`SELECT n FROM mk_ranks WHERE ${where}`.execute(trx);
      if (num(rows[0]?.n ?? 0) >= 2 * bucketRows) grown.push(bucket);
    }
  }
  for (const bucket of grown) await split(trx, t, bucket.lo, bucket.next, bucketRows);
}

/** Locks the bucket holding `k`; returns it with the next bucket's first key (none: last). */
async function lockBucket(trx: Kysely<any>, d: DialectSql, t: RankedTable, k: RankKey): Promise<{ lo: RankKey; next: RankKey | undefined }> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const { rows: found } = await sql<{ d: unknown; k: unknown }>`SELECT lo_date AS d, lo_key AS k FROM mk_ranks
      WHERE list = ${t.list} AND lo_date <= ${k.date} AND (lo_date < ${k.date} OR lo_key <= ${k.key})
      ORDER BY lo_date DESC, lo_key DESC LIMIT 1 ${forUpdate(d)}`.execute(trx);
    if (found[0] === undefined) continue; // a rebuild replaced every bucket: look again
    const lo = { date: num(found[0].d), key: text(found[0].k) };
    // A new statement sees what committed while we waited for the lock (a split, a rebuild).
    const { rows: now } = await sql<{ d: unknown; k: unknown }>`SELECT lo_date AS d, lo_key AS k FROM mk_ranks
      WHERE list = ${t.list} AND lo_date >= ${lo.date} AND (lo_date > ${lo.date} OR lo_key >= ${lo.key})
      ORDER BY lo_date, lo_key LIMIT 2`.execute(trx);
    const first = now[0] === undefined ? undefined : { date: num(now[0].d), key: text(now[0].k) };
    const next = now[1] === undefined ? undefined : { date: num(now[1].d), key: text(now[1].k) };
    if (first !== undefined && compareRankKeys(first, lo) === 0 && (next === undefined || compareRankKeys(next, k) > 0)) return { lo, next };
  }
  throw new AdapterError('unavailable', `the ${t.list} position index kept changing or is missing (rebuild it with rebuildRanks)`);
}

function bucketRange(t: RankedTable, lo: RankKey, next: RankKey | undefined): RawBuilder<unknown> {
  const upper = next === undefined ? sql`` : sql`AND NOT (${fromKey(t, next)})`;
  return sql`${fromKey(t, lo)} ${upper}`;
}

async function countRange(trx: Kysely<any>, t: RankedTable, lo: RankKey, next: RankKey | undefined): Promise<{ n: number; pub: number }> {
  const pub = t.publicCol === undefined ? sql`0` : sql`sum(${sql.ref(`o.${t.publicCol}`)})`;
  const { rows } = await sql<{ n: unknown; p: unknown }>`SELECT count(*) AS n, ${pub} AS p FROM ${sql.table(t.table)} o
    WHERE ${bucketRange(t, lo, next)}`.execute(trx);
  return { n: num(rows[0]?.n ?? 0), pub: num(rows[0]?.p ?? 0) };
}

/** The key `offset` rows after `lo` (inclusive) in sort order, if there is one before `next`. */
async function keyAt(trx: Kysely<any>, t: RankedTable, lo: RankKey, next: RankKey | undefined, offset: number): Promise<RankKey | undefined> {
  const date = sql.ref(`o.${t.dateCol}`);
  const key = sql.ref(`o.${t.keyCol}`);
  const { rows } = await sql<{ d: unknown; k: unknown }>`SELECT ${date} AS d, ${key} AS k FROM ${sql.table(t.table)} o
    WHERE ${bucketRange(t, lo, next)} ORDER BY ${date}, ${key} LIMIT 1 OFFSET ${offset}`.execute(trx);
  return rows[0] === undefined ? undefined : keyOf(t, rows[0]);
}

/** Splits the (locked) bucket at `lo` so that its first `bucketRows` rows stay in it. */
async function split(trx: Kysely<any>, t: RankedTable, lo: RankKey, next: RankKey | undefined, bucketRows: number): Promise<void> {
  const at = await keyAt(trx, t, lo, next, bucketRows);
  if (at === undefined) return;
  const moved = await countRange(trx, t, at, next);
  await sql`UPDATE mk_ranks SET n = n - ${moved.n}, n_public = n_public - ${moved.pub}
    WHERE list = ${t.list} AND lo_date = ${lo.date} AND lo_key = ${lo.key}`.execute(trx);
  await sql`INSERT INTO mk_ranks (list, lo_date, lo_key, n, n_public) VALUES (${t.list}, ${at.date}, ${at.key}, ${moved.n}, ${moved.pub})`.execute(trx);
}

/**
 * Recomputes a listing's buckets from its rows (buckets of `bucketRows` rows). Runs after the
 * migration that introduced the index, and after bulk loads that bypass the adapter. Run it in
 * a write transaction: the DELETE first waits for writers holding bucket locks.
 */
export async function rebuildRanks(trx: Kysely<any>, t: RankedTable, bucketRows = RANK_BUCKET): Promise<void> {
  await sql`DELETE FROM mk_ranks WHERE list = ${t.list}`.execute(trx);
  const bounds: RankKey[] = [FIRST];
  for (;;) {
    const at = await keyAt(trx, t, bounds[bounds.length - 1]!, undefined, bucketRows);
    if (at === undefined) break;
    bounds.push(at);
  }
  for (let i = 0; i < bounds.length; i += 200) {
    const values = [];
    for (const [j, lo] of bounds.slice(i, i + 200).entries()) {
      const { n, pub } = await countRange(trx, t, lo, bounds[i + j + 1]);
      values.push(sql`(${t.list}, ${lo.date}, ${lo.key}, ${n}, ${pub})`);
    }
    await sql`INSERT INTO mk_ranks (list, lo_date, lo_key, n, n_public) VALUES ${sql.join(values)}`.execute(trx);
  }
}

/** Whether the listing's buckets exist (the first one is always there once built). */
export async function hasRanks(trx: Kysely<any>, t: RankedTable): Promise<boolean> {
  const { rows } = await sql`SELECT 1 AS one FROM mk_ranks WHERE list = ${t.list} AND lo_date = ${FIRST.date} AND lo_key = ${FIRST.key}`.execute(trx);
  return rows.length > 0;
}

/** What a ranked page covers: every row or the public ones, between two dates. */
export interface RankedSlice {
  public: boolean;
  /** Inclusive lower bound of the date column (fromDate). */
  from?: number;
  /** Exclusive upper bound of the date column (toDate). */
  to?: number;
}

interface Bucket {
  lo: RankKey;
  n: number;
  /** Rows of the slice's class before this bucket. */
  before: number;
}

/** The buckets in order with the class's counts and running sums, or undefined when not built. */
async function loadBuckets(trx: Kysely<any>, t: RankedTable, pub: boolean): Promise<Bucket[] | undefined> {
  const col = sql.raw(pub ? 'n_public' : 'n');
  const { rows } = await sql<{ d: unknown; k: unknown; n: unknown }>`SELECT lo_date AS d, lo_key AS k, ${col} AS n FROM mk_ranks
    WHERE list = ${t.list} ORDER BY lo_date, lo_key`.execute(trx);
  if (rows.length === 0 || num(rows[0]!.d) !== FIRST.date) return undefined;
  let before = 0;
  return rows.map((row) => {
    const bucket = { lo: { date: num(row.d), key: text(row.k) }, n: num(row.n), before };
    before += bucket.n;
    return bucket;
  });
}

/**
 * The table of a walk over the class. MariaDB answers `is_public = 1 AND date >= x` with a
 * lookup on the flag alone (every public row from the first) unless told to range over the
 * whole (flag, date, key) index.
 */
function classTable(d: DialectSql, t: RankedTable, pub: boolean): RawBuilder<unknown> {
  const hint = pub && d.name === 'mysql' && t.publicIndex !== undefined ? sql` FORCE INDEX (${sql.raw(t.publicIndex)})` : sql``;
  return sql`${sql.table(t.table)} o${hint}`;
}

function classCondition(t: RankedTable, pub: boolean): RawBuilder<unknown> {
  return pub && t.publicCol !== undefined ? sql`${sql.ref(`o.${t.publicCol}`)} = 1` : sql`1 = 1`;
}

/** Rows of the class dated before `date`: the buckets before it, plus one bucket's walk. */
async function rankOfDate(trx: Kysely<any>, d: DialectSql, t: RankedTable, buckets: Bucket[], pub: boolean, date: number): Promise<number> {
  let j = 0;
  for (let lo = 0, hi = buckets.length - 1; lo <= hi; ) {
    const mid = (lo + hi) >> 1;
    if (buckets[mid]!.lo.date < date) (j = mid), (lo = mid + 1);
    else hi = mid - 1;
  }
  const b = buckets[j]!;
  const { rows } = await sql<{ n: unknown }>`SELECT count(*) AS n FROM ${classTable(d, t, pub)}
    WHERE ${classCondition(t, pub)} AND ${fromKey(t, b.lo)} AND ${sql.ref(`o.${t.dateCol}`)} < ${date}`.execute(trx);
  return b.before + num(rows[0]?.n ?? 0);
}

/**
 * One page and the exact total of a slice, in the caller's read snapshot, from the position
 * index: the bucket holding position `start` is found by its running sum, then at most one
 * bucket of the (date, key) index is walked and only the page's rows are read (deferred join).
 * Returns undefined when the index was never built (the caller then walks the index itself).
 */
export async function rankedPage<Row>(
  trx: Kysely<any>,
  d: DialectSql,
  t: RankedTable,
  slice: RankedSlice,
  page: { start: number; count: number; columns: string },
): Promise<{ total: number; rows: Row[] } | undefined> {
  const buckets = await loadBuckets(trx, t, slice.public);
  if (buckets === undefined) return undefined;
  const last = buckets[buckets.length - 1]!;
  const low = slice.from === undefined ? 0 : await rankOfDate(trx, d, t, buckets, slice.public, slice.from);
  const high = slice.to === undefined ? last.before + last.n : await rankOfDate(trx, d, t, buckets, slice.public, slice.to);
  const total = Math.max(0, high - low);
  if (page.count === 0 || page.start >= total) return { total, rows: [] };
  const limit = Math.min(page.count, total - page.start);
  const position = low + page.start;
  let j = 0;
  for (let lo = 0, hi = buckets.length - 1; lo <= hi; ) {
    const mid = (lo + hi) >> 1;
    if (buckets[mid]!.before <= position) (j = mid), (lo = mid + 1);
    else hi = mid - 1;
  }
  const b = buckets[j]!;
  const date = sql.ref(`o.${t.dateCol}`);
  const key = sql.ref(`o.${t.keyCol}`);
  const table = sql.table(t.table);
  const { rows } = await sql<Row>`SELECT ${sql.raw(page.columns)} FROM (
      SELECT ${date}, ${key} FROM ${classTable(d, t, slice.public)} WHERE ${classCondition(t, slice.public)} AND ${fromKey(t, b.lo)}
      ORDER BY ${date}, ${key} LIMIT ${limit} OFFSET ${position - b.before}
    ) page JOIN ${table} r ON r.${sql.raw(t.keyCol)} = page.${sql.raw(t.keyCol)}
    ORDER BY page.${sql.raw(t.dateCol)}, page.${sql.raw(t.keyCol)}`.execute(trx);
  return { total, rows };
}
