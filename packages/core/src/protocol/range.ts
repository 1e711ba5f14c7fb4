import { Readable } from 'node:stream';
import { AdapterError, type ByteRange, type StorageAdapter, type StorageKey, type StorageReadResult } from '@memberkit/types';

/**
 * Read `range` of the bytes at `key`. A store that declares capabilities.range gets the range;
 * one that does not is read from the start, the core skipping to the range and ending the
 * stream (and closing the store's) after its last byte.
 */
export async function readBytes(storage: StorageAdapter, key: StorageKey, options: { range?: ByteRange; signal?: AbortSignal; sizeHint?: number } = {}): Promise<StorageReadResult | undefined> {
  const { range, signal, sizeHint } = options;
  if (!range || storage.capabilities.range) return storage.read(key, options);
  const whole = await storage.read(key, { ...(signal ? { signal } : {}), ...(sizeHint !== undefined ? { sizeHint } : {}) });
  if (!whole) return undefined;
  if (range.start >= whole.size || (range.end !== undefined && range.end < range.start)) {
    whole.stream.destroy();
    throw new AdapterError('invalid', `range ${range.start}-${range.end ?? ''} is outside an object of ${whole.size} bytes`);
  }
  const last = Math.min(range.end ?? whole.size - 1, whole.size - 1);
  const length = last - range.start + 1;
  return { stream: sliceBytes(whole.stream, range.start, length), length, size: whole.size };
}

/**
 * `take` bytes of `source` after skipping `skip`, as a stream; the source is destroyed once
 * they are through (leaving the loop early closes it), or when the result is destroyed.
 */
function sliceBytes(source: Readable, skip: number, take: number): Readable {
  async function* slice(): AsyncGenerator<Buffer> {
    let toSkip = skip;
    let left = take;
    for await (const chunk of source as AsyncIterable<Buffer>) {
      let c = chunk;
      if (toSkip > 0) {
        const n = Math.min(toSkip, c.length);
        toSkip -= n;
        c = c.subarray(n);
      }
      if (c.length === 0) continue;
      const piece = c.subarray(0, left);
      left -= piece.length;
      yield piece;
      if (left === 0) return;
    }
    throw new AdapterError('internal', `the store ended ${left} bytes before the end of the range`);
  }
  return Readable.from(slice(), { objectMode: false });
}
