import type { ChecksumAlgorithmName, StorageAdapter, StorageEntry, StorageKey } from '@memberkit/types';

/** What `digest` found: the checksum of the bytes as they were while read. */
export interface EntryDigest {
  checksum: string;
  size: number;
  /** The entry's version while it was read (undefined: the storage cannot tell). */
  version?: string;
  /** The first bytes, when the read had them anyway (format identification). */
  head?: Uint8Array;
  /** Media type the storage records (S3 Content-Type). */
  mediaType?: string;
}

/**
 * A StorageAdapter a wrap scanner can walk: `list` is required (capabilities.list); `entry`
 * and `digest` are optional shortcuts an adapter offers when it can do better than `stat`
 * and `read` (the tree storage hashes small files on a worker pool, the bucket storage reads
 * with If-Match on the listed ETag).
 */
export interface WrapStorage extends StorageAdapter {
  list(options?: { prefix?: string; signal?: AbortSignal }): AsyncIterable<StorageEntry>;
  /** The entry of `key` as `list` would give it now, or undefined when absent. */
  entry?(key: StorageKey, options?: { signal?: AbortSignal }): Promise<StorageEntry | undefined>;
  /**
   * The digest of the bytes at `key`, or undefined when absent or changed while read (size or
   * version moved). `expected` is the listed entry: its version, when given, MUST still match.
   * `headBytes`: the scanner wants the first bytes for format identification; an adapter that
   * returns them as `head` (up to that many) spares a second read of the entry.
   */
  digest?(key: StorageKey, algorithm: ChecksumAlgorithmName, options?: { signal?: AbortSignal; expected?: StorageEntry; headBytes?: number }): Promise<EntryDigest | undefined>;
}

/** Storage that can be wrapped: it declares and implements `list`. */
export function isWrapStorage(storage: StorageAdapter): storage is WrapStorage {
  return storage.capabilities.list && typeof storage.list === 'function';
}

/**
 * The default PID of a wrapped entry: its key (relative path), with whitespace, control
 * characters and `%` percent-encoded, since identifiers may not hold whitespace. Encoding `%`
 * too keeps the rule one-to-one: two different keys never share a PID.
 */
export function pidFromPath(relativePath: string, prefix = ''): string {
  // eslint-disable-next-line no-control-regex
  return prefix + relativePath.replace(/[%\s\u0000-\u001f\u007f]/gu, (c) => encodeURIComponent(c));
}
