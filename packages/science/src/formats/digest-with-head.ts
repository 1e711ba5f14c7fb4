import { createChecksumHash, type ChecksumAlgorithmName } from '@memberkit/types';
import { HEAD_BYTES } from './head-text.js';

/**
 * Reads `stream` to its end once, computing its checksum and keeping its first HEAD_BYTES
 * (what format identification looks at): a scanned file is read once for both.
 */
export async function digestWithHead(stream: AsyncIterable<unknown>, algorithm: ChecksumAlgorithmName): Promise<{ checksum: string; size: number; head: Uint8Array }> {
  const hash = createChecksumHash(algorithm);
  const head: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream) {
    const b = chunk as Buffer;
    hash.update(b);
    if (size < HEAD_BYTES) head.push(b);
    size += b.length;
  }
  return { checksum: hash.digest('hex'), size, head: new Uint8Array(Buffer.concat(head).subarray(0, HEAD_BYTES)) };
}
