import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import type { AdapterError } from '@memberkit/types';
import { fsError } from './key-path.js';

/** What hashing one file found: its digest, size and mtime while read; or `absent`. */
export type DigestResult =
  | { checksum: string; size: number; mtimeMs: number; head?: Uint8Array }
  | { absent: true }
  | { error: { code?: string; message: string } };

/** What an lstat of one path found (symlinks not followed); `absent` when nothing is there. */
export type LstatResult =
  | { type: 'file' | 'directory' | 'symlink' | 'other'; size: number; mtimeMs: number; birthtimeMs: number }
  | { absent: true }
  | { error: { code?: string; message: string } };

/**
 * A small file read whole (ReadJob): its bytes, size and mtime; `large` (with its size) when
 * it is larger than the job allowed (nothing read); `absent` as for a digest.
 */
export type ReadResult =
  | { bytes: Uint8Array; size: number; mtimeMs: number }
  | { large: true; size: number }
  | { absent: true }
  | { error: { code?: string; message: string } };

/**
 * A read of a small file: `path`'s real path must be `path` itself (no symlink on the way) or,
 * given `within`, lie inside that directory (a real path). The file is read when it is at
 * most `maxBytes` long.
 */
export interface ReadJob {
  path: string;
  within?: string;
  maxBytes: number;
}

/** A system call's failure reported by the file workers, as the adapter's error for `op`. */
export function workerFailure(error: { code?: string; message: string }, op: string): AdapterError {
  return fsError(Object.assign(new Error(error.message), { code: error.code }), op);
}

/** A small write put in place: `exists` when the target was already there (nothing renamed). */
export type PlaceResult = { placed: true } | { exists: true } | { error: { code?: string; message: string } };

/**
 * A small write of managed storage, done in one call: write `bytes` to the new file `temp`
 * (its folder made if missing), fsync and close it, make `dir` when `makeDir`, rename the file
 * to `target` unless something is there, fsync `dir` and, when it was made, each of
 * `parents` (deepest first).
 */
export interface PlaceJob {
  temp: string;
  bytes: Uint8Array;
  dir: string;
  target: string;
  makeDir: boolean;
  fsync: boolean;
  parents: readonly string[];
}

/**
 * Codes of a directory fsync that some file systems cannot do (the rename into the directory
 * still happened): tolerated by every directory fsync, on the main thread and in the worker.
 */
export const DIRECTORY_SYNC_UNSUPPORTED: readonly string[] = ['EINVAL', 'EISDIR', 'EPERM', 'EBADF'];

// The worker, in plain JavaScript (no loader needed in the thread). Synchronous system calls
// are the point: on the main thread each promise-based call of a small file (realpath, open,
// fstat, read, fstat, close) costs more than the hashing, and a scan of 100,000 small files
// was bound by that overhead. Absent means: not there, not a regular file, a symlink on the
// path (real path differs), or changed while it was read (size or mtime moved).
const WORKER_SOURCE = `
const { parentPort } = require('node:worker_threads');
const fs = require('node:fs');
const { createHash } = require('node:crypto');
const CHUNK = 1 << 20;
const buffer = Buffer.allocUnsafe(CHUNK);
const FLAGS = fs.constants.O_RDONLY | (fs.constants.O_NOFOLLOW || 0) | (fs.constants.O_NONBLOCK || 0);
const UNSUPPORTED = ${JSON.stringify(DIRECTORY_SYNC_UNSUPPORTED)};
const absent = (e) => e && (e.code === 'ENOENT' || e.code === 'ENOTDIR' || e.code === 'ELOOP');
function digest(path, hashName, headBytes) {
  let real;
  try { real = fs.realpathSync.native(path); } catch (e) { if (absent(e)) return { absent: true }; throw e; }
  if (real !== path) return { absent: true };
  let fd;
  try { fd = fs.openSync(path, FLAGS); } catch (e) { if (absent(e)) return { absent: true }; throw e; }
  try {
    const before = fs.fstatSync(fd);
    if (!before.isFile()) return { absent: true };
    const hash = createHash(hashName);
    let bytes = 0;
    let head;
    for (;;) {
      const n = fs.readSync(fd, buffer, 0, CHUNK, null);
      if (n === 0) break;
      if (headBytes > 0 && head === undefined) head = new Uint8Array(buffer.subarray(0, Math.min(n, headBytes)));
      hash.update(buffer.subarray(0, n));
      bytes += n;
    }
    const after = fs.fstatSync(fd);
    if (bytes !== before.size || after.size !== before.size || after.mtimeMs !== before.mtimeMs) return { absent: true };
    const r = { checksum: hash.digest('hex'), size: after.size, mtimeMs: after.mtimeMs };
    if (headBytes > 0) r.head = head || new Uint8Array();
    return r;
  } finally {
    fs.closeSync(fd);
  }
}
function readSmall(job) {
  let real;
  try { real = fs.realpathSync.native(job.path); } catch (e) { if (absent(e)) return { absent: true }; throw e; }
  if (job.within ? !(real === job.within || real.startsWith(job.within.endsWith('/') ? job.within : job.within + '/')) : real !== job.path) {
    if (job.within) { const e = new Error('storage key resolves outside the store'); e.code = 'EOUTSIDE'; throw e; }
    return { absent: true };
  }
  let fd;
  try { fd = fs.openSync(real, FLAGS); } catch (e) { if (absent(e)) return { absent: true }; throw e; }
  try {
    const st = fs.fstatSync(fd);
    if (!st.isFile()) return { absent: true };
    if (st.size > job.maxBytes) return { large: true, size: st.size };
    // a buffer of its own, transferred to the main thread (not copied)
    const bytes = new Uint8Array(st.size);
    let n = 0;
    while (n < st.size) {
      const r = fs.readSync(fd, bytes, n, st.size - n, null);
      if (r === 0) break;
      n += r;
    }
    return { bytes: n === st.size ? bytes : bytes.subarray(0, n), size: n, mtimeMs: st.mtimeMs };
  } finally {
    fs.closeSync(fd);
  }
}
function lstat(path) {
  let st;
  try { st = fs.lstatSync(path); } catch (e) { if (e && (e.code === 'ENOENT' || e.code === 'ENOTDIR')) return { absent: true }; throw e; }
  const type = st.isFile() ? 'file' : st.isDirectory() ? 'directory' : st.isSymbolicLink() ? 'symlink' : 'other';
  return { type, size: st.size, mtimeMs: st.mtimeMs, birthtimeMs: st.birthtimeMs };
}
function syncDir(path) {
  const fd = fs.openSync(path, 'r');
  try { fs.fsyncSync(fd); } catch (e) { if (!UNSUPPORTED.includes(e && e.code)) throw e; } finally { fs.closeSync(fd); }
}
function place(job) {
  let fd;
  try { fd = fs.openSync(job.temp, 'wx', 0o644); } catch (e) {
    if (!e || e.code !== 'ENOENT') throw e;
    fs.mkdirSync(require('node:path').dirname(job.temp), { recursive: true });
    fd = fs.openSync(job.temp, 'wx', 0o644);
  }
  try {
    for (let done = 0; done < job.bytes.byteLength; ) done += fs.writeSync(fd, job.bytes, done);
    if (job.fsync) fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  let made = job.makeDir ? fs.mkdirSync(job.dir, { recursive: true }) : undefined;
  let there = true;
  try { fs.lstatSync(job.target); } catch (e) { if (e && e.code === 'ENOENT') there = false; else throw e; }
  if (there) { fs.rmSync(job.temp, { force: true }); return { exists: true }; }
  try { fs.renameSync(job.temp, job.target); } catch (e) {
    // a shard folder removed behind the process's back: made again, once
    if (!e || e.code !== 'ENOENT' || job.makeDir) throw e;
    made = fs.mkdirSync(job.dir, { recursive: true });
    fs.renameSync(job.temp, job.target);
  }
  if (job.fsync) {
    syncDir(job.dir);
    if (made !== undefined) for (const parent of job.parents) syncDir(parent);
  }
  return { placed: true };
}
parentPort.on('message', ({ id, jobs }) => {
  const transfer = [];
  const results = jobs.map(([op, path, hashName, headBytes]) => {
    try {
      const r = op === 'lstat' ? lstat(path) : op === 'place' ? place(path) : op === 'read' ? readSmall(path) : digest(path, hashName, headBytes);
      // bytes read go over as they are (transferred), not copied
      const bytes = r.bytes || r.head;
      if (bytes && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength && bytes.byteLength > 0) transfer.push(bytes.buffer);
      return r;
    } catch (e) { return { error: { code: e && e.code, message: String(e && e.message) } }; }
  });
  parentPort.postMessage({ id, results }, transfer);
});
`;


interface Slot {
  worker: Worker;
  /** Files sent and not yet answered. */
  busy: number;
}

interface Waiting {
  op: 'digest' | 'lstat' | 'place' | 'read';
  path: string | PlaceJob | ReadJob;
  hashName: string;
  headBytes: number;
  /** Buffers moved to the worker with the job (see place). */
  transfer?: ArrayBuffer;
  resolve: (r: never) => void;
  reject: (e: unknown) => void;
}

export interface FileWorkersOptions {
  /** Worker threads. */
  threads: number;
  /** Jobs per message at most (see #flush). */
  perMessage: number;
}

/**
 * File work on a few worker threads with synchronous I/O: hashing and lstat for wrap scans,
 * small writes of managed storage. On the main thread each promise-based file call costs a
 * thread-pool round trip (tens of microseconds on a virtual machine); here a job of several
 * system calls costs one message. Requests made in the same turn of the event loop travel
 * as one message per worker (up to `perMessage` jobs), so a scanner with many files in
 * flight pays one round trip per batch, not per file. Workers start on first use and hold
 * the process open only while they have work.
 */
export class FileWorkers {
  readonly #size: number;
  readonly #perMessage: number;
  #workers: Slot[] = [];
  #batch: Waiting[] = [];
  #scheduled = false;
  #nextId = 0;
  readonly #inflight = new Map<number, { slot: Slot; jobs: Waiting[] }>();

  constructor(options: FileWorkersOptions) {
    this.#size = options.threads;
    this.#perMessage = options.perMessage;
  }

  /** For wrap scans: hashing threads beside the main thread, many files per message. */
  static forScans(): FileWorkers {
    return new FileWorkers({ threads: Math.max(1, Math.min(2, availableParallelism() - 1)), perMessage: 16 });
  }

  /**
   * For small writes: one write per message (each waits on its fsyncs; the file system
   * merges those of concurrent writes, so they run on several threads as libuv's would).
   */
  static forWrites(): FileWorkers {
    return new FileWorkers({ threads: 4, perMessage: 1 });
  }

  /**
   * For reads of small files (served objects): threads of their own, so that a read never
   * waits behind a write's fsync; the reads asked for in one turn travel together.
   */
  static forReads(): FileWorkers {
    return new FileWorkers({ threads: Math.max(1, Math.min(2, availableParallelism())), perMessage: 8 });
  }

  /** The file's digest; with `headBytes`, also its first bytes (read anyway: no second open for format identification). */
  digest(path: string, hashName: string, headBytes = 0): Promise<DigestResult> {
    return this.#ask('digest', path, hashName, headBytes);
  }

  /** lstat of each path, in order (a listing's files: one thread-pool call and promise each would cost more on the main thread). */
  lstatMany(paths: readonly string[]): Promise<LstatResult[]> {
    return Promise.all(paths.map((path) => this.#ask<LstatResult>('lstat', path, '', 0)));
  }

  /** A small write put in place (PlaceJob). */
  place(job: PlaceJob): Promise<PlaceResult> {
    // postMessage clones a view's whole ArrayBuffer (a pooled Buffer's 8 KiB, a request
    // body's every part): the bytes alone are copied once, and moved.
    const bytes = new Uint8Array(job.bytes);
    return this.#ask('place', { ...job, bytes }, '', 0, bytes.buffer);
  }

  /** A small file read whole (ReadJob): one message instead of a thread-pool hop per system call. */
  read(job: ReadJob): Promise<ReadResult> {
    return this.#ask('read', job, '', 0);
  }

  #ask<R>(op: Waiting['op'], path: Waiting['path'], hashName: string, headBytes: number, transfer?: ArrayBuffer): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      this.#batch.push({ op, path, hashName, headBytes, ...(transfer ? { transfer } : {}), resolve: resolve as (r: never) => void, reject });
      if (!this.#scheduled) {
        this.#scheduled = true;
        setImmediate(() => this.#flush());
      }
    });
  }

  async close(): Promise<void> {
    const workers = this.#workers;
    this.#workers = [];
    await Promise.all(workers.map(({ worker }) => worker.terminate()));
  }

  #flush(): void {
    this.#scheduled = false;
    const batch = this.#batch;
    this.#batch = [];
    if (batch.length === 0) return;
    while (this.#workers.length < this.#size) this.#workers.push(this.#start());
    // Least busy worker first, in slices so that both threads share one large batch, and of at
    // most #perMessage: results come back while the worker reads on, so the main thread
    // handles one slice (and sends the next files) while the worker hashes the following ones.
    const slice = Math.min(this.#perMessage, Math.ceil(batch.length / this.#workers.length));
    for (let i = 0; i < batch.length; i += slice) {
      const target = this.#workers.reduce((a, b) => (b.busy < a.busy ? b : a));
      const jobs = batch.slice(i, i + slice);
      const id = this.#nextId++;
      this.#inflight.set(id, { slot: target, jobs });
      target.busy += jobs.length;
      target.worker.ref();
      const transfer = jobs.flatMap((j) => (j.transfer ? [j.transfer] : []));
      target.worker.postMessage({ id, jobs: jobs.map((j) => [j.op, j.path, j.hashName, j.headBytes]) }, transfer);
    }
  }

  #start(): Slot {
    const slot: Slot = { worker: new Worker(WORKER_SOURCE, { eval: true }), busy: 0 };
    slot.worker.unref();
    slot.worker.on('message', ({ id, results }: { id: number; results: never[] }) => {
      const jobs = this.#inflight.get(id)?.jobs ?? [];
      this.#inflight.delete(id);
      slot.busy -= jobs.length;
      if (slot.busy === 0) slot.worker.unref();
      jobs.forEach((job, i) => job.resolve(results[i]!));
    });
    slot.worker.on('error', (e) => {
      // A dead worker fails what it held; the next batch starts a new one.
      this.#workers = this.#workers.filter((w) => w !== slot);
      for (const [id, held] of this.#inflight) {
        if (held.slot !== slot) continue;
        this.#inflight.delete(id);
        held.jobs.forEach((job) => job.reject(e));
      }
    });
    return slot;
  }
}
