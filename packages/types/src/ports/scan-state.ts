/**
 * What a wrap scanner remembers about each wrapped root (a tree, a bucket prefix), kept in the
 * catalogue's own store so that every process scanning one root shares it.
 */

/** One storage entry as the scanner last recorded it. */
export interface ScanStateRow {
  /** Storage key (relative path, S3 key under the prefix). */
  key: string;
  pid: string;
  size: number;
  /** The entry's `version` (mtime in ms, ETag) when the checksum was computed. */
  version: string;
  algorithm: string;
  checksum: string;
  /** formatId the scanner identified (null: recorded before identification by content). */
  format: string | null;
  /** Last scan that saw the entry. */
  scan: number;
}

/** A generated resource map's bytes (wrap.datasets), under a storage key no wrapped entry can have. */
export interface DatasetMapRow {
  key: string;
  pid: string;
  folder: string;
  /** The membership (metadata and data PIDs) the map was generated from. */
  members: string;
  bytes: Uint8Array;
  /** Epoch ms. */
  created: number;
}

/**
 * Scan state per wrapped root, and the lease that lets one scanner at a time scan a root
 * across processes. Every method MAY be called from several processes at once; writes are
 * atomic per call. Errors: kind 'unavailable' when the store cannot be reached.
 */
export interface ScanStateStore {
  open?(): Promise<void>;
  close?(): Promise<void>;

  /** The highest scan number recorded for `root` (0 when none). */
  lastScan(root: string): Promise<number>;
  /** True when any entry of `root` is recorded. */
  hasEntries(root: string): Promise<boolean>;
  /** The recorded rows of these keys (absent keys are missing from the map). */
  getMany(root: string, keys: readonly string[]): Promise<Map<string, ScanStateRow>>;
  /**
   * Records rows (insert or replace by key). `scan` MUST never move back: the stored scan
   * number becomes the greater of the two, so a concurrent scan's mark is kept.
   */
  put(root: string, rows: readonly ScanStateRow[]): Promise<void>;
  /** Marks keys as seen by `scan` (never moving a mark back). */
  touch(root: string, keys: readonly string[], scan: number): Promise<void>;
  /** Up to `limit` rows with a scan number below `scan` and a key after `after`, in key order. */
  unseen(root: string, scan: number, after: string, limit: number): Promise<ScanStateRow[]>;
  /** Forgets keys, only where their scan number is still below `scan` (a concurrent scan saw them since). */
  forget(root: string, keys: readonly string[], scan: number): Promise<void>;
  /** Up to `limit` rows with a key after `after`, in key order. */
  page(root: string, after: string, limit: number): Promise<ScanStateRow[]>;

  /**
   * Takes the lease of `root` for `ttlMs` when it is free, expired or already `holder`'s.
   * True when `holder` holds it afterwards.
   */
  tryAcquire(root: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Extends `holder`'s lease; false when it lost it (expired and taken by another). */
  renew(root: string, holder: string, ttlMs: number): Promise<boolean>;
  /** Gives the lease up (nothing when `holder` does not hold it). */
  release(root: string, holder: string): Promise<void>;

  /** Stores a generated map's bytes; a key already stored is left as it is (bytes never change for a key). */
  putDatasetMap(root: string, row: DatasetMapRow): Promise<void>;
  /** The generated map stored under `key`, if any. */
  datasetMap(key: string): Promise<DatasetMapRow | undefined>;
  /** Folders of `root` that have had a generated map. */
  datasetFolders(root: string): Promise<string[]>;
  /** Removes a generated map's bytes. */
  deleteDatasetMap(key: string): Promise<void>;
}
