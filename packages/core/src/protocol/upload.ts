import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import {
  AdapterError,
  type ChecksumAlgorithmName,
  type PendingWrite,
  type StorageAdapter,
  type StorageKey,
  type TempWrite,
} from '@memberkit/types';
import { sharedDigestWorkers, type DigestWorkerPool } from './digest-workers.js';
import { UploadDigests, type UploadChecksums } from './upload-digests.js';

export interface UploadOptions {
  /** Fail with kind 'invalid' as soon as more than this many bytes arrive. */
  maxBytes?: number;
  signal?: AbortSignal;
  /** Where uploads past the first MiB are hashed. Default: the process's pool (sharedDigestWorkers). */
  digestWorkers?: DigestWorkerPool;
}

/**
 * Receive an upload into `storage`'s temporary area: the core counts the bytes, refuses them
 * past `maxBytes`, and computes MD5, SHA-1 and SHA-256 as they flow (HashingSink, on the
 * hashing threads of `digestWorkers` past the first MiB), without buffering the object. If the
 * source fails, the limit is crossed, the signal aborts or a hashing thread dies (AdapterError
 * 'internal'), the temporary bytes are removed and the error is rethrown (the source's own
 * error as it is).
 */
export async function receiveUpload(storage: StorageAdapter, source: AsyncIterable<Uint8Array>, options: UploadOptions = {}): Promise<PendingWrite> {
  const { signal, maxBytes } = options;
  if (!storage.capabilities.write || !storage.openTemp) throw new AdapterError('unsupported', 'this storage is read-only: it does not accept uploads');
  signal?.throwIfAborted();
  // 32 hex digits; randomUUID draws from a cached pool (randomBytes costs a system call each)
  const id = randomUUID().replaceAll('-', '');
  const temp = await storage.openTemp({ id, ...(signal ? { signal } : {}) });
  const digest = new HashingSink(temp.sink, maxBytes, new UploadDigests(options.digestWorkers ?? sharedDigestWorkers()));
  try {
    await pump(source, digest, signal);
  } catch (err) {
    if (!temp.sink.destroyed) temp.sink.destroy();
    await temp.abort().catch(() => undefined);
    throw err;
  }
  return new ReceivedUpload(temp, id, digest.size, digest.digests());
}

/**
 * Writes every chunk of `source` into `sink` honouring its backpressure, ends it and resolves
 * once it finished: stream.pipeline for one iterable and one writable, without the
 * AbortController, abort listeners and DOMException it makes per call (a tenth of a small
 * create's time on the main thread). Rejects as soon as the sink fails or closes early or
 * `signal` aborts (with its reason), whatever the source is doing; the sink is then destroyed
 * and the source's iterator returned.
 */
async function pump(source: AsyncIterable<Uint8Array>, sink: Writable, signal?: AbortSignal): Promise<void> {
  signal?.throwIfAborted();
  // One waiter at a time, failed by the first failure (a Promise.race against a long-lived
  // promise would add a reaction to it per chunk for the whole upload).
  let failure: { error: unknown } | undefined;
  let rejectWaiter: ((error: unknown) => void) | undefined;
  const fail = (error: unknown) => {
    if (failure) return;
    failure = { error };
    rejectWaiter?.(error);
  };
  const wait = <T>(settle: (resolve: (value: T) => void, reject: (error: unknown) => void) => void): Promise<T> =>
    new Promise<T>((resolve, reject) => {
      if (failure) return reject(failure.error);
      rejectWaiter = reject;
      settle(resolve, reject);
    });
  let drained: (() => void) | undefined;
  // The error listener stays: the sink may still emit its error after this returned.
  sink.on('error', fail);
  const onClose = () => {
    if (!sink.writableFinished) fail(new AdapterError('internal', 'the upload stream closed before every byte was stored'));
  };
  const onDrain = () => drained?.();
  const onAbort = () => fail(signal!.reason);
  sink.on('close', onClose);
  sink.on('drain', onDrain);
  signal?.addEventListener('abort', onAbort, { once: true });
  const iterator = source[Symbol.asyncIterator]();
  try {
    for (;;) {
      // (once a failure won, the source's pending read may still reject: handled by `then`)
      const next = await wait<IteratorResult<Uint8Array>>((resolve, reject) => void iterator.next().then(resolve, reject));
      if (next.done) break;
      if (!sink.write(next.value)) await wait<void>((resolve) => (drained = resolve));
    }
    await wait<void>((resolve) => {
      sink.once('finish', resolve);
      sink.end();
    });
  } catch (err) {
    if (!sink.destroyed) sink.destroy(err as Error);
    iterator.return?.()?.catch(() => undefined);
    throw err;
  } finally {
    sink.off('close', onClose);
    sink.off('drain', onDrain);
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Bytes the core may buffer ahead of the adapter's sink. Large enough that a fast client keeps
 * sending while the sink writes and the hashing threads hash: every hand-off wakes another
 * thread, which costs a tenth of a millisecond or more on a virtual machine (a 1 GiB upload
 * went from ~150 to ~200 MiB/s here when this and the file store's batches grew from 256 KiB
 * to 4 MiB). Only a client faster than the storage fills it.
 */
const AHEAD = 4 * 1024 * 1024;

/**
 * Counts, limits and hashes the bytes on their way into the adapter's sink. Each batch is
 * handed to the sink first and hashed while the sink writes it (its I/O runs off this
 * thread; large uploads are hashed on the hashing threads), so hashing and storage overlap;
 * the batch is acknowledged once the sink takes more and the hashing has room for it.
 * Ending it ends the sink and waits until the sink finished (bytes durable) and the digests
 * are known.
 */
class HashingSink extends Writable {
  size = 0;
  #checksums: UploadChecksums | undefined;

  constructor(
    private readonly sink: Writable,
    private readonly maxBytes: number | undefined,
    private readonly hashing: UploadDigests,
  ) {
    super({ highWaterMark: AHEAD });
    sink.on('error', (err) => this.destroy(err));
    hashing.onFailure = (err) => this.destroy(err);
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.batch([chunk], callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: (error?: Error | null) => void): void {
    this.batch(chunks.map((c) => c.chunk), callback);
  }

  private batch(buffers: Buffer[], callback: (error?: Error | null) => void): void {
    let bytes = 0;
    for (const b of buffers) bytes += b.byteLength;
    if (this.maxBytes !== undefined && this.size + bytes > this.maxBytes) {
      callback(new AdapterError('invalid', `the object is larger than the limit of ${this.maxBytes} bytes`));
      return;
    }
    this.size += bytes;
    let ready = true;
    for (const b of buffers) ready = this.sink.write(b);
    let hashed: Promise<void> | undefined;
    try {
      hashed = this.hashing.update(buffers);
    } catch (err) {
      callback(err as Error);
      return;
    }
    if (ready && !hashed) return callback();
    // Acknowledged when both the sink drained and the hashing took the batch.
    let waiting = (ready ? 0 : 1) + (hashed ? 1 : 0);
    const done = () => {
      if (--waiting === 0) callback();
    };
    if (!ready) this.sink.once('drain', done);
    hashed?.then(done, (err: Error) => callback(err));
  }

  override _final(callback: (error?: Error | null) => void): void {
    const stored = new Promise<void>((resolve) => {
      if (this.sink.writableFinished) return resolve();
      this.sink.once('finish', () => resolve());
      this.sink.end();
    });
    Promise.all([this.hashing.end(), stored]).then(([checksums]) => {
      this.#checksums = checksums;
      callback();
    }, (err: Error) => callback(err));
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.hashing.abort();
    if (!this.sink.destroyed && !this.sink.writableFinished) this.sink.destroy(error ?? undefined);
    callback(error);
  }

  digests(): Record<ChecksumAlgorithmName, string> {
    if (!this.#checksums) throw new Error('the digests are known once the upload ended');
    return this.#checksums;
  }
}

/**
 * The pending-write state machine, once for every adapter: commit happens once (a second
 * call gets the same key; a failed commit may be retried), abort is idempotent and a no-op
 * after commit (an abort during a commit waits: the commit wins and its caller owns the key),
 * and a committed key must name this write alone.
 */
class ReceivedUpload implements PendingWrite {
  private state: 'pending' | 'committed' | 'aborted' = 'pending';
  private committing: Promise<StorageKey> | undefined;

  constructor(
    private readonly temp: TempWrite,
    private readonly id: string,
    readonly size: number,
    readonly checksums: Readonly<Record<ChecksumAlgorithmName, string>>,
  ) {}

  commit(name: string, options?: { signal?: AbortSignal }): Promise<StorageKey> {
    if (this.committing) return this.committing;
    if (this.state === 'aborted') return Promise.reject(new AdapterError('invalid', 'this write was aborted'));
    this.committing = this.temp.commit(name, options).then(
      (key) => {
        if (!key.includes(this.id)) throw new AdapterError('internal', `the storage committed a write under key '${key}', which does not contain the write's id: keys must be unique to a write`);
        this.state = 'committed';
        return key;
      },
      (err: unknown) => {
        this.committing = undefined;
        throw err;
      },
    );
    return this.committing;
  }

  async abort(): Promise<void> {
    if (this.state !== 'pending') return;
    if (this.committing) {
      await this.committing.catch(() => undefined);
      if ((this.state as string) === 'committed') return;
    }
    this.state = 'aborted';
    await this.temp.abort().catch(() => undefined);
  }
}
