import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import {
  AdapterError,
  CHECKSUM_ALGORITHMS,
  createChecksumHash,
  type ChecksumAlgorithmName,
  type PendingWrite,
  type StorageAdapter,
  type StorageKey,
  type TempWrite,
} from '@memberkit/types';

export interface UploadOptions {
  /** Fail with kind 'invalid' as soon as more than this many bytes arrive. */
  maxBytes?: number;
  signal?: AbortSignal;
}

/**
 * Receive an upload into `storage`'s temporary area: the core counts the bytes, refuses them
 * past `maxBytes`, and computes MD5, SHA-1 and SHA-256 as they flow (HashingSink), without
 * buffering the object. If the source fails, the limit is crossed or the signal aborts, the temporary
 * bytes are removed and the error is rethrown (the source's own error as it is).
 */
export async function receiveUpload(storage: StorageAdapter, source: AsyncIterable<Uint8Array>, options: UploadOptions = {}): Promise<PendingWrite> {
  const { signal, maxBytes } = options;
  if (!storage.capabilities.write || !storage.openTemp) throw new AdapterError('unsupported', 'this storage is read-only: it does not accept uploads');
  signal?.throwIfAborted();
  const id = randomBytes(16).toString('hex');
  const temp = await storage.openTemp({ id, ...(signal ? { signal } : {}) });
  const digest = new HashingSink(temp.sink, maxBytes);
  try {
    await pipeline(source, digest, signal ? { signal } : {});
  } catch (err) {
    if (!temp.sink.destroyed) temp.sink.destroy();
    await temp.abort().catch(() => undefined);
    throw err;
  }
  return new ReceivedUpload(temp, id, digest.size, digest.digests());
}

/** Bytes the core may buffer ahead of the adapter's sink. */
const AHEAD = 256 * 1024;

/**
 * Counts, limits and hashes the bytes on their way into the adapter's sink. Each batch is
 * handed to the sink first and hashed while the sink writes it (its I/O runs off this
 * thread), so hashing and storage overlap; the batch is acknowledged once the sink takes
 * more. Ending it ends the sink and waits until the sink finished (bytes durable).
 */
class HashingSink extends Writable {
  size = 0;
  private readonly hashes = CHECKSUM_ALGORITHMS.map((a) => [a, createChecksumHash(a)] as const);

  constructor(
    private readonly sink: Writable,
    private readonly maxBytes: number | undefined,
  ) {
    super({ highWaterMark: AHEAD });
    sink.on('error', (err) => this.destroy(err));
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
    for (const b of buffers) for (const [, h] of this.hashes) h.update(b);
    if (ready) callback();
    else this.sink.once('drain', () => callback());
  }

  override _final(callback: (error?: Error | null) => void): void {
    if (this.sink.writableFinished) return callback();
    this.sink.once('finish', () => callback());
    this.sink.end();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    if (!this.sink.destroyed && !this.sink.writableFinished) this.sink.destroy(error ?? undefined);
    callback(error);
  }

  digests(): Record<ChecksumAlgorithmName, string> {
    const out = {} as Record<ChecksumAlgorithmName, string>;
    for (const [a, h] of this.hashes) out[a] = h.digest('hex');
    return out;
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
