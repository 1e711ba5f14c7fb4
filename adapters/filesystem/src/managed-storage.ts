import { constants as fsConstants } from 'node:fs';
import { lstat, mkdir, open, opendir, readdir, realpath, rename, rm, rmdir, type FileHandle } from 'node:fs/promises';
import { readlinkSync } from 'node:fs';
import { hostname } from 'node:os';
import { createHash, randomBytes } from 'node:crypto';
import { join, resolve } from 'node:path';
import { addAbortSignal, Writable } from 'node:stream';
import {
  AdapterError,
  type ByteRange,
  type OpenTempOptions,
  type StorageAdapter,
  type StorageCapabilities,
  type StorageEntry,
  type StorageKey,
  type StorageReadResult,
  type StorageStat,
  type TempWrite,
} from '@memberkit/types';
import { DIRECTORY_SYNC_UNSUPPORTED, FileWorkers, workerFailure } from './file-workers.js';
import { fsError, isAbsent, isInside, keySegments, outsideTheStore, resolveRange, throwIfAborted } from './key-path.js';
import { mayBeSmall, readSmall, SMALL_READ } from './small-read.js';

export interface FilesystemStorageOptions {
  /** Directory that holds `objects/` (committed bytes) and `tmp/` (writes in progress). Created by `open`. */
  root: string;
  /** fsync files and directories on commit so a commit is durable on return. Default true. */
  fsync?: boolean;
  /**
   * `open` removes files in `tmp/` older than this (crash leftovers of processes it cannot
   * check, e.g. on another host sharing the folder). Default one hour. A dead process's
   * folder on this host is removed at `open` whatever its age.
   */
  staleTempMs?: number;
}

const OBJECTS = 'objects';
const TMP = 'tmp';
const TEMP_SUFFIX = '.part';
const HOUR = 60 * 60 * 1000;
/** Read size for serving bytes. */
const READ_CHUNK = 1024 * 1024;
/**
 * Bytes an upload may buffer ahead of the disk while a write is in flight: what piles up
 * meanwhile goes out in one writev, so a fast upload costs few thread-pool hand-offs.
 */
const WRITE_BUFFER = 4 * 1024 * 1024;
/**
 * Uploads up to this size stay in memory until commit, which writes, fsyncs and renames them
 * into place in one call to a file worker: one message instead of about nine thread-pool
 * round trips (open, write, fsync, close, lstat, rename, and open, fsync, close of the shard).
 */
const SMALL_WRITE = 128 * 1024;
/**
 * A large upload's bytes are flushed to the disk in the background every this many bytes
 * while it arrives (TempFileWriter), so the disk writes them while the rest is received.
 */
const EARLY_FLUSH = 16 * 1024 * 1024;
/** Bytes the small writes of one store may hold in memory together; past it, uploads spool to disk. */
const SMALL_WRITES_BUDGET = 32 * 1024 * 1024;

/**
 * Managed (writable) storage in a local directory.
 *
 * Layout: `objects/abc/<sha256(name)>-<write id>`: the PID is hashed, never used as a path,
 * and every commit gets the key of its write (the core's id), so undoing one write can never
 * remove the bytes of another. 4,096 shard directories: a million objects is ~250 per
 * directory, and a new directory (two more fsyncs) is rare after the first few thousand
 * writes (keys of older layouts stay readable). The core's bytes spool to a file in `tmp/`,
 * fsynced through the same handle when the upload ends; a commit renames the file into place
 * and fsyncs the directory. A small upload (SMALL_WRITE) is held in memory instead and its
 * commit does all of that on a file worker at once.
 *
 * Keys MUST be relative POSIX paths under `objects/`; anything else (`..`, absolute paths,
 * backslashes, NUL, symlinks resolving outside the root) is refused with kind 'invalid'.
 */
export class FilesystemStorageAdapter implements StorageAdapter {
  readonly capabilities: StorageCapabilities = { write: true, delete: true, list: true, range: true, nativeChecksums: [] };
  readonly root: string;
  private readonly fsync: boolean;
  private readonly staleTempMs: number;
  private realRoot: string | undefined;
  /** Temp files this process is writing or holding uncommitted; never swept. */
  private readonly activeTemps = new Set<string>();
  /** Shard directories known to exist (made or found by a commit of this process). */
  private readonly shards = new Set<string>();
  /** This instance's own folder under `tmp/` (see TempOwner), set by `open`. */
  private tempDir: string | undefined;
  /** Where small writes are put in place (started on first use). */
  private workers: FileWorkers | undefined;
  /** Reads of small objects (started on first use). */
  private readers: FileWorkers | undefined;
  /** Bytes small writes hold in memory now (at most SMALL_WRITES_BUDGET). */
  private readonly held = { bytes: 0 };

  constructor(options: FilesystemStorageOptions) {
    this.root = resolve(options.root);
    this.fsync = options.fsync ?? true;
    this.staleTempMs = options.staleTempMs ?? HOUR;
  }

  async open(): Promise<void> {
    await mkdir(join(this.root, OBJECTS), { recursive: true });
    await mkdir(join(this.root, TMP), { recursive: true });
    this.realRoot = await realpath(this.root);
    // Several processes may share one store: each writes under a folder of its own, named
    // after its owner, so that a restart can tell a dead process's leftovers from a live
    // process's uploads (removing the first, never the second).
    const dir = join(this.root, TMP, ownTempFolderName());
    await mkdir(dir, { recursive: true });
    this.tempDir = dir;
    await this.sweepTemp(this.staleTempMs);
  }

  async close(): Promise<void> {
    await Promise.all([this.workers?.close(), this.readers?.close()]);
    this.workers = undefined;
    this.readers = undefined;
    // Nothing else is held open between calls; the own temp folder goes when it is empty.
    const dir = this.tempDir;
    if (dir && this.activeTemps.size === 0) {
      this.tempDir = undefined;
      await rmdir(dir).catch(() => undefined);
    }
  }

  /**
   * Removes crash leftovers from `tmp/`: the whole folder of a process on this host that is
   * no longer running, and any other temp file (another host's, or from before temp folders
   * were per process) last modified more than `olderThanMs` ago. Files this instance is
   * writing or holding are never touched. Returns how many files were removed.
   */
  async sweepTemp(olderThanMs: number): Promise<number> {
    const dirPath = join(this.root, TMP);
    const limit = Date.now() - olderThanMs;
    let removed = 0;
    const sweepFile = async (path: string): Promise<void> => {
      if (this.activeTemps.has(path)) return;
      try {
        const st = await lstat(path);
        if (st.mtimeMs < limit) {
          await rm(path, { force: true, recursive: st.isDirectory() });
          removed++;
        }
      } catch (e) {
        if (!isAbsent(e)) throw fsError(e, 'sweeping temp files');
      }
    };
    let entries: import('node:fs').Dirent[];
    try {
      entries = await readdir(dirPath, { withFileTypes: true });
    } catch (e) {
      if (isAbsent(e)) return 0;
      throw fsError(e, 'sweeping temp files');
    }
    for (const entry of entries) {
      const path = join(dirPath, entry.name);
      const owner = entry.isDirectory() ? parseTempFolderName(entry.name) : undefined;
      if (!owner) {
        await sweepFile(path);
        continue;
      }
      if (path !== this.tempDir && ownerIsDead(owner)) {
        removed += await countFiles(path);
        await rm(path, { recursive: true, force: true }).catch((e: unknown) => {
          if (!isAbsent(e)) throw fsError(e, 'sweeping temp files');
        });
        continue;
      }
      // A live (or unknowable) owner's folder: only files untouched for longer than the limit.
      // (Its own mtime is read first: removing files below moves it.)
      const idle = ownerUnknowable(owner) && path !== this.tempDir && ((await lstat(path).catch(() => undefined))?.mtimeMs ?? Infinity) < limit;
      let files: string[];
      try {
        files = await readdir(path);
      } catch (e) {
        if (isAbsent(e)) continue;
        throw fsError(e, 'sweeping temp files');
      }
      for (const name of files) await sweepFile(join(path, name));
      // Another host's folder, idle for longer than the limit and empty, goes too (its owner,
      // if still running, recreates it on its next write).
      if (idle) await rmdir(path).catch(() => undefined);
    }
    return removed;
  }

  async stat(key: StorageKey, options?: { signal?: AbortSignal }): Promise<StorageStat | undefined> {
    throwIfAborted(options?.signal);
    const path = await this.resolveExisting(key);
    if (path === undefined) return undefined;
    try {
      const st = await lstat(path);
      if (!st.isFile()) return undefined;
      return { size: st.size, modified: st.mtime };
    } catch (e) {
      if (isAbsent(e)) return undefined;
      throw fsError(e, 'stat');
    }
  }

  async read(key: StorageKey, options?: { range?: ByteRange; signal?: AbortSignal; sizeHint?: number }): Promise<StorageReadResult | undefined> {
    throwIfAborted(options?.signal);
    if (mayBeSmall(options?.sizeHint)) {
      const small = await readSmall((this.readers ??= FileWorkers.forReads()), { path: this.resolveKey(key), within: await this.rootReal(), maxBytes: SMALL_READ }, options);
      if (small !== 'large') return small;
    }
    const path = await this.resolveExisting(key);
    if (path === undefined) return undefined;
    let handle: FileHandle;
    try {
      // O_NOFOLLOW: the path is already resolved; a symlink swapped in since is refused.
      handle = await open(path, fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0));
    } catch (e) {
      if (isAbsent(e)) return undefined;
      throw fsError(e, 'read');
    }
    try {
      const st = await handle.stat();
      if (!st.isFile()) {
        await handle.close();
        return undefined;
      }
      const range = resolveRange(options?.range, st.size);
      // 1 MiB reads (default 64 KiB): fewer syscalls and event-loop turns per byte served. An
      // explicit end keeps small files from allocating a whole 1 MiB buffer per read.
      const bounds = range ? { start: range.start, end: range.end } : st.size > 0 ? { start: 0, end: st.size - 1 } : {};
      const stream = handle.createReadStream({ ...bounds, highWaterMark: READ_CHUNK });
      if (options?.signal) addAbortSignal(options.signal, stream);
      return { stream, length: range ? range.end - range.start + 1 : st.size, size: st.size };
    } catch (e) {
      await handle.close().catch(() => undefined);
      throw fsError(e, 'read');
    }
  }

  async openTemp(options: OpenTempOptions): Promise<TempWrite> {
    throwIfAborted(options.signal);
    const tmpPath = join(this.tempDir ?? join(this.root, TMP), options.id + TEMP_SUFFIX);
    this.activeTemps.add(tmpPath);
    const sink = new TempFileWriter(() => this.openTemp_(tmpPath), this.fsync, this.held);
    return {
      sink,
      commit: (name, o) => this.commitTemp(tmpPath, sink, name, options.id, o?.signal),
      abort: () => this.discardTemp(tmpPath, sink),
    };
  }

  /** A new temp file; the own temp folder is recreated if something removed it. */
  private async openTemp_(tmpPath: string): Promise<FileHandle> {
    try {
      return await open(tmpPath, 'wx', 0o644);
    } catch (e) {
      if (!isAbsent(e)) throw e;
      await mkdir(join(tmpPath, '..'), { recursive: true });
      return open(tmpPath, 'wx', 0o644);
    }
  }

  async delete(key: StorageKey, options?: { signal?: AbortSignal }): Promise<void> {
    throwIfAborted(options?.signal);
    const path = this.resolveKey(key);
    try {
      // The parent must resolve inside the root, so that a symlinked shard cannot redirect the unlink.
      const parent = await realpath(join(path, '..'));
      if (!isInside(await this.rootReal(), parent)) throw outsideTheStore();
      await rm(path, { force: true });
    } catch (e) {
      if (isAbsent(e)) return;
      throw fsError(e, 'delete');
    }
    // Empty shard directories are left in place: at most 65,536 of them, and removing them
    // would race with a concurrent commit into the same shard.
  }

  async *list(options?: { prefix?: string; signal?: AbortSignal }): AsyncIterable<StorageEntry> {
    const prefix = options?.prefix ?? '';
    // Iterative walk with one open directory handle per level (the layout is three levels deep).
    const stack: Array<{ rel: string; dir: AsyncIterator<import('node:fs').Dirent> & { close?: () => Promise<void> } }> = [];
    const push = async (rel: string): Promise<void> => {
      try {
        const dir = await opendir(join(this.root, ...rel.split('/')));
        stack.push({ rel, dir: dir[Symbol.asyncIterator]() });
      } catch (e) {
        if (!isAbsent(e)) throw fsError(e, 'list');
      }
    };
    await push(OBJECTS);
    try {
      while (stack.length > 0) {
        throwIfAborted(options?.signal);
        const top = stack[stack.length - 1]!;
        const next = await top.dir.next();
        if (next.done) {
          stack.pop();
          continue;
        }
        const entry = next.value;
        const rel = `${top.rel}/${entry.name}`;
        if (entry.isDirectory()) {
          if (couldContain(rel, prefix)) await push(rel);
        } else if (!entry.isSymbolicLink() && rel.startsWith(prefix)) {
          // Regular files (and entries of unknown d_type): lstat decides.
          try {
            const st = await lstat(join(this.root, ...rel.split('/')));
            if (st.isFile()) yield { key: rel, size: st.size, modified: st.mtime };
          } catch (e) {
            if (!isAbsent(e)) throw fsError(e, 'list');
          }
        }
      }
    } finally {
      // Closing an iterator early closes its directory handle.
      for (const { dir } of stack) await dir.return?.();
    }
  }

  /** Renames a finished temp file into the object tree (a small write: writes it there first). */
  private async commitTemp(tmpPath: string, sink: TempFileWriter, name: string, id: string, signal: AbortSignal | undefined): Promise<StorageKey> {
    throwIfAborted(signal);
    const hash = createHash('sha256').update(name, 'utf8').digest('hex');
    const shard = [OBJECTS, hash.slice(0, 3)];
    const key = `${shard.join('/')}/${hash}-${id}`;
    const dirPath = join(this.root, ...shard);
    const target = join(this.root, ...key.split('/'));
    const bytes = sink.inMemory();
    if (bytes !== undefined) return this.placeSmall(tmpPath, sink, bytes, shard, dirPath, target, key);
    try {
      // A shard made once stays: one thread-pool call less per write.
      const known = this.shards.has(dirPath);
      let created = known ? undefined : await mkdir(dirPath, { recursive: true });
      this.shards.add(dirPath);
      // Never overwrite: the write id makes a clash impossible unless a write is committed twice.
      if (await lstat(target).then(() => true, () => false)) throw new AdapterError('already-exists', 'storage key collision');
      try {
        await rename(tmpPath, target);
      } catch (e) {
        // A shard removed behind this process's back (nothing here removes one): made again, once.
        if (!known || (e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
        created = await mkdir(dirPath, { recursive: true });
        await rename(tmpPath, target);
      }
      this.activeTemps.delete(tmpPath);
      if (this.fsync) {
        await syncDirectory(dirPath);
        if (created !== undefined) {
          // New shard directories: their parents' entries must be durable too.
          for (const parent of this.shardParents(shard)) await syncDirectory(parent);
        }
      }
      return key;
    } catch (e) {
      throw fsError(e, 'commit');
    }
  }

  /** The folders above a shard's own, inside the root, deepest first (fsynced when the shard is new). */
  private shardParents(shard: readonly string[]): string[] {
    const parents: string[] = [];
    for (let i = shard.length - 1; i >= 1; i--) parents.push(join(this.root, ...shard.slice(0, i)));
    return parents;
  }

  /** commitTemp of a write held in memory: the whole write on a file worker. */
  private async placeSmall(tmpPath: string, sink: TempFileWriter, bytes: Buffer, shard: string[], dirPath: string, target: string, key: StorageKey): Promise<StorageKey> {
    const known = this.shards.has(dirPath);
    const parents = this.shardParents(shard);
    const result = await (this.workers ??= FileWorkers.forWrites()).place({ temp: tmpPath, bytes, dir: dirPath, target, makeDir: !known, fsync: this.fsync, parents });
    if ('error' in result) {
      // whatever the worker left of the temp file goes with the write's abort
      throw workerFailure(result.error, 'commit');
    }
    if ('exists' in result) throw new AdapterError('already-exists', 'storage key collision');
    this.shards.add(dirPath);
    this.activeTemps.delete(tmpPath);
    sink.release();
    return key;
  }

  private async discardTemp(tmpPath: string, sink: TempFileWriter): Promise<void> {
    sink.destroy();
    sink.release();
    await sink.closeFile();
    this.activeTemps.delete(tmpPath);
    await rm(tmpPath, { force: true });
  }

  /** Absolute path of a key, after the syntactic checks ('invalid' when refused). */
  private resolveKey(key: StorageKey): string {
    const segments = keySegments(key);
    if (segments[0] !== OBJECTS || segments.length < 2) throw new AdapterError('invalid', `a storage key must be a path under ${OBJECTS}/`);
    return join(this.root, ...segments);
  }

  /** The key's real path when it exists and stays inside the root; undefined when absent. */
  private async resolveExisting(key: StorageKey): Promise<string | undefined> {
    const path = this.resolveKey(key);
    let real: string;
    try {
      real = await realpath(path);
    } catch (e) {
      if (isAbsent(e)) return undefined;
      throw fsError(e, 'resolving storage key');
    }
    if (!isInside(await this.rootReal(), real)) throw outsideTheStore();
    return real;
  }

  private async rootReal(): Promise<string> {
    this.realRoot ??= await realpath(this.root).catch(() => this.root);
    return this.realRoot;
  }
}

/**
 * Writes the core's bytes to the temp file. A small upload stays in memory (SMALL_WRITE, within
 * the store's budget) and is written by the commit; a larger one opens the file when it
 * outgrows that. Buffered chunks are written together (writev) while the core hashes the
 * next ones; the file is fsynced through the same handle when the upload ends (the commit's
 * durability, without reopening the file). While a large upload arrives, what it wrote so far
 * is flushed to the disk in the background (EARLY_FLUSH): the final fsync then waits for the
 * last few MiB, not for the whole object's dirty pages (a 1 GiB upload: ~3 s at 300 MB/s).
 */
class TempFileWriter extends Writable {
  private handle: FileHandle | undefined;
  private opening: Promise<FileHandle> | undefined;
  private closing: Promise<void> | undefined;
  /** Bytes written to the file since the last background flush began. */
  private unflushed = 0;
  /** The background flush in progress; a failure of it fails the upload (fsync errors are not reported twice). */
  private flushing: Promise<void> | undefined;
  /** The chunks held in memory, until the file is opened (then undefined). */
  private chunks: Buffer[] | undefined = [];
  private heldBytes = 0;

  constructor(
    private readonly openFile: () => Promise<FileHandle>,
    private readonly sync: boolean,
    private readonly budget: { bytes: number },
  ) {
    super({ highWaterMark: WRITE_BUFFER });
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.writeBatch([chunk], callback);
  }

  override _writev(chunks: Array<{ chunk: Buffer }>, callback: (error?: Error | null) => void): void {
    this.writeBatch(chunks.map((c) => c.chunk), callback);
  }

  private writeBatch(buffers: Buffer[], callback: (error?: Error | null) => void): void {
    let bytes = 0;
    for (const b of buffers) bytes += b.byteLength;
    if (this.chunks !== undefined) {
      if (this.heldBytes + bytes <= SMALL_WRITE && this.budget.bytes + bytes <= SMALL_WRITES_BUDGET) {
        this.chunks.push(...buffers);
        this.heldBytes += bytes;
        this.budget.bytes += bytes;
        return callback();
      }
      // Too large to hold: to disk from here on, the held chunks first.
      buffers = [...this.chunks, ...buffers];
      bytes += this.heldBytes;
      this.release();
    }
    const handle = this.handle;
    (handle ? writeFully(handle, buffers, bytes) : this.open().then((h) => writeFully(h, buffers, bytes))).then(
      () => {
        this.unflushed += bytes;
        this.flushEarly();
        callback();
      },
      (e: unknown) => callback(fsError(e, 'write')),
    );
  }

  /** Starts a background fdatasync once EARLY_FLUSH bytes were written since the last one began (one at a time). */
  private flushEarly(): void {
    // once the upload is ending, the final fsync flushes the rest
    if (!this.sync || this.flushing !== undefined || this.unflushed < EARLY_FLUSH || this.handle === undefined || this.writableEnded || this.destroyed) return;
    this.unflushed = 0;
    const flush = this.handle.datasync().then(
      () => {
        if (this.flushing === flush) this.flushing = undefined;
        this.flushEarly();
      },
      (e: unknown) => {
        this.flushing = undefined;
        this.destroy(fsError(e, 'write'));
      },
    );
    this.flushing = flush;
  }

  private open(): Promise<FileHandle> {
    return (this.opening ??= this.openFile().then((h) => (this.handle = h)));
  }

  override _final(callback: (error?: Error | null) => void): void {
    // Held in memory: the commit writes and fsyncs it.
    if (this.opening === undefined) return callback();
    if (this.handle === undefined) return callback(new Error('the temp file did not open'));
    const handle = this.handle;
    // the background flush first: its failure must not be hidden by a later fsync that succeeds
    (this.sync ? (this.flushing ?? Promise.resolve()).then(() => handle.sync()) : Promise.resolve())
      .then(() => this.closeFile())
      .then(() => callback(), (e: unknown) => callback(fsError(e, 'write')));
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    // The held chunks stay for the commit (a finished stream is destroyed too); abort releases them.
    // A background flush ends before the handle closes.
    (this.flushing ?? Promise.resolve()).catch(() => undefined).then(() => this.closeFile()).then(
      () => callback(error),
      () => callback(error),
    );
  }

  /** The whole upload when it is held in memory (finished, never written to the file). */
  inMemory(): Buffer | undefined {
    if (this.chunks === undefined || this.opening !== undefined) return undefined;
    return this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.heldBytes);
  }

  /** Gives the held chunks' bytes back to the store's budget (committed, discarded or spilled to the file). */
  release(): void {
    this.budget.bytes -= this.heldBytes;
    this.heldBytes = 0;
    this.chunks = undefined;
  }

  /** Closes the file handle (once), if one was opened (waiting for an open in progress). */
  closeFile(): Promise<void> {
    if (this.opening === undefined) return Promise.resolve();
    this.closing ??= this.opening.then((h) => h.close(), () => undefined);
    return this.closing;
  }
}

/** writev until every byte is written (a short write continues where it stopped). */
async function writeFully(handle: FileHandle, buffers: Buffer[], total: number): Promise<void> {
  let done = (await handle.writev(buffers)).bytesWritten;
  while (done < total) {
    let skip = done;
    const rest: Buffer[] = [];
    for (const b of buffers) {
      if (skip >= b.byteLength) {
        skip -= b.byteLength;
        continue;
      }
      rest.push(skip > 0 ? b.subarray(skip) : b);
      skip = 0;
    }
    done += (await handle.writev(rest)).bytesWritten;
  }
}

/** True when a directory at `rel` may hold keys starting with `prefix`. */
function couldContain(rel: string, prefix: string): boolean {
  const asPrefix = rel + '/';
  return asPrefix.startsWith(prefix) || prefix.startsWith(asPrefix);
}

/** fsync a directory (its entries: a rename into it is durable once this returns). */
async function syncDirectory(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } catch (e) {
    // Some file systems cannot fsync a directory; the rename itself still happened.
    if (!DIRECTORY_SYNC_UNSUPPORTED.includes((e as NodeJS.ErrnoException).code ?? '')) throw e;
  } finally {
    await handle.close();
  }
}

/**
 * Who owns a temp folder: `<host>~<pid namespace>~<pid>~<random>`. A folder whose host and
 * PID namespace are this process's can be checked: its owner is dead when no process has its
 * pid (a reused pid only delays the removal to the age-based sweep). Folders of other hosts
 * or namespaces (a store shared over NFS, containers) are never judged by pid.
 */
interface TempOwner {
  host: string;
  pidNamespace: string;
  pid: number;
}

const SEP = '~';

/** The host name, made safe as a path segment. */
function safeHost(): string {
  return hostname().replace(/[^\w.-]/g, '_') || 'host';
}

/** The PID namespace of this process (Linux), '' where it cannot be read. */
function pidNamespace(): string {
  try {
    return readlinkSync('/proc/self/ns/pid').replace(/\D/g, '');
  } catch {
    return '';
  }
}

function ownTempFolderName(): string {
  return [safeHost(), pidNamespace() || 'x', String(process.pid), randomBytes(4).toString('hex')].join(SEP);
}

function parseTempFolderName(name: string): TempOwner | undefined {
  const parts = name.split(SEP);
  if (parts.length !== 4 || !/^\d+$/.test(parts[2]!)) return undefined;
  return { host: parts[0]!, pidNamespace: parts[1]!, pid: Number(parts[2]) };
}

/** True when this process cannot tell whether `owner` runs (another host or PID namespace). */
function ownerUnknowable(owner: TempOwner): boolean {
  const ns = pidNamespace();
  return owner.host !== safeHost() || !ns || owner.pidNamespace !== ns;
}

function ownerIsDead(owner: TempOwner): boolean {
  if (ownerUnknowable(owner) || owner.pid === process.pid) return false;
  try {
    process.kill(owner.pid, 0);
    return false;
  } catch (e) {
    // EPERM: a process with that pid exists (another user's): alive as far as we can tell.
    return (e as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

async function countFiles(dir: string): Promise<number> {
  try {
    return (await readdir(dir, { recursive: true, withFileTypes: true })).filter((e) => !e.isDirectory()).length;
  } catch {
    return 0;
  }
}

/** A managed filesystem store rooted at `options.root`. Call `open()` before use. */
export function createFilesystemStorage(options: FilesystemStorageOptions): FilesystemStorageAdapter {
  return new FilesystemStorageAdapter(options);
}
