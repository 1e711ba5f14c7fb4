import { Readable, Transform, addAbortSignal, type TransformCallback } from 'node:stream';
import { DeleteObjectCommand, HeadBucketCommand, GetObjectCommand, HeadObjectCommand, paginateListObjectsV2, type S3Client } from '@aws-sdk/client-s3';
import {
  AdapterError,
  type ByteRange,
  type StorageEntry,
  type StorageKey,
  type StorageReadResult,
  type StorageStat,
} from '@memberkit/types';
import { checkKey, checkRange, connect, isAbortError, isNotFound, keyProblem, md5FromEtag, plainEtag, s3Error, statusOf, totalFromContentRange, type S3Connection, type S3ConnectionOptions } from './s3-common.js';

/** What HeadObject says about a key, with the ETag (for caches) and the MD5 when the ETag is one. */
export interface S3ObjectInfo extends StorageStat {
  /** The ETag without quotes. Changes whenever the bytes are replaced (different content). */
  etag: string;
  /** The MD5 the ETag stands for (single-part, not SSE-KMS/SSE-C), lower-case hex. */
  md5?: string;
}

/** A listed key with its ETag. */
export interface S3Entry extends StorageEntry {
  etag: string;
}

export interface S3ListOptions {
  /** Only keys starting with it (relative to the store's prefix). */
  prefix?: string;
  signal?: AbortSignal;
  /** Told about every listed S3 key that cannot be a storage key (and is left out). */
  onSkip?: (key: string, reason: string) => void;
}

export interface S3ReadOptions {
  range?: ByteRange;
  signal?: AbortSignal;
  /** Only read if the ETag is still this one; otherwise resolve undefined (the object changed). */
  ifMatch?: string;
}

/** Options shared by the managed and the wrapping store. */
export interface S3StoreOptions extends S3ConnectionOptions {
  /** Keys per ListObjectsV2 page (1..1000). Default 1000. Memory stays at one page. */
  listPageSize?: number;
}

/** @internal Object calls shared by the managed and the read-only store. */
export abstract class S3StoreBase {
  readonly bucket: string;
  /** Normalised prefix ('' or ending with `/`); storage keys are relative to it. */
  readonly prefix: string;
  protected readonly client: S3Client;
  private readonly ownsClient: boolean;
  protected readonly listPageSize: number;

  constructor(options: S3StoreOptions) {
    const c: S3Connection = connect(options);
    this.client = c.client;
    this.ownsClient = c.ownsClient;
    this.bucket = c.bucket;
    this.prefix = c.prefix;
    const page = options.listPageSize ?? 1000;
    if (!Number.isInteger(page) || page < 1 || page > 1000) throw new AdapterError('invalid', 'listPageSize must be an integer from 1 to 1000');
    this.listPageSize = page;
  }

  /** Checks that the bucket exists and the credentials may use it (HeadBucket). */
  async open(): Promise<void> {
    try {
      await this.client.send(new HeadBucketCommand({ Bucket: this.bucket }));
    } catch (e) {
      if (statusOf(e) === 404) throw new AdapterError('internal', `the bucket ${this.bucket} does not exist`, { cause: e });
      throw s3Error(e, `opening bucket ${this.bucket}`, this.bucket);
    }
  }

  async close(): Promise<void> {
    if (this.ownsClient) this.client.destroy();
  }

  /** Validates `key` for this store (the managed store narrows it further). */
  protected checkStoreKey(key: StorageKey): string {
    return checkKey(key, this.prefix);
  }

  /** HeadObject with the ETag rules applied; undefined when absent. */
  async head(key: StorageKey, options?: { signal?: AbortSignal }): Promise<S3ObjectInfo | undefined> {
    options?.signal?.throwIfAborted();
    const k = this.checkStoreKey(key);
    try {
      const r = await this.client.send(new HeadObjectCommand({ Bucket: this.bucket, Key: this.prefix + k }), sendOptions(options?.signal));
      const info: S3ObjectInfo = { size: r.ContentLength ?? 0, modified: r.LastModified ?? new Date(0), etag: plainEtag(r.ETag) };
      if (r.ContentType) info.mediaType = r.ContentType;
      const md5 = md5FromEtag(r.ETag, { serverSideEncryption: r.ServerSideEncryption, sseCustomerAlgorithm: r.SSECustomerAlgorithm });
      if (md5 !== undefined) info.md5 = md5;
      return info;
    } catch (e) {
      if (isNotFound(e)) return undefined;
      if (isAbortError(e, options?.signal)) throw options?.signal?.reason ?? e;
      throw s3Error(e, 'stat', this.bucket);
    }
  }

  async read(key: StorageKey, options?: S3ReadOptions): Promise<StorageReadResult | undefined> {
    const signal = options?.signal;
    signal?.throwIfAborted();
    const k = this.checkStoreKey(key);
    const range = options?.range;
    checkRange(range);
    let r;
    try {
      r = await this.client.send(new GetObjectCommand({
        Bucket: this.bucket,
        Key: this.prefix + k,
        ...(range ? { Range: `bytes=${range.start}-${range.end ?? ''}` } : {}),
        ...(options?.ifMatch !== undefined ? { IfMatch: `"${options.ifMatch}"` } : {}),
      }), sendOptions(signal));
    } catch (e) {
      if (isNotFound(e)) return undefined;
      if (options?.ifMatch !== undefined && statusOf(e) === 412) return undefined;
      if (isAbortError(e, signal)) throw signal?.reason ?? e;
      throw s3Error(e, 'read', this.bucket);
    }
    const body = r.Body;
    if (!(body instanceof Readable)) {
      (body as { destroy?: () => void } | undefined)?.destroy?.();
      throw new AdapterError('internal', 'read: the S3 client did not return a Node stream');
    }
    const size = range ? totalFromContentRange(r.ContentRange) ?? r.ContentLength ?? 0 : r.ContentLength ?? 0;
    if (range && range.start >= size) {
      // Some servers answer a range on an empty object with 206 instead of 416.
      body.destroy();
      throw new AdapterError('invalid', `range start ${range.start} is past the end of an object of ${size} bytes`);
    }
    const length = range ? Math.min(range.end ?? size - 1, size - 1) - range.start + 1 : size;
    let stream: Readable = body;
    if (range) {
      // Servers that ignore the Range, or part of it, answer with more bytes than asked for
      // (s3rver reads `bytes=0-0` as `bytes=0-`): cut what they sent to exactly the range.
      const sentStart = r.ContentRange ? startFromContentRange(r.ContentRange) : 0;
      const sentLength = r.ContentLength ?? size;
      if (sentStart === undefined || sentStart > range.start) {
        body.destroy();
        throw new AdapterError('internal', `read: the server answered range ${range.start}- with ${r.ContentRange ?? 'no Content-Range'}`);
      }
      if (sentStart !== range.start || sentLength !== length) stream = sliceStream(body, range.start - sentStart, length);
    }
    if (signal) addAbortSignal(signal, stream);
    return { stream, length, size };
  }

  /** Deletes the object at `key`; absent keys are not an error. */
  protected async deleteKey(key: StorageKey, signal: AbortSignal | undefined): Promise<void> {
    signal?.throwIfAborted();
    const k = this.checkStoreKey(key);
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.bucket, Key: this.prefix + k }), sendOptions(signal));
    } catch (e) {
      if (isNotFound(e)) return;
      if (isAbortError(e, signal)) throw signal?.reason ?? e;
      throw s3Error(e, 'delete', this.bucket);
    }
  }

  /**
   * Every key under `this.prefix + listPrefix`, one ListObjectsV2 page at a time (constant
   * memory, whatever the number of keys). Keys that cannot be storage keys go to `onSkip`.
   */
  protected async *listUnder(listPrefix: string, options: S3ListOptions | undefined): AsyncGenerator<S3Entry> {
    const signal = options?.signal;
    signal?.throwIfAborted();
    const pages = paginateListObjectsV2(
      { client: this.client, pageSize: this.listPageSize },
      { Bucket: this.bucket, Prefix: this.prefix + listPrefix },
    );
    try {
      for await (const page of pages) {
        signal?.throwIfAborted();
        for (const o of page.Contents ?? []) {
          if (o.Key === undefined) continue;
          const key = o.Key.slice(this.prefix.length);
          const problem = keyProblem(key, this.prefix);
          if (problem) {
            // A "directory" marker (`dir/`, empty) is an S3 console habit, not an object.
            if (!(key.endsWith('/') && (o.Size ?? 0) === 0)) options?.onSkip?.(key, problem);
            continue;
          }
          yield { key, size: o.Size ?? 0, modified: o.LastModified ?? new Date(0), etag: plainEtag(o.ETag) };
        }
      }
    } catch (e) {
      if (isAbortError(e, signal)) throw signal?.reason ?? e;
      throw s3Error(e, 'list', this.bucket);
    }
  }
}

/** The SDK's per-call options for an optional signal. */
export function sendOptions(signal: AbortSignal | undefined): { abortSignal?: AbortSignal } {
  return signal ? { abortSignal: signal } : {};
}

function startFromContentRange(contentRange: string): number | undefined {
  const m = /^bytes\s+(\d+)-/.exec(contentRange);
  return m ? Number(m[1]) : undefined;
}

/** `take` bytes of `source` after skipping `skip`; the source is destroyed once they are through. */
function sliceStream(source: Readable, skip: number, take: number): Readable {
  let toSkip = skip;
  let left = take;
  const out = new Transform({
    transform(chunk: Buffer, _enc: BufferEncoding, callback: TransformCallback) {
      let c = chunk;
      if (toSkip > 0) {
        const n = Math.min(toSkip, c.length);
        toSkip -= n;
        c = c.subarray(n);
      }
      if (left > 0 && c.length > 0) {
        const piece = c.subarray(0, left);
        left -= piece.length;
        this.push(piece);
      }
      if (left === 0) {
        this.push(null);
        source.unpipe(out);
        source.destroy();
      }
      callback();
    },
  });
  source.on('error', (e) => out.destroy(e));
  out.on('close', () => source.destroy());
  if (take === 0) {
    out.end();
    source.destroy();
  } else {
    source.pipe(out);
  }
  return out;
}
