import type { Readable, Writable } from 'node:stream';
import type { ChecksumAlgorithmName } from '../checksum.js';

/** Opaque location of an object's bytes in a store (a path, an S3 key, a column value). Never a raw PID. */
export type StorageKey = string;

/**
 * What a StorageAdapter declares. A declared capability is an obligation: the testkit runs
 * its suite, and the core relies on it. Each flag says its default and what the core does
 * when it is off.
 */
export interface StorageCapabilities {
  /**
   * `openTemp` and `delete` are implemented (managed mode). Default false: read-only, in
   * place; the core refuses create, update and replicate with NotImplemented.
   */
  write: boolean;
  /**
   * `delete` is implemented. Default false. Off: the core still removes the catalogue entry
   * of a deleted object and leaves its bytes where they are (a wrapped archive is never written).
   */
  delete: boolean;
  /** `list` is implemented. Default false. Off: the core cannot scan the store (wrap mode refuses it with 'unsupported'). */
  list: boolean;
  /**
   * `read` honours `range`. Default false. Off: the core never passes a range; it reads
   * from the start, skips to the range and stops after its last byte, so ranged GETs still work.
   */
  range: boolean;
  /**
   * Algorithms whose digests `stat` returns without reading the bytes. Default empty: the
   * core computes a digest from the bytes when it needs one, and caches it.
   */
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

/**
 * An upload the core received: bytes in the store's temporary area, counted and hashed by the
 * core as they flowed, not yet visible. The core owns this state machine (commit once, abort
 * idempotent and a no-op after commit, a key unique to the write); adapters only implement
 * TempWrite.
 */
export interface PendingWrite {
  /** Bytes received. */
  readonly size: number;
  /** Hex digests (lower case) of every algorithm the node computes. */
  readonly checksums: Readonly<Record<ChecksumAlgorithmName, string>>;
  /** Make the bytes durable and visible under a key unique to this write; a second call returns the same key. */
  commit(name: string, options?: { signal?: AbortSignal }): Promise<StorageKey>;
  /** Discard the bytes. Idempotent; never throws; a no-op after commit. */
  abort(): Promise<void>;
}

/**
 * Bytes on their way into a store's temporary area (StorageAdapter.openTemp). The core
 * hashes, counts and limits the bytes; the adapter only keeps them until `commit` or `abort`.
 */
export interface TempWrite {
  /**
   * Where the core writes the bytes, in order, honouring backpressure. The core ends it once
   * every byte arrived: before it emits 'finish' the sink MUST hold every byte, either
   * durable in the temporary area (fsync or the backend's equivalent) or, for a small
   * write, in memory for `commit` to write durably. On failure the core destroys it and
   * then calls `abort`. Errors of the backend surface as AdapterErrors from the sink.
   */
  readonly sink: Writable;
  /**
   * Make the finished bytes durable under a new key derived from `name` (the PID: hashed or
   * ignored, never used as a path as is) and from the write's `id` (openTemp), so that no
   * other write can produce the same key and undoing one write never removes another's
   * bytes. Durable on return. Called at most once at a time, only after the sink finished;
   * may be called again after it failed.
   */
  commit(name: string, options?: { signal?: AbortSignal }): Promise<StorageKey>;
  /** Remove the temporary bytes. Called at most once, never after a successful commit; may come before the sink finished. */
  abort(): Promise<void>;
}

export interface OpenTempOptions {
  /**
   * A fresh identifier of this write (32 lower-case hex digits, unique: the core draws it at
   * random). The key `commit` returns MUST contain it; the core checks that it does.
   */
  id: string;
  signal?: AbortSignal;
}

/**
 * Where bytes live. Keys are opaque; the catalogue (CatalogueAdapter) says which key holds
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
   * A stream of the bytes at `key` (or of `range`, which the core passes only when
   * capabilities.range), or undefined when absent. A range past the end throws kind 'invalid'.
   * `sizeHint` is the size the catalogue records for these bytes, when the caller knows it: an
   * adapter may use it to choose how to read (a small object whole, in one call), never as the
   * answer's size.
   */
  read(key: StorageKey, options?: { range?: ByteRange; signal?: AbortSignal; sizeHint?: number }): Promise<StorageReadResult | undefined>;

  /**
   * A temporary area for one upload; nothing written to it is visible until `commit`.
   * Required when capabilities.write.
   */
  openTemp?(options: OpenTempOptions): Promise<TempWrite>;

  /** Remove the bytes at `key`. Absent keys are not an error. Required when capabilities.delete. */
  delete?(key: StorageKey, options?: { signal?: AbortSignal }): Promise<void>;

  /** Every key under `prefix`, in any order, in constant memory. Required when capabilities.list. */
  list?(options?: { prefix?: string; signal?: AbortSignal }): AsyncIterable<StorageEntry>;
}
