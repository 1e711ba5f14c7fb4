import { createHash } from 'node:crypto';
import type { Readable } from 'node:stream';
import type { ChecksumAlgorithmName } from '@memberkit/types';

export type Digests = Record<ChecksumAlgorithmName, string>;

const NODE_NAMES: Record<ChecksumAlgorithmName, string> = { MD5: 'md5', 'SHA-1': 'sha1', 'SHA-256': 'sha256' };

/** Incremental MD5, SHA-1 and SHA-256 (lower-case hex), computed with node:crypto. */
export class Digester {
  private readonly hashes = (Object.keys(NODE_NAMES) as ChecksumAlgorithmName[]).map((name) => [name, createHash(NODE_NAMES[name])] as const);
  size = 0;
  update(chunk: Uint8Array): void {
    this.size += chunk.byteLength;
    for (const [, hash] of this.hashes) hash.update(chunk);
  }
  digest(): Digests {
    return Object.fromEntries(this.hashes.map(([name, hash]) => [name, hash.digest('hex')])) as Digests;
  }
}

/** Digests of `bytes`. */
export function digestsOf(bytes: Uint8Array): Digests {
  const d = new Digester();
  d.update(bytes);
  return d.digest();
}

/** `length` deterministic pseudo-random bytes (xorshift), different per `seed`. */
export function patternBytes(length: number, seed = 1): Uint8Array {
  const out = new Uint8Array(length);
  let x = (seed * 2654435761) >>> 0 || 1;
  for (let i = 0; i < length; i++) {
    x ^= x << 13; x >>>= 0;
    x ^= x >>> 17;
    x ^= x << 5; x >>>= 0;
    out[i] = x & 0xff;
  }
  return out;
}

/** An async source yielding `bytes` in chunks of `chunkSize` (copies, so a consumer may keep them). */
export async function* bytesSource(bytes: Uint8Array, chunkSize = 16 * 1024): AsyncGenerator<Uint8Array> {
  for (let offset = 0; offset < bytes.byteLength; offset += chunkSize) {
    yield bytes.slice(offset, Math.min(offset + chunkSize, bytes.byteLength));
  }
}

/**
 * A lazily generated source of `total` bytes in `chunkSize` chunks, never held whole;
 * `digester` sees every chunk handed out, and `onChunk` is told each chunk's index before
 * it is yielded (to count consumption, fail or abort mid-way).
 */
export async function* generatedSource(
  total: number,
  chunkSize: number,
  hooks: { digester?: Digester; onChunk?: (index: number) => void | Promise<void> } = {},
): AsyncGenerator<Uint8Array> {
  const block = patternBytes(chunkSize, 7);
  let index = 0;
  for (let offset = 0; offset < total; offset += chunkSize, index++) {
    await hooks.onChunk?.(index);
    const chunk = block.slice(0, Math.min(chunkSize, total - offset));
    chunk[0] = index & 0xff; // chunks differ, so a reordered or repeated chunk changes the digest
    hooks.digester?.update(chunk);
    yield chunk;
  }
}

/** Every byte of `stream`, concatenated. */
export async function readAll(stream: Readable): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(typeof chunk === 'string' ? Buffer.from(chunk) : Buffer.from(chunk as Uint8Array));
  return Buffer.concat(chunks);
}

/** Digests and length of `stream`, without holding it in memory. */
export async function digestStream(stream: Readable): Promise<{ size: number; digests: Digests }> {
  const d = new Digester();
  for await (const chunk of stream) d.update(typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Uint8Array));
  return { size: d.size, digests: d.digest() };
}
