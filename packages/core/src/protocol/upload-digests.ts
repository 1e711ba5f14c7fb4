import { hash, type Hash } from 'node:crypto';
import { CHECKSUM_ALGORITHMS, createChecksumHash, NODE_HASH_NAMES, type ChecksumAlgorithmName } from '@memberkit/types';
import type { DigestStream, DigestWorkerPool } from './digest-workers.js';

/** An upload up to this size is hashed on the calling thread at its end: the hop to the threads would cost more. */
export const HANDOFF_BYTES = 1 << 20;

export type UploadChecksums = Record<ChecksumAlgorithmName, string>;

/**
 * MD5, SHA-1 and SHA-256 of one upload. The first bytes (up to `handoffBytes`) are only kept:
 * an upload that ends there is hashed on this thread at the end; one that grows past it hands
 * the kept bytes and the rest to the pool's threads. With a pool without threads every byte is
 * hashed here as it comes. Callers MUST NOT change a buffer after passing it to update().
 */
export class UploadDigests {
  #kept: Uint8Array[] = [];
  #keptBytes = 0;
  #local: Array<readonly [ChecksumAlgorithmName, Hash]> | undefined;
  #stream: DigestStream | undefined;
  /** Called once if hashing fails while nobody waits on it (a hashing thread died). */
  onFailure: ((error: Error) => void) | undefined;

  constructor(
    private readonly pool: DigestWorkerPool,
    private readonly handoffBytes = HANDOFF_BYTES,
  ) {
    if (pool.threads === 0) this.#local = hashesHere();
  }

  /** Takes a batch of bytes; a returned promise means: wait for it before the next batch. */
  update(buffers: readonly Uint8Array[]): Promise<void> | undefined {
    if (this.#local) {
      for (const b of buffers) for (const [, h] of this.#local) h.update(b);
      return undefined;
    }
    if (this.#stream) return this.#stream.write(buffers);
    let bytes = 0;
    for (const b of buffers) bytes += b.byteLength;
    this.#kept.push(...buffers);
    this.#keptBytes += bytes;
    if (this.#keptBytes <= this.handoffBytes) return undefined;
    this.#stream = this.pool.open(CHECKSUM_ALGORITHMS);
    this.#stream.onFailure = (e) => this.onFailure?.(e);
    const kept = this.#kept;
    this.#kept = [];
    return this.#stream.write(kept);
  }

  /** The hex digests of every byte passed to update(). */
  async end(): Promise<UploadChecksums> {
    if (this.#stream) return (await this.#stream.end()) as UploadChecksums;
    const out = {} as UploadChecksums;
    const kept = this.#kept;
    this.#kept = [];
    if (!this.#local && kept.length === 1) {
      // A small object arrives in one piece: one-shot digests, no Hash object per algorithm
      // (1 KiB: 5.1 instead of 7.9 µs for the three here).
      for (const a of CHECKSUM_ALGORITHMS) out[a] = hash(NODE_HASH_NAMES[a], kept[0]!, 'hex');
      return out;
    }
    const hashes = this.#local ?? hashesHere();
    if (!this.#local) for (const b of kept) for (const [, h] of hashes) h.update(b);
    for (const [a, h] of hashes) out[a] = h.digest('hex');
    return out;
  }

  /** Drops the state (kept bytes, the threads' hashes and slabs). */
  abort(): void {
    this.#kept = [];
    this.#stream?.abort();
  }
}

function hashesHere(): Array<readonly [ChecksumAlgorithmName, Hash]> {
  return CHECKSUM_ALGORITHMS.map((a) => [a, createChecksumHash(a)] as const);
}
