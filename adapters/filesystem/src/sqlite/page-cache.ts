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
