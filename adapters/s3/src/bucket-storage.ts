import { type ChecksumAlgorithmName, type StorageAdapter, type StorageCapabilities, type StorageEntry, type StorageKey, type StorageStat } from '@memberkit/types';
import type { StorageReadResult } from '@memberkit/types';
import { digestWithHead } from '@memberkit/science';
import { S3StoreBase, type S3Entry, type S3ListOptions, type S3ReadOptions, type S3StoreOptions } from './s3-base.js';

export interface S3BucketStorageOptions extends S3StoreOptions {
  /**
   * Also publish hidden keys: a segment starting with `.` (`.git/config`, `data/.DS_Store`).
   * Default false, the tree store's rule: hidden keys are absent from `list`, `stat` and `read`.
   */
  includeHidden?: boolean;
}

/** Whether a key has a hidden segment (starts with `.`): the rule both wrap stores share. */
export function isHiddenKey(key: string): boolean {
  return key.split('/').some((segment) => segment.startsWith('.'));
}

/**
 * A read-only StorageAdapter over an existing bucket or prefix ("wrap mode"): the archive's
 * objects are served in place, never copied or modified.
 *
 * Keys are the S3 keys relative to the prefix (`data/2020/a.csv`). Keys that S3 allows but
 * that cannot be storage keys (empty, `.` or `..` segments, a leading `/`, control
 * characters, "directory" markers ending in `/`) are refused with kind 'invalid' by
 * `stat`/`read` and left out of `list` (reported to `onSkip`).
 *
 * Native checksums: MD5, from the ETag, for objects whose ETag is the MD5 of their bytes
 * (uploaded in one part, not encrypted with SSE-KMS or SSE-C). For other objects `stat`
 * returns no checksum (a multipart ETag `…-N` is not a digest); the scanner then computes
 * one by reading the bytes once (`digest`). Listed entries carry the ETag as their `version`
 * but no checksum: a listing does not tell whether SSE-KMS made the ETag something else.
 */
export class S3BucketStorageAdapter extends S3StoreBase implements StorageAdapter {
  readonly capabilities: StorageCapabilities = { write: false, delete: false, list: true, range: true, nativeChecksums: ['MD5'] };
  private readonly includeHidden: boolean;

  constructor(options: S3BucketStorageOptions) {
    super(options);
    this.includeHidden = options.includeHidden ?? false;
  }

  /** The wrapped root's name (`s3://bucket/prefix`), as the scan state knows it. */
  get root(): string {
    return `s3://${this.bucket}/${this.prefix}`;
  }

  async stat(key: StorageKey, options?: { signal?: AbortSignal }): Promise<StorageStat | undefined> {
    if (!this.includeHidden && isHiddenKey(key)) return undefined;
    const info = await this.head(key, options);
    if (info === undefined) return undefined;
    const stat: StorageStat = { size: info.size, modified: info.modified };
    if (info.mediaType !== undefined) stat.mediaType = info.mediaType;
    if (info.md5 !== undefined) stat.checksums = { MD5: info.md5 };
    return stat;
  }

  /** Every object under the prefix (or under `options.prefix` within it), one page at a time; `version` is the ETag. */
  async *list(options?: S3ListOptions): AsyncGenerator<S3Entry & { version: string }> {
    for await (const entry of this.listUnder(options?.prefix ?? '', options)) {
      if (this.includeHidden || !isHiddenKey(entry.key)) yield { ...entry, version: entry.etag };
    }
  }

  /** The object as `list` would give it now (HEAD), or undefined when absent. */
  async entry(key: StorageKey, options?: { signal?: AbortSignal }): Promise<(StorageEntry & { version: string }) | undefined> {
    if (!this.includeHidden && isHiddenKey(key)) return undefined;
    const info = await this.head(key, options);
    return info && { key, size: info.size, modified: info.modified, version: info.etag };
  }

  /**
   * The digest of an object read once, with its first bytes and Content-Type; undefined when
   * absent or changed while read. The GET carries If-Match with the listed ETag (S3 then
   * refuses other bytes) and a HEAD after the read catches servers that ignore it.
   */
  async digest(key: StorageKey, algorithm: ChecksumAlgorithmName, options?: { signal?: AbortSignal; expected?: StorageEntry }): Promise<{ checksum: string; size: number; version: string; head: Uint8Array; mediaType?: string } | undefined> {
    if (!this.includeHidden && isHiddenKey(key)) return undefined;
    const opts = options?.signal ? { signal: options.signal } : {};
    const etag = options?.expected?.version;
    const read = await this.read(key, { ...opts, ...(etag !== undefined ? { ifMatch: etag } : {}) });
    if (read === undefined) return undefined;
    const { checksum, size, head } = await digestWithHead(read.stream, algorithm);
    const after = await this.head(key, opts);
    if (after === undefined || (etag !== undefined && after.etag !== etag) || size !== after.size) return undefined;
    const result: { checksum: string; size: number; version: string; head: Uint8Array; mediaType?: string } = { checksum, size, version: after.etag, head };
    if (after.mediaType !== undefined) result.mediaType = after.mediaType;
    return result;
  }

  override async read(key: StorageKey, options?: S3ReadOptions): Promise<StorageReadResult | undefined> {
    if (!this.includeHidden && isHiddenKey(key)) return undefined;
    return super.read(key, options);
  }
}

/** A read-only store exposing an existing bucket/prefix in place. No I/O until `open()`. */
export function createS3BucketStorage(options: S3BucketStorageOptions): S3BucketStorageAdapter {
  return new S3BucketStorageAdapter(options);
}
