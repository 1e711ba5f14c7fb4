import { createHash } from 'node:crypto';
import { Writable } from 'node:stream';
import {
  AbortMultipartUploadCommand,
  CompleteMultipartUploadCommand,
  CreateMultipartUploadCommand,
  ListMultipartUploadsCommand,
  UploadPartCommand,
} from '@aws-sdk/client-s3';
import {
  AdapterError,
  type OpenTempOptions,
  type StorageAdapter,
  type StorageCapabilities,
  type StorageKey,
  type TempWrite,
} from '@memberkit/types';
import { S3StoreBase, sendOptions, type S3Entry, type S3ListOptions, type S3ObjectInfo, type S3StoreOptions } from './s3-base.js';
import { isAbortError, isNotFound, s3Error, statusOf } from './s3-common.js';

const MiB = 1024 * 1024;
const OBJECTS = 'objects/';
/** S3's smallest part (all parts but the last), largest part and most parts per upload. */
const MIN_PART = 5 * MiB;
const MAX_PART = 5 * 1024 * MiB;
const MAX_PARTS = 10_000;

export interface S3StorageOptions extends S3StoreOptions {
  /**
   * Bytes per multipart part, at least 5 MiB (S3's minimum). Default 8 MiB. After every
   * 1,000 parts the part size doubles, so an upload of unknown length can reach S3's 5 TiB
   * limit within 10,000 parts.
   */
  partSize?: number;
  /** Parts uploaded at once. Default 4. Memory per write is about (queueSize + 1) × partSize. */
  queueSize?: number;
  /**
   * Told when S3 cleanup fails in a way that leaves storage behind without affecting
   * correctness: today, an AbortMultipartUpload that fails (network, or a server that does
   * not implement it, such as s3rver, which answers 405). Default: `process.emitWarning`.
   * Such leftovers are invisible (never listed or read) but billed until a bucket lifecycle
   * rule `AbortIncompleteMultipartUpload` removes them: configure one (see README).
   */
  onWarning?: (message: string, cause?: unknown) => void;
  /**
   * `open` aborts multipart uploads under this store's `objects/` started longer ago than
   * this (the uploads of a process killed mid-write, which S3 keeps invisibly). Default 24
   * hours: an upload's owner cannot be known from S3, so a live upload of another process
   * sharing the bucket must have had time to finish. A server without ListMultipartUploads
   * (405/501) is skipped silently; other failures are reported to `onWarning`.
   */
  staleUploadMs?: number;
}

/**
 * Managed (writable) storage in an S3 bucket: new content and replicas.
 *
 * Layout: `<prefix>objects/<r[0:2]>/<r>` with `r` the write's id (32 random hex digits drawn
 * by the core), one key per write.
 * Keys returned and accepted are relative to the prefix (`objects/ab/ab12…`), so a store can
 * move to another bucket or prefix without touching the catalogue.
 *
 * Visibility (the contract: nothing is visible until `commit`): `openTemp` starts a multipart
 * upload on the final key and its sink uploads the core's bytes as parts (bounded buffers: at
 * most `queueSize` parts in flight plus the one filling). An S3 multipart upload is invisible to GET, HEAD and LIST until it is completed,
 * so an uncommitted write is never listed nor readable. `commit` completes the upload (one
 * request, no copy, whatever the size) and checks the stored size; the key becomes
 * reachable from DataONE only when the core's catalogue records it. `abort` aborts the
 * upload. Because the key is fixed when the upload starts, it is the write's id rather than
 * derived from the committed name: the name (PID) never appears in a key
 * and every write gets a key of its own, so undoing one write never removes another's bytes.
 *
 * Integrity: every part is sent with Content-MD5, so S3 rejects a part damaged in transit;
 * after completion the object's size is checked against the bytes hashed.
 *
 * Keys MUST be under `objects/`, without empty, `.` or `..` segments, control characters or a
 * leading `/`; anything else is refused with kind 'invalid'. Errors: throttling, 5xx and
 * network failures are 'unavailable'; access denied and a missing bucket are 'internal' with a
 * message naming the cause.
 */
export class S3StorageAdapter extends S3StoreBase implements StorageAdapter {
  readonly capabilities: StorageCapabilities = { write: true, delete: true, list: true, range: true, nativeChecksums: [] };
  readonly partSize: number;
  readonly queueSize: number;
  private readonly warn: (message: string, cause?: unknown) => void;
  private readonly staleUploadMs: number;

  constructor(options: S3StorageOptions) {
    super(options);
    this.staleUploadMs = options.staleUploadMs ?? 24 * 3600_000;
    this.partSize = options.partSize ?? 8 * MiB;
    this.queueSize = options.queueSize ?? 4;
    if (!Number.isInteger(this.partSize) || this.partSize < MIN_PART || this.partSize > MAX_PART) throw new AdapterError('invalid', 'partSize must be an integer from 5 MiB to 5 GiB');
    if (!Number.isInteger(this.queueSize) || this.queueSize < 1) throw new AdapterError('invalid', 'queueSize must be a positive integer');
    this.warn = options.onWarning ?? ((message, cause) => process.emitWarning(cause instanceof Error ? `${message}: ${cause.message}` : message, 'MemberkitS3Warning'));
  }

  override async open(): Promise<void> {
    await super.open();
    await this.abortStaleUploads(this.staleUploadMs);
  }

  /**
   * Aborts the multipart uploads under `objects/` initiated more than `olderThanMs` ago (crash
   * leftovers: invisible, but stored and billed). At most 10 listing pages per call. Never
   * throws: a failure is reported to `onWarning`. Returns how many were aborted.
   */
  async abortStaleUploads(olderThanMs: number): Promise<number> {
    const limit = Date.now() - olderThanMs;
    let aborted = 0;
    let keyMarker: string | undefined;
    let uploadIdMarker: string | undefined;
    try {
      for (let page = 0; page < 10; page++) {
        const r = await this.client.send(new ListMultipartUploadsCommand({
          Bucket: this.bucket,
          Prefix: this.prefix + OBJECTS,
          ...(keyMarker !== undefined ? { KeyMarker: keyMarker } : {}),
          ...(uploadIdMarker !== undefined ? { UploadIdMarker: uploadIdMarker } : {}),
        }));
        for (const u of r.Uploads ?? []) {
          if (!u.Key || !u.UploadId || !u.Initiated || u.Initiated.getTime() >= limit) continue;
          await this.abortUpload(u.Key, u.UploadId);
          aborted++;
        }
        if (!r.IsTruncated) break;
        keyMarker = r.NextKeyMarker;
        uploadIdMarker = r.NextUploadIdMarker;
      }
    } catch (e) {
      // A server that cannot list uploads (s3rver: 405) cannot abort them either; nothing to do.
      const status = statusOf(e);
      if (status === 405 || status === 501) return aborted;
      const what = (e as { name?: string }).name ?? String(status ?? 'error');
      this.warn(`could not list the incomplete multipart uploads of ${this.bucket} (${what}); leftovers of a crash stay until a lifecycle rule (AbortIncompleteMultipartUpload) removes them`, e);
    }
    return aborted;
  }

  async stat(key: StorageKey, options?: { signal?: AbortSignal }): Promise<S3ObjectInfo | undefined> {
    const info = await this.head(key, options);
    if (info === undefined) return undefined;
    // No native checksums: multipart ETags are not digests of the bytes.
    delete info.md5;
    return info;
  }

  async delete(key: StorageKey, options?: { signal?: AbortSignal }): Promise<void> {
    await this.deleteKey(key, options?.signal);
  }

  /** Every committed key (under `objects/`, or under `prefix` within it), one page at a time. */
  async *list(options?: S3ListOptions): AsyncGenerator<S3Entry> {
    const prefix = options?.prefix ?? OBJECTS;
    const under = prefix.startsWith(OBJECTS) ? prefix : OBJECTS.startsWith(prefix) ? OBJECTS : undefined;
    if (under === undefined) return;
    yield* this.listUnder(under, options);
  }

  protected override checkStoreKey(key: StorageKey): string {
    const k = super.checkStoreKey(key);
    if (!k.startsWith(OBJECTS) || k.length === OBJECTS.length) throw new AdapterError('invalid', `a storage key must be under ${OBJECTS}`);
    return k;
  }

  async openTemp(options: OpenTempOptions): Promise<TempWrite> {
    const signal = options.signal;
    signal?.throwIfAborted();
    if (!/^[0-9a-f]{32}$/.test(options.id)) throw new AdapterError('invalid', 'a write id is 32 lower-case hex digits');
    const key = `${OBJECTS}${options.id.slice(0, 2)}/${options.id}`;
    const s3Key = this.prefix + key;
    let uploadId: string;
    try {
      const r = await this.client.send(new CreateMultipartUploadCommand({ Bucket: this.bucket, Key: s3Key, ContentType: 'application/octet-stream' }), sendOptions(signal));
      if (!r.UploadId) throw new AdapterError('internal', 'write: S3 returned no UploadId');
      uploadId = r.UploadId;
    } catch (e) {
      if (isAbortError(e, signal)) throw signal?.reason ?? e;
      throw s3Error(e, 'write', this.bucket);
    }
    const sink = new PartUploader(this, s3Key, uploadId, signal);
    return {
      sink,
      commit: (_name, o) => this.completeUpload(key, uploadId, sink.parts(), sink.size, o?.signal),
      abort: async () => {
        sink.destroy();
        await sink.settled();
        await this.abortUpload(s3Key, uploadId);
      },
    };
  }

  /** Bytes per part for part number `n`: doubles every 1,000 parts, up to S3's largest part. */
  partSizeOf(n: number): number {
    return Math.min(MAX_PART, this.partSize * 2 ** Math.floor((n - 1) / 1000));
  }

  /** @internal Uploads one part (with Content-MD5); returns its ETag. */
  async uploadPart(s3Key: string, uploadId: string, partNumber: number, body: Buffer, signal: AbortSignal): Promise<string> {
    try {
      const r = await this.client.send(new UploadPartCommand({
        Bucket: this.bucket,
        Key: s3Key,
        UploadId: uploadId,
        PartNumber: partNumber,
        Body: body,
        ContentLength: body.length,
        ContentMD5: createHash('md5').update(body).digest('base64'),
      }), { abortSignal: signal });
      if (!r.ETag) throw new AdapterError('internal', `write: S3 returned no ETag for part ${partNumber}`);
      return r.ETag;
    } catch (e) {
      if (isAbortError(e, signal)) throw signal.reason ?? e;
      throw s3Error(e, 'write', this.bucket);
    }
  }

  /** Aborts a multipart upload. Never throws: a failure is reported to `onWarning`. */
  async abortUpload(s3Key: string, uploadId: string): Promise<void> {
    try {
      await this.client.send(new AbortMultipartUploadCommand({ Bucket: this.bucket, Key: s3Key, UploadId: uploadId }));
    } catch (e) {
      if (isNotFound(e)) return;
      const what = (e as { name?: string }).name ?? String(statusOf(e) ?? 'error');
      this.warn(`could not abort the multipart upload of ${s3Key} in ${this.bucket} (${what}); its parts are invisible but stay stored until a lifecycle rule (AbortIncompleteMultipartUpload) removes them`, e);
    }
  }

  /** Completes the upload of a finished write. */
  private async completeUpload(key: StorageKey, uploadId: string, parts: Array<{ PartNumber: number; ETag: string }>, size: number, signal: AbortSignal | undefined): Promise<StorageKey> {
    signal?.throwIfAborted();
    const s3Key = this.prefix + key;
    try {
      await this.client.send(new CompleteMultipartUploadCommand({ Bucket: this.bucket, Key: s3Key, UploadId: uploadId, MultipartUpload: { Parts: parts } }), sendOptions(signal));
    } catch (e) {
      if (isAbortError(e, signal)) throw signal?.reason ?? e;
      // A lost response to a completion that did happen: the upload is gone, the object is there.
      if (!(isNotFound(e) && (await this.head(key))?.size === size)) {
        throw isNotFound(e) ? new AdapterError('internal', `commit: the multipart upload of ${key} no longer exists (a lifecycle rule may have aborted it)`, { cause: e }) : s3Error(e, 'commit', this.bucket);
      }
    }
    const stored = await this.head(key);
    if (stored?.size !== size) {
      await this.deleteKey(key, undefined).catch(() => undefined);
      throw new AdapterError('internal', `commit: S3 stored ${stored?.size ?? 'no'} bytes for ${key}, ${size} were written`);
    }
    return key;
  }

}

/**
 * The sink of a write: copies the core's bytes into part buffers (a source may reuse its
 * chunks' memory) and uploads each full part, at most `queueSize` at once; a write waits
 * while the queue is full. Ending it uploads the last (possibly short, or for an empty
 * object the only, empty) part and waits for every part.
 */
class PartUploader extends Writable {
  size = 0;
  private readonly done: Array<{ PartNumber: number; ETag: string }> = [];
  private readonly inflight = new Set<Promise<void>>();
  private readonly cancel = new AbortController();
  private readonly partSignal: AbortSignal;
  private failure: { error: unknown } | undefined;
  private partNumber = 0;
  private buffer: Buffer;
  private filled = 0;

  constructor(
    private readonly store: S3StorageAdapter,
    private readonly s3Key: string,
    private readonly uploadId: string,
    private readonly signal: AbortSignal | undefined,
  ) {
    super({ highWaterMark: 0 });
    this.partSignal = signal ? AbortSignal.any([signal, this.cancel.signal]) : this.cancel.signal;
    this.buffer = Buffer.allocUnsafe(store.partSizeOf(1));
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.take(chunk).then(() => callback(), (e: unknown) => callback(e as Error));
  }

  private async take(chunk: Buffer): Promise<void> {
    if (this.failure) throw this.failure.error;
    this.size += chunk.byteLength;
    let offset = 0;
    while (offset < chunk.byteLength) {
      const n = Math.min(this.buffer.length - this.filled, chunk.byteLength - offset);
      this.buffer.set(chunk.subarray(offset, offset + n), this.filled);
      this.filled += n;
      offset += n;
      if (this.filled === this.buffer.length) {
        await this.startPart(this.buffer);
        this.buffer = Buffer.allocUnsafe(this.store.partSizeOf(this.partNumber + 1));
        this.filled = 0;
      }
    }
  }

  private async startPart(body: Buffer): Promise<void> {
    while (this.inflight.size >= this.store.queueSize) await Promise.race(this.inflight);
    if (this.failure) throw this.failure.error;
    const n = ++this.partNumber;
    if (n > MAX_PARTS) throw new AdapterError('invalid', 'the object is larger than S3 allows in one upload');
    const job: Promise<void> = this.store.uploadPart(this.s3Key, this.uploadId, n, body, this.partSignal).then(
      (etag) => {
        this.done.push({ PartNumber: n, ETag: etag });
      },
      (e: unknown) => {
        this.failure ??= { error: this.signal?.aborted ? this.signal.reason : e };
        this.cancel.abort();
      },
    ).finally(() => this.inflight.delete(job));
    this.inflight.add(job);
  }

  override _final(callback: (error?: Error | null) => void): void {
    const finish = async (): Promise<void> => {
      // The last part may be short; an empty object is one empty part.
      if (this.filled > 0 || this.partNumber === 0) await this.startPart(this.buffer.subarray(0, this.filled));
      await Promise.all(this.inflight);
      if (this.failure) throw this.failure.error;
    };
    finish().then(() => callback(), (e: unknown) => callback(e as Error));
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.cancel.abort();
    callback(error);
  }

  /** Resolves when no part upload is running any more. */
  async settled(): Promise<void> {
    await Promise.allSettled([...this.inflight]);
  }

  /** The uploaded parts in order (complete once the sink finished). */
  parts(): Array<{ PartNumber: number; ETag: string }> {
    return [...this.done].sort((a, b) => a.PartNumber - b.PartNumber);
  }
}

/** A managed S3 store. No I/O until `open()`, which checks the bucket. */
export function createS3Storage(options: S3StorageOptions): S3StorageAdapter {
  return new S3StorageAdapter(options);
}
