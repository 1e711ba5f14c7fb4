import { addAbortSignal, Readable } from 'node:stream';
import type { ByteRange, StorageReadResult } from '@memberkit/types';
import { workerFailure, type FileWorkers, type ReadJob } from './file-workers.js';
import { outsideTheStore, resolveRange } from './key-path.js';

/**
 * Files up to this size are read whole on a file worker (realpath, open, fstat, read, close:
 * one message) instead of with a thread-pool hop per system call. On a virtual machine each
 * hop wakes a thread (a tenth of a millisecond or more), which made a 4 KiB get cost several
 * times the bytes it served. A larger file costs one message more than before, unless the
 * caller passed its recorded size (`sizeHint`: then it is streamed at once).
 */
export const SMALL_READ = 128 * 1024;

/** Whether a file of recorded size `sizeHint` (undefined: not known) is worth trying as a small read. */
export function mayBeSmall(sizeHint: number | undefined): boolean {
  return sizeHint === undefined || sizeHint <= SMALL_READ;
}

/**
 * `job`'s file when it is small: the read's result served from memory (range applied),
 * undefined when it is absent; `'large'` when the caller must stream it itself.
 */
export async function readSmall(workers: FileWorkers, job: ReadJob, options?: { range?: ByteRange; signal?: AbortSignal }): Promise<StorageReadResult | undefined | 'large'> {
  const r = await workers.read(job);
  if ('absent' in r) return undefined;
  if ('error' in r) {
    if (r.error.code === 'EOUTSIDE') throw outsideTheStore();
    throw workerFailure(r.error, 'read');
  }
  if ('large' in r) return 'large';
  const range = resolveRange(options?.range, r.size);
  const bytes = Buffer.from(r.bytes.buffer, r.bytes.byteOffset, r.bytes.byteLength);
  const served = range ? bytes.subarray(range.start, range.end + 1) : bytes;
  const stream = new Readable({
    read() {
      if (served.byteLength > 0) this.push(served);
      this.push(null);
    },
  });
  if (options?.signal) addAbortSignal(options.signal, stream);
  return { stream, length: served.byteLength, size: r.size };
}
