import { randomBytes } from 'node:crypto';
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
 * past `maxBytes`, and computes MD5, SHA-1 and SHA-256 as they flow (each chunk is hashed
 * while the sink writes the previous ones, so disk and hashing overlap), without buffering
 * the object. If the source fails, the limit is crossed or the signal aborts, the temporary
 * bytes are removed and the error is rethrown (the source's own error as it is).
 */
export async function receiveUpload(storage: StorageAdapter, source: AsyncIterable<Uint8Array>, options: UploadOptions = {}): Promise<PendingWrite> {
  const { signal, maxBytes } = options;
  if (!storage.capabilities.write || !storage.openTemp) throw new AdapterError('unsupported', 'this storage is read-only: it does not accept uploads');
  signal?.throwIfAborted();
  const id = randomBytes(16).toString('hex');
  const temp = await storage.openTemp({ id, ...(signal ? { signal } : {}) });
  const digest = new UploadDigest(maxBytes);
  try {
    await pipeline(digest.through(source), temp.sink, signal ? { signal } : {});
  } catch (err) {
    if (!temp.sink.destroyed) temp.sink.destroy();
    await temp.abort().catch(() => undefined);
    throw err;
  }
  return new ReceivedUpload(temp, id, digest.size, digest.digests());
}

/** Size and digests of bytes as they pass. */
class UploadDigest {
  size = 0;
  private readonly hashes = CHECKSUM_ALGORITHMS.map((a) => [a, createChecksumHash(a)] as const);

  constructor(private readonly maxBytes: number | undefined) {}

  async *through(source: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
    for await (const chunk of source) {
      this.size += chunk.byteLength;
      if (this.maxBytes !== undefined && this.size > this.maxBytes) throw new AdapterError('invalid', `the object is larger than the limit of ${this.maxBytes} bytes`);
      const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
      for (const [, h] of this.hashes) h.update(buffer);
      yield buffer;
    }
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
