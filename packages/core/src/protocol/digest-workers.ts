import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { AdapterError, CHECKSUM_ALGORITHMS, NODE_HASH_NAMES, type ChecksumAlgorithmName } from '@memberkit/types';

/**
 * Relative cost of hashing one byte (1 / MiB/s measured on an x86-64 core with SHA
 * extensions: MD5 ~720, SHA-1 ~1800, SHA-256 ~1170). Only the order and rough ratios matter:
 * they decide which algorithms share a thread when there are fewer threads than algorithms.
 */
const COST: Readonly<Record<ChecksumAlgorithmName, number>> = { MD5: 1 / 720, 'SHA-1': 1 / 1800, 'SHA-256': 1 / 1170 };

/**
 * Which algorithms each of `threads` threads computes, balanced by cost (the most expensive
 * first, each onto the least loaded thread): with two threads MD5 alone on one and SHA-1 with
 * SHA-256 on the other; with three or more one algorithm each (never more threads than
 * algorithms). No threads, no placement: the caller hashes on its own thread.
 */
export function placeAlgorithms(algorithms: readonly ChecksumAlgorithmName[], threads: number): ChecksumAlgorithmName[][] {
  const groups = Array.from({ length: Math.max(0, Math.min(threads, algorithms.length)) }, () => ({ algorithms: [] as ChecksumAlgorithmName[], load: 0 }));
  if (groups.length === 0) return [];
  for (const algorithm of [...algorithms].sort((a, b) => COST[b] - COST[a])) {
    const target = groups.reduce((a, b) => (b.load < a.load ? b : a));
    target.algorithms.push(algorithm);
    target.load += COST[algorithm];
  }
  return groups.map((g) => g.algorithms);
}

/** Hashing threads when none are configured: none on one core (hash on the main thread), else one per algorithm as far as the cores go. */
export function defaultDigestThreads(cores = availableParallelism()): number {
  return cores <= 1 ? 0 : Math.min(cores, CHECKSUM_ALGORITHMS.length);
}

export interface DigestWorkerPoolOptions {
  /**
   * Hashing threads. Default: `defaultDigestThreads()` (0 on a single core, else
   * min(cores, 3)). 0 means the pool has no threads: callers MUST hash on their own thread
   * (`DigestWorkerPool.threads === 0`).
   */
  threads?: number;
  /** Bytes per shared slab. Default 1 MiB. */
  slabBytes?: number;
  /** Slabs one stream may fill before its writer waits for the threads (its memory bound). Default 4. */
  slabsPerStream?: number;
}

/** Messages to a hashing thread. */
type ToThread =
  | { type: 'open'; stream: number; hashes: string[] }
  | { type: 'data'; stream: number; slab: number; buffer: SharedArrayBuffer; length: number }
  | { type: 'end'; stream: number }
  | { type: 'abort'; stream: number };

/** Messages from a hashing thread. */
type FromThread = { type: 'ack'; stream: number; slab: number } | { type: 'digests'; stream: number; hex: string[] };

// The thread, in plain JavaScript (no loader needed in the thread). One hash state per
// stream and algorithm; a slab is hashed straight from shared memory and acknowledged so
// the main thread may fill it again. An unknown stream (aborted) is acknowledged unhashed.
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const streams = new Map();
parentPort.on('message', (m) => {
  switch (m.type) {
    case 'open':
      streams.set(m.stream, m.hashes.map((name) => createHash(name)));
      break;
    case 'data': {
      const hashes = streams.get(m.stream);
      if (hashes) {
        const view = new Uint8Array(m.buffer, 0, m.length);
        for (const h of hashes) h.update(view);
      }
      parentPort.postMessage({ type: 'ack', stream: m.stream, slab: m.slab });
      break;
    }
    case 'end': {
      const hashes = streams.get(m.stream) || [];
      streams.delete(m.stream);
      parentPort.postMessage({ type: 'digests', stream: m.stream, hex: hashes.map((h) => h.digest('hex')) });
      break;
    }
    case 'abort':
      streams.delete(m.stream);
      break;
  }
});
`;

/** One hashing thread: the algorithms placed on it, and its worker while it runs. */
interface ThreadSlot {
  readonly algorithms: readonly ChecksumAlgorithmName[];
  worker: Worker | undefined;
  /** Streams open on this worker; it keeps the process alive only while there are some. */
  readonly streams: Map<number, WorkerDigestStream>;
}

interface Slab {
  readonly index: number;
  readonly buffer: SharedArrayBuffer;
  readonly view: Uint8Array;
  /** Threads that have not yet acknowledged this slab's current bytes. */
  pending: number;
}

/**
 * Hashing threads shared by every upload of the process. Threads start on the first stream
 * and are unref'd while idle (they never keep the process alive). Bytes travel once: the
 * writer copies them into shared slabs that every thread of the stream reads in place; a slab
 * is filled again once each of them acknowledged it, and a writer with no free slab waits
 * (memory per stream is bounded by `slabsPerStream × slabBytes`). A thread that dies fails
 * the streams it held (AdapterError 'internal'); the next stream starts a new one.
 */
export class DigestWorkerPool {
  readonly threads: number;
  readonly slabBytes: number;
  readonly slabsPerStream: number;
  readonly #slots: ThreadSlot[];
  /** Slabs of finished streams, kept for the next stream (at most a few). */
  #idleSlabs: SharedArrayBuffer[] = [];
  #nextStream = 1;

  constructor(options: DigestWorkerPoolOptions = {}) {
    const threads = options.threads ?? defaultDigestThreads();
    if (!Number.isInteger(threads) || threads < 0) throw new RangeError(`threads must be a whole number >= 0 (got ${threads})`);
    this.slabBytes = options.slabBytes ?? 1 << 20;
    this.slabsPerStream = options.slabsPerStream ?? 4;
    if (!(this.slabBytes > 0) || !(this.slabsPerStream > 0)) throw new RangeError('slabBytes and slabsPerStream must be positive');
    this.#slots = placeAlgorithms(CHECKSUM_ALGORITHMS, threads).map((algorithms) => ({ algorithms, worker: undefined, streams: new Map() }));
    this.threads = this.#slots.length;
  }

  /**
   * A stream hashing `algorithms` on the threads that hold them. MUST be ended or aborted.
   * Throws when the pool has no threads.
   */
  open(algorithms: readonly ChecksumAlgorithmName[] = CHECKSUM_ALGORITHMS): DigestStream {
    if (this.threads === 0) throw new Error('this digest pool has no threads: hash on the calling thread');
    const id = this.#nextStream++;
    const parts: Array<{ slot: ThreadSlot; algorithms: ChecksumAlgorithmName[] }> = [];
    for (const slot of this.#slots) {
      const mine = slot.algorithms.filter((a) => algorithms.includes(a));
      if (mine.length > 0) parts.push({ slot, algorithms: mine });
    }
    const stream = new WorkerDigestStream(this, id, parts);
    for (const { slot, algorithms: mine } of parts) {
      const worker = this.#worker(slot);
      if (slot.streams.size === 0) worker.ref();
      slot.streams.set(id, stream);
      post(worker, { type: 'open', stream: id, hashes: mine.map((a) => NODE_HASH_NAMES[a]) });
    }
    return stream;
  }

  /** What each thread computes and whether it runs (for diagnostics and tests). */
  describe(): Array<{ algorithms: readonly ChecksumAlgorithmName[]; running: boolean; streams: number }> {
    return this.#slots.map((s) => ({ algorithms: s.algorithms, running: s.worker !== undefined, streams: s.streams.size }));
  }

  /**
   * Stops the threads. Streams still open fail with 'internal' exactly as when a thread dies
   * (the exit handler does it); the pool stays usable (new threads on the next stream).
   */
  async close(): Promise<void> {
    await Promise.all(this.#slots.map((slot) => slot.worker?.terminate()));
  }

  /** @internal A slab for a stream: an idle one or a new one. */
  takeSlab(): SharedArrayBuffer {
    return this.#idleSlabs.pop() ?? new SharedArrayBuffer(this.slabBytes);
  }

  /** @internal Slabs no thread reads any more, for later streams. */
  returnSlabs(buffers: SharedArrayBuffer[]): void {
    for (const b of buffers) if (this.#idleSlabs.length < 2 * this.slabsPerStream) this.#idleSlabs.push(b);
  }

  /** @internal The stream no longer needs these threads. */
  release(id: number, slots: readonly ThreadSlot[], abort: boolean): void {
    for (const slot of slots) {
      if (!slot.streams.delete(id)) continue;
      if (abort && slot.worker) post(slot.worker, { type: 'abort', stream: id });
      if (slot.streams.size === 0) slot.worker?.unref();
    }
  }

  #worker(slot: ThreadSlot): Worker {
    if (slot.worker) return slot.worker;
    const worker = new Worker(THREAD_SOURCE, { eval: true, name: `memberkit digests ${slot.algorithms.join('+')}` });
    slot.worker = worker;
    worker.unref();
    worker.on('message', (m: FromThread) => slot.streams.get(m.stream)?.received(slot, m));
    worker.on('error', (err) => this.#lost(slot, worker, new AdapterError('internal', `a hashing thread failed: ${err.message}`, { cause: err })));
    worker.on('exit', (code) => this.#lost(slot, worker, new AdapterError('internal', `a hashing thread stopped (exit code ${code})`)));
    return worker;
  }

  /** A thread is gone: the streams it held fail; the next stream starts a new one. */
  #lost(slot: ThreadSlot, worker: Worker, error: AdapterError): void {
    if (slot.worker !== worker) return;
    slot.worker = undefined;
    const held = [...slot.streams.values()];
    slot.streams.clear();
    for (const stream of held) stream.fail(error);
  }
}

function post(worker: Worker, message: ToThread): void {
  worker.postMessage(message);
}

/** The bytes of one upload on their way to the hashing threads. */
export interface DigestStream {
  /**
   * Copies the bytes into shared slabs and sends every full slab to the threads. Returns a
   * promise when the caller must wait (no free slab) before writing again, else undefined.
   * Throws (or rejects) the stream's failure.
   */
  write(buffers: readonly Uint8Array[]): Promise<void> | undefined;
  /** Sends the rest and resolves with the hex digest of every algorithm of the stream. */
  end(): Promise<Partial<Record<ChecksumAlgorithmName, string>>>;
  /** Releases the stream's state in the threads and its slabs; idempotent, a no-op after end. */
  abort(): void;
  /** Called once if the stream fails while nobody waits on it (a thread died). */
  onFailure: ((error: Error) => void) | undefined;
}

class WorkerDigestStream implements DigestStream {
  onFailure: ((error: Error) => void) | undefined;
  readonly #slabs: Slab[] = [];
  readonly #free: Slab[] = [];
  #current: Slab | undefined;
  #fill = 0;
  #waiter: { resolve: () => void; reject: (e: Error) => void } | undefined;
  #digests = new Map<ThreadSlot, string[]>();
  #ending: { resolve: (d: Partial<Record<ChecksumAlgorithmName, string>>) => void; reject: (e: Error) => void } | undefined;
  #state: 'open' | 'ending' | 'done' | 'failed' = 'open';
  #error: Error | undefined;

  constructor(
    private readonly pool: DigestWorkerPool,
    private readonly id: number,
    private readonly parts: ReadonlyArray<{ slot: ThreadSlot; algorithms: ChecksumAlgorithmName[] }>,
  ) {}

  write(buffers: readonly Uint8Array[]): Promise<void> | undefined {
    if (this.#state !== 'open') throw this.#error ?? new Error('the digest stream is closed');
    for (let i = 0; i < buffers.length; i++) {
      const b = buffers[i]!;
      let offset = 0;
      while (offset < b.byteLength) {
        if (!this.#current) {
          const slab = this.#freeSlab();
          if (!slab) return this.#wait().then(() => this.write([b.subarray(offset), ...buffers.slice(i + 1)]));
          this.#current = slab;
          this.#fill = 0;
        }
        const n = Math.min(b.byteLength - offset, this.pool.slabBytes - this.#fill);
        this.#current.view.set(n === b.byteLength ? b : b.subarray(offset, offset + n), this.#fill);
        this.#fill += n;
        offset += n;
        if (this.#fill === this.pool.slabBytes) this.#send();
      }
    }
    return undefined;
  }

  end(): Promise<Partial<Record<ChecksumAlgorithmName, string>>> {
    if (this.#state !== 'open') return Promise.reject(this.#error ?? new Error('the digest stream is closed'));
    if (this.#current && this.#fill > 0) this.#send();
    this.#state = 'ending';
    return new Promise((resolve, reject) => {
      this.#ending = { resolve, reject };
      for (const { slot } of this.parts) if (slot.worker) post(slot.worker, { type: 'end', stream: this.id });
    });
  }

  abort(): void {
    if (this.#state === 'done' || this.#state === 'failed') return;
    const error = new Error('the digest stream was aborted');
    this.#state = 'failed';
    this.#error = error;
    // Slabs still being read are dropped, not recycled: a thread may still read them.
    this.pool.returnSlabs(this.#free.filter((s) => s.pending === 0).map((s) => s.buffer));
    this.pool.release(this.id, this.parts.map((p) => p.slot), true);
    this.#settle(error);
  }

  /** @internal A message of one of this stream's threads. */
  received(slot: ThreadSlot, m: FromThread): void {
    if (m.type === 'ack') {
      const slab = this.#slabs[m.slab];
      if (!slab || --slab.pending > 0) return;
      this.#free.push(slab);
      const waiter = this.#waiter;
      this.#waiter = undefined;
      waiter?.resolve();
      return;
    }
    this.#digests.set(slot, m.hex);
    if (this.#digests.size < this.parts.length || this.#state !== 'ending') return;
    this.#state = 'done';
    const out: Partial<Record<ChecksumAlgorithmName, string>> = {};
    for (const { slot: s, algorithms } of this.parts) algorithms.forEach((a, i) => (out[a] = this.#digests.get(s)![i]!));
    this.pool.returnSlabs(this.#slabs.map((s) => s.buffer));
    this.pool.release(this.id, this.parts.map((p) => p.slot), false);
    this.#ending?.resolve(out);
  }

  /** @internal A thread of this stream died. */
  fail(error: Error): void {
    if (this.#state === 'done' || this.#state === 'failed') return;
    this.#state = 'failed';
    this.#error = error;
    this.pool.release(this.id, this.parts.map((p) => p.slot), true);
    if (!this.#settle(error)) this.onFailure?.(error);
  }

  /** Rejects whoever waits on the stream; false when nobody does. */
  #settle(error: Error): boolean {
    const waiter = this.#waiter;
    const ending = this.#ending;
    this.#waiter = undefined;
    this.#ending = undefined;
    waiter?.reject(error);
    ending?.reject(error);
    return waiter !== undefined || ending !== undefined;
  }

  #freeSlab(): Slab | undefined {
    const free = this.#free.pop();
    if (free) return free;
    if (this.#slabs.length >= this.pool.slabsPerStream) return undefined;
    const buffer = this.pool.takeSlab();
    const slab: Slab = { index: this.#slabs.length, buffer, view: new Uint8Array(buffer), pending: 0 };
    this.#slabs.push(slab);
    return slab;
  }

  #wait(): Promise<void> {
    return new Promise((resolve, reject) => (this.#waiter = { resolve, reject }));
  }

  /** Posts the current slab to every thread of the stream. */
  #send(): void {
    const slab = this.#current!;
    this.#current = undefined;
    slab.pending = this.parts.length;
    for (const { slot } of this.parts) {
      if (slot.worker) post(slot.worker, { type: 'data', stream: this.id, slab: slab.index, buffer: slab.buffer, length: this.#fill });
    }
    this.#fill = 0;
  }
}

let shared: DigestWorkerPool | undefined;
let sharedOptions: DigestWorkerPoolOptions = {};

/** The process's pool, created on first use with the options of `configureDigestWorkers`. */
export function sharedDigestWorkers(): DigestWorkerPool {
  shared ??= new DigestWorkerPool(sharedOptions);
  return shared;
}

/**
 * Options of the process's pool (e.g. `{ threads: 0 }` to hash on the main thread). Uploads
 * in progress finish on the pool they started on; its threads end once idle.
 */
export function configureDigestWorkers(options: DigestWorkerPoolOptions): void {
  sharedOptions = { ...options };
  const old = shared;
  shared = undefined;
  if (old && old.describe().every((t) => t.streams === 0)) void old.close();
}
