import type { Readable } from 'node:stream';
import type { ChecksumAlgorithmName } from '../checksum.js';

/** Opaque location of an object's bytes in a store (a path, an S3 key, a column value). Never a raw PID. */
export type StorageKey = string;

/**
 * What a StorageAdapter declares. A declared capability is an obligation: the testkit runs
 * its suite, and the core relies on it. Absent capabilities are emulated by the core where
 * safe (checksums computed while streaming) and otherwise refused with NotImplemented.
 */
export interface StorageCapabilities {
  /** `write` and `delete` are implemented (managed mode). Default false: read-only, in place. */
  write: boolean;
  /** `delete` is implemented. */
  delete: boolean;
  /** `list` is implemented (used by scans and sweeps, never on a request path). */
  list: boolean;
  /** `read` honours `range`. When false the core streams from the start and skips. */
  range: boolean;
  /** Algorithms whose digests `stat` returns without reading the bytes. */
  nativeChecksums: readonly ChecksumAlgorithmName[];
}

export interface StorageStat {
  size: number;
  /** Last modification of the bytes. */
  modified: Date;
  /** Digests known without reading the bytes (only for nativeChecksums). */
  checksums?: Partial<Record<ChecksumAlgorithmName, string>>;
  /** Media type recorded by the store, when it keeps one (S3 Content-Type). */
  mediaType?: string;
}

/** Inclusive byte range, like HTTP's `bytes=start-end`; `end` omitted means to the last byte. */
export interface ByteRange {
  start: number;
  end?: number;
}

export interface StorageReadResult {
  /** The bytes (the range only, when one was asked for). The caller MUST consume or destroy it. */
  stream: Readable;
  /** Number of bytes `stream` will deliver. */
  length: number;
  /** Size of the whole object. */
  size: number;
}

export interface StorageEntry {
  key: StorageKey;
  size: number;
  modified: Date;
  /**
   * What changes whenever the bytes may have changed (a file's mtime in ms, an S3 ETag).
   * Scans compare it with the version they hashed: an unchanged version is never read again.
   * Absent: the scan hashes the entry every time.
   */
  version?: string;
  /** Digests known from the listing without reading the bytes (S3 single-part ETag: MD5). */
  checksums?: Partial<Record<ChecksumAlgorithmName, string>>;
}

/** Bytes written to the store's temporary area, hashed as they flowed, not yet visible. */
export interface PendingWrite {
  /** Bytes received. */
  readonly size: number;
  /** Hex digests (lower case) of every algorithm the node computes. */
  readonly checksums: Readonly<Record<ChecksumAlgorithmName, string>>;
  /**
   * Make the bytes durable under a new key derived from `name` (the PID; hashed, never used
   * as a path as is). Each commit MUST produce a key no other write produced, so that a
   * caller undoing its own write can never remove another's bytes. Durable on return
   * (fsync or the backend's equivalent).
   */
  commit(name: string, options?: { signal?: AbortSignal }): Promise<StorageKey>;
  /** Discard the bytes. Idempotent; never throws for an already discarded write; a no-op after commit. */
  abort(): Promise<void>;
}

export interface WriteOptions {
  /** Fail with kind 'invalid' as soon as more than this many bytes arrive. */
  maxBytes?: number;
  signal?: AbortSignal;
}

/**
 * Where bytes live. Keys are opaque; the catalogue (MetadataAdapter) says which key holds
 * which object. Implementations MUST NOT do I/O in constructors (use `open`), and MUST
 * reject keys that would escape their root (path traversal) with kind 'invalid'.
 */
export interface StorageAdapter {
  readonly capabilities: StorageCapabilities;
  open?(): Promise<void>;
  close?(): Promise<void>;

  /** Size and dates of the bytes at `key`, or undefined when absent. */
  stat(key: StorageKey, options?: { signal?: AbortSignal }): Promise<StorageStat | undefined>;

  /**
   * A stream of the bytes at `key` (or of `range`), or undefined when absent.
   * A range past the end throws kind 'invalid'.
   */
  read(key: StorageKey, options?: { range?: ByteRange; signal?: AbortSignal }): Promise<StorageReadResult | undefined>;

  /**
   * Spool `source` to the temporary area, computing MD5, SHA-1 and SHA-256 while it flows,
   * without buffering it whole. Nothing is visible until `commit`. If `source` errors or
   * the signal aborts, the temporary bytes are removed and the error is rethrown.
   * Required when capabilities.write.
   */
  write?(source: AsyncIterable<Uint8Array>, options?: WriteOptions): Promise<PendingWrite>;

  /** Remove the bytes at `key`. Absent keys are not an error. Required when capabilities.delete. */
  delete?(key: StorageKey, options?: { signal?: AbortSignal }): Promise<void>;

  /** Every key under `prefix`, in any order, in constant memory. Required when capabilities.list. */
  list?(options?: { prefix?: string; signal?: AbortSignal }): AsyncIterable<StorageEntry>;
}
