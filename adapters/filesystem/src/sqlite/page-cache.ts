import { expandWhere, SHALLOW_OFFSET, type SqlFilter } from './sql-filter.js';
import type { SqliteStore } from './sqlite-store.js';

/**
 * What a paged query learnt about one filter at one database version: its exact total, and
 * where the page it returned ended, so that the next page (start = previous start + count,
 * how Coordinating Nodes harvest) continues from that row in the listing index instead of
 * counting and skipping `start` rows again. Purely a cache: an entry is used only while the
 * database is byte-for-byte the same version it was computed at.
 */
export interface PageMemo {
  version: string;
  total: number;
  /** The ordered position after the last row returned, and the offset it corresponds to. */
  next?: { start: number; order: number; id: string | number };
}

const MAX_ENTRIES = 64;

/**
 * The version of the snapshot the current read transaction sees: `data_version` changes when
 * another connection commits, `total_changes()` when this one writes. MUST be called inside
 * the read transaction; the statement reads `table`, which starts the snapshot first.
 */
export function snapshotVersion(store: SqliteStore, table: 'objects' | 'events'): string {
  const sql = `SELECT total_changes() AS c, (SELECT data_version FROM pragma_data_version()) AS v, (SELECT 1 FROM ${table} LIMIT 1) AS t`;
  const row = store.statement<{ c: number; v: number }>(sql).get();
  return `${row?.v ?? 0}:${row?.c ?? 0}`;
}

/** A small LRU of PageMemo by filter (the WHERE text and its parameters). */
export class PageCache {
  readonly #entries = new Map<string, PageMemo>();

  get(key: string, version: string): PageMemo | undefined {
    const memo = this.#entries.get(key);
    if (memo === undefined) return undefined;
    if (memo.version !== version) {
      this.#entries.delete(key);
      return undefined;
    }
    this.#entries.delete(key);
    this.#entries.set(key, memo);
    return memo;
  }

  set(key: string, memo: PageMemo): void {
    this.#entries.delete(key);
    this.#entries.set(key, memo);
    if (this.#entries.size > MAX_ENTRIES) this.#entries.delete(this.#entries.keys().next().value as string);
  }
}

/** How a listing table is paged: its listing order (order column, then id) and what a page returns. */
export interface PagedTable {
  table: 'objects' | 'events';
  /** Alias of the table in the filter's conditions ('o', 'e'). */
  alias: string;
  orderColumn: string;
  idColumn: string;
  /** Column holding the PID, for the readableBy expansion. */
  pidColumn: string;
  /** Columns of the page's rows, from the table aliased `r`. */
  select: string;
  /** Label of the read transaction (for errors). */
  what: string;
}

/**
 * One page of a listing table in its order, with the exact total, in one read snapshot. The
 * page's keys come from a walk of the listing index (deferred join: OFFSET never touches
 * table rows); while the database is unchanged, the total of a filter is remembered and the
 * page after the previous one continues from its last row (keyset) instead of skipping.
 */
export function pagedQuery<Row>(store: SqliteStore, cache: PageCache, t: PagedTable, filter: SqlFilter, start: number, count: number): { total: number; rows: Row[] } {
  const where = filter.conditions.length > 0 ? `WHERE ${filter.conditions.join(' AND ')}` : '';
  const cacheKey = JSON.stringify([where, filter.params]);
  const { alias: a, orderColumn: order, idColumn: id } = t;
  return store.transaction('deferred', t.what, () => {
    const version = snapshotVersion(store, t.table);
    const memo = cache.get(cacheKey, version);
    let total = memo?.total;
    if (total === undefined) {
      total = store.statement<{ n: number }>(`SELECT count(*) AS n FROM ${t.table} ${a} ${expandWhere(where, t.pidColumn, 'in')}`).get(...filter.params)?.n ?? 0;
    }
    if (count === 0 || start >= total) {
      cache.set(cacheKey, { version, total, ...(memo?.next ? { next: memo.next } : {}) });
      return { total, rows: [] };
    }
    const next = memo?.next?.start === start && start > 0 ? memo.next : undefined;
    const page = (pageWhere: string, form: 'exists' | 'in', tail: string) =>
      `SELECT ${t.select}, page.${order} AS page_order, page.${id} AS page_id
       FROM (SELECT ${a}.${id}, ${a}.${order} FROM ${t.table} ${a} ${expandWhere(pageWhere, t.pidColumn, form)}
             ORDER BY ${a}.${order}, ${a}.${id} ${tail}) AS page
       JOIN ${t.table} r ON r.${id} = page.${id}
       ORDER BY page.${order}, page.${id}`;
    let rows: Array<Row & { page_order: number; page_id: string | number }>;
    if (next) {
      const after = `(${a}.${order}, ${a}.${id}) > (?, ?)`;
      rows = store.statement<Row & { page_order: number; page_id: string | number }>(page(where === '' ? `WHERE ${after}` : `${where} AND ${after}`, 'exists', 'LIMIT ?')).all(...filter.params, next.order, next.id, count);
    } else {
      rows = store.statement<Row & { page_order: number; page_id: string | number }>(page(where, start < SHALLOW_OFFSET ? 'exists' : 'in', 'LIMIT ? OFFSET ?')).all(...filter.params, count, start);
    }
    const last = rows[rows.length - 1];
    cache.set(cacheKey, { version, total, ...(last ? { next: { start: start + rows.length, order: last.page_order, id: last.page_id } } : {}) });
    return { total, rows };
  });
}
