import { constants as fsConstants, type Dir, type Dirent } from 'node:fs';
import { lstat, open, opendir, realpath, type FileHandle } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { addAbortSignal } from 'node:stream';
import {
  AdapterError,
  createChecksumHash,
  NODE_HASH_NAMES,
  type ByteRange,
  type ChecksumAlgorithmName,
  type StorageAdapter,
  type StorageCapabilities,
  type StorageEntry,
  type StorageKey,
  type StorageReadResult,
  type StorageStat,
} from '@memberkit/types';
import { FileWorkers, workerFailure } from './file-workers.js';
import { fsError, isAbsent, isInside, keySegments, resolveRange, throwIfAborted } from './key-path.js';
import { mayBeSmall, readSmall, SMALL_READ } from './small-read.js';

/** Files up to this size are read in one call when hashed. */
const SMALL_FILE_BYTES = 1 << 20;
/** Entries of one directory stated at once while listing. */
const LIST_STAT_BATCH = 64;

export interface TreeStorageOptions {
  /** The existing directory tree to expose, read-only and in place. */
  root: string;
  /** Symlinks are never followed (only `false` is supported): a link could lead out of the tree. */
  followSymlinks?: false;
  /** Serve and list files and directories whose name starts with a dot. Default false. */
  includeHidden?: boolean;
}

/** A listed file, with the precise modification time the scanner's state compares. */
export interface TreeEntry extends StorageEntry {
  /** `String(mtimeMs)`: a scan hashes the file again only when this or the size changed. */
  version: string;
  /** `stat.mtimeMs` (sub-millisecond where the file system has it). */
  mtimeMs: number;
  /** Creation time when the file system records one. */
  birthtime?: Date;
}

export interface TreeListOptions {
  prefix?: string;
  signal?: AbortSignal;
  /** Told about every entry the walk leaves out (symlinks, special files, names that cannot be keys). */
  onSkip?: (path: string, reason: string) => void;
}

/**
 * A read-only StorageAdapter over an existing directory tree ("wrap mode").
 *
 * Keys are relative POSIX paths of regular files under the root (`data/2020/a.csv`).
 * - Syntactically hostile keys (`..` or `.` segments, absolute paths, backslashes, NUL, empty
 *   segments) are refused with kind 'invalid' before touching the disk.
 * - Symlinks are never served, wherever they are on the path: a key whose real path differs
 *   from its plain path (a symlinked file or directory, even one pointing inside the tree) is
 *   treated as absent (`stat`/`read` return undefined), exactly as `list` never yields it.
 *   Hidden names (dot files, dot directories) are absent too unless `includeHidden`.
 * - Files are opened with O_NOFOLLOW after the real-path check, so a last component swapped
 *   for a symlink in between is refused as well.
 */
export class TreeStorageAdapter implements StorageAdapter {
  readonly capabilities: StorageCapabilities = { write: false, delete: false, list: true, range: true, nativeChecksums: [] };
  readonly root: string;
  private readonly includeHidden: boolean;
  private realRoot: string | undefined;
  private pool: FileWorkers | undefined;
  /** Reads of small files (started on first use). */
  private readers: FileWorkers | undefined;

  constructor(options: TreeStorageOptions) {
    if (options.followSymlinks !== undefined && options.followSymlinks !== false) {
      throw new AdapterError('unsupported', 'following symlinks is not supported in wrap mode');
    }
    this.root = resolve(options.root);
    this.includeHidden = options.includeHidden ?? false;
  }

  async open(): Promise<void> {
    try {
      this.realRoot = await realpath(this.root);
      const st = await lstat(this.realRoot);
      if (!st.isDirectory()) throw new AdapterError('invalid', `${this.root} is not a directory`);
    } catch (e) {
      throw fsError(e, `opening tree ${this.root}`);
    }
  }

  async close(): Promise<void> {
    // Nothing else is held open between calls.
    const pool = this.pool;
    const readers = this.readers;
    this.pool = undefined;
    this.readers = undefined;
    await Promise.all([pool?.close(), readers?.close()]);
  }

  /** The worker threads that hash and stat files (started on first use, ended by close). */
  private files(): FileWorkers {
    return (this.pool ??= FileWorkers.forScans());
  }

  async stat(key: StorageKey, options?: { signal?: AbortSignal }): Promise<StorageStat | undefined> {
    const entry = await this.statEntry(key, options);
    return entry && { size: entry.size, modified: entry.modified };
  }

  /** The file as `list` would give it now (version included), or undefined when absent. */
  entry(key: StorageKey, options?: { signal?: AbortSignal }): Promise<TreeEntry | undefined> {
    return this.statEntry(key, options);
  }

  /** Like `stat`, with the precise mtime and birth time (for the scanner). */
  async statEntry(key: StorageKey, options?: { signal?: AbortSignal }): Promise<TreeEntry | undefined> {
    throwIfAborted(options?.signal);
    const path = await this.resolveExisting(key);
    if (path === undefined) return undefined;
    try {
      const st = await lstat(path);
      return st.isFile() ? toEntry(key, st) : undefined;
    } catch (e) {
      if (isAbsent(e)) return undefined;
      throw fsError(e, 'stat');
    }
  }

  async read(key: StorageKey, options?: { range?: ByteRange; signal?: AbortSignal; sizeHint?: number }): Promise<StorageReadResult | undefined> {
    throwIfAborted(options?.signal);
    if (mayBeSmall(options?.sizeHint)) {
      const path = this.plainPath(key, await this.rootReal());
      if (path === undefined) return undefined;
      const small = await readSmall((this.readers ??= FileWorkers.forReads()), { path, maxBytes: SMALL_READ }, options);
      if (small !== 'large') return small;
    }
    const handle = await this.openFile(key);
    if (handle === undefined) return undefined;
    try {
      const st = await handle.stat();
      if (!st.isFile()) {
        await handle.close();
        return undefined;
      }
      const range = resolveRange(options?.range, st.size);
      const stream = handle.createReadStream(range ? { start: range.start, end: range.end } : {});
      if (options?.signal) addAbortSignal(options.signal, stream);
      return { stream, length: range ? range.end - range.start + 1 : st.size, size: st.size };
    } catch (e) {
      await handle.close().catch(() => undefined);
      throw fsError(e, 'read');
    }
  }

  /**
   * The digest of a file, with the size and mtime it had while it was read (one open file
   * handle, stat before and after; undefined when the file is absent, not a regular file,
   * or changed while being read). Small files are read in one call: a scan of many small
   * files is dominated by system calls, not by hashing.
   */
  async digest(
    key: StorageKey,
    algorithm: ChecksumAlgorithmName,
    options?: { signal?: AbortSignal; sizeHint?: number; expected?: StorageEntry; headBytes?: number },
  ): Promise<{ checksum: string; size: number; mtimeMs: number; version: string; head?: Uint8Array } | undefined> {
    throwIfAborted(options?.signal);
    const headBytes = Math.max(0, options?.headBytes ?? 0);
    const sizeHint = options?.sizeHint ?? options?.expected?.size;
    if (sizeHint !== undefined && sizeHint <= SMALL_FILE_BYTES) {
      // Small files (what a scan mostly meets) on the worker pool: same checks, synchronous calls.
      const path = this.plainPath(key, await this.rootReal());
      if (path === undefined) return undefined;
      const r = await this.files().digest(path, NODE_HASH_NAMES[algorithm], headBytes);
      if ('error' in r) throw workerFailure(r.error, 'read');
      return 'absent' in r ? undefined : { ...r, version: String(r.mtimeMs) };
    }
    const handle = await this.openFile(key);
    if (handle === undefined) return undefined;
    try {
      const before = await handle.stat();
      if (!before.isFile()) return undefined;
      const hash = createChecksumHash(algorithm);
      let bytes = 0;
      let head: Uint8Array | undefined;
      const take = (chunk: Buffer) => {
        if (headBytes > 0 && head === undefined) head = new Uint8Array(chunk.subarray(0, headBytes));
        hash.update(chunk);
        bytes += chunk.length;
      };
      if (before.size <= SMALL_FILE_BYTES) take(await handle.readFile(options?.signal ? { signal: options.signal } : {}));
      else {
        const stream = handle.createReadStream({ autoClose: false, highWaterMark: 1 << 20 });
        if (options?.signal) addAbortSignal(options.signal, stream);
        for await (const chunk of stream) take(chunk as Buffer);
      }
      const after = await handle.stat();
      if (bytes !== before.size || after.size !== before.size || after.mtimeMs !== before.mtimeMs) return undefined;
      return { checksum: hash.digest('hex'), size: after.size, mtimeMs: after.mtimeMs, version: String(after.mtimeMs), ...(headBytes > 0 ? { head: head ?? new Uint8Array() } : {}) };
    } catch (e) {
      if (AdapterError.is(e) || options?.signal?.aborted) throw e;
      throw fsError(e, 'read');
    } finally {
      await handle.close().catch(() => undefined);
    }
  }

  /**
   * Every regular file under the root (or under `prefix`), depth first, in constant memory per
   * directory level: one open directory handle per level, entries read one at a time.
   * Symlinks, special files, hidden names (unless `includeHidden`) and names that cannot be
   * keys (a backslash, bytes that are not UTF-8) are left out and reported to `onSkip`.
   */
  async *list(options?: TreeListOptions): AsyncGenerator<TreeEntry> {
    const prefix = options?.prefix ?? '';
    const onSkip = options?.onSkip;
    const root = await this.rootReal();
    const stack: Array<{ rel: string; dir: Dir }> = [];
    const push = async (rel: string): Promise<void> => {
      try {
        stack.push({ rel, dir: await opendir(rel ? join(root, ...rel.split('/')) : root, { bufferSize: 64 }) });
      } catch (e) {
        if (isAbsent(e)) return;
        if ((e as NodeJS.ErrnoException).code === 'EACCES') {
          onSkip?.(rel, 'directory not readable');
          return;
        }
        throw fsError(e, 'list');
      }
    };
    await push('');
    // Names that need an lstat (files, and entries whose type the directory did not give),
    // stated together on the file workers: one message per batch, not a promise per file.
    let batch: string[] = [];
    const pool = this.files();
    /** The batch's entries in listing order; directories it turned out to hold are descended into after it. */
    async function* emit(this: void): AsyncGenerator<TreeEntry> {
      const rels = batch;
      batch = [];
      const stats = await pool.lstatMany(rels.map((rel) => join(root, ...rel.split('/'))));
      const dirs: string[] = [];
      for (let i = 0; i < rels.length; i++) {
        const st = stats[i]!;
        const rel = rels[i]!;
        if ('absent' in st) continue;
        if ('error' in st) throw workerFailure(st.error, 'list');
        if (st.type === 'symlink') onSkip?.(rel, 'symbolic link (never followed)');
        else if (st.type === 'directory') dirs.push(rel);
        else if (st.type !== 'file') onSkip?.(rel, 'not a regular file');
        else if (rel.startsWith(prefix)) yield toEntry(rel, st);
      }
      for (const rel of dirs.reverse()) if (couldContain(rel, prefix)) await push(rel);
    }
    try {
      while (stack.length > 0) {
        throwIfAborted(options?.signal);
        const top = stack[stack.length - 1]!;
        let entry: Dirent | null;
        try {
          entry = await top.dir.read();
        } catch (e) {
          throw fsError(e, 'list');
        }
        if (entry === null) {
          yield* emit();
          stack.pop();
          await top.dir.close().catch(() => undefined);
          continue;
        }
        const rel = top.rel ? `${top.rel}/${entry.name}` : entry.name;
        if (!this.includeHidden && entry.name.startsWith('.')) continue;
        const problem = nameProblem(entry.name);
        if (problem) {
          onSkip?.(rel, problem);
          continue;
        }
        if (entry.isSymbolicLink()) onSkip?.(rel, 'symbolic link (never followed)');
        else if (entry.isDirectory()) {
          // Depth first, in listing order: what came before the directory is emitted first.
          yield* emit();
          if (couldContain(rel, prefix)) await push(rel);
        } else {
          // d_type may be unknown on some file systems: lstat decides (a file's size and mtime come from it too).
          batch.push(rel);
          if (batch.length >= LIST_STAT_BATCH) yield* emit();
        }
      }
    } finally {
      for (const { dir } of stack) await dir.close().catch(() => undefined);
    }
  }

  /**
   * The absolute path of `key` when it names something inside the root reached without any
   * symlink; undefined when absent, hidden or reached through a symlink.
   */
  /** The key's file opened for reading, never through a symlink; undefined when absent. */
  private async openFile(key: StorageKey): Promise<FileHandle | undefined> {
    const path = await this.resolveExisting(key);
    if (path === undefined) return undefined;
    try {
      return await open(path, fsConstants.O_RDONLY | (fsConstants.O_NOFOLLOW ?? 0) | (fsConstants.O_NONBLOCK ?? 0));
    } catch (e) {
      if (isAbsent(e) || (e as NodeJS.ErrnoException).code === 'ELOOP') return undefined;
      throw fsError(e, 'read');
    }
  }

  /** The path of `key` under the real root (not yet checked for symlinks); undefined for hidden names. */
  private plainPath(key: StorageKey, root: string): string | undefined {
    const segments = keySegments(key);
    if (!this.includeHidden && segments.some((s) => s.startsWith('.'))) return undefined;
    const plain = join(root, ...segments);
    if (!isInside(root, plain) || plain === root) throw new AdapterError('invalid', 'storage key resolves outside the tree');
    return plain;
  }

  private async resolveExisting(key: StorageKey): Promise<string | undefined> {
    const plain = this.plainPath(key, await this.rootReal());
    if (plain === undefined) return undefined;
    let real: string;
    try {
      real = await realpath(plain);
    } catch (e) {
      if (isAbsent(e) || (e as NodeJS.ErrnoException).code === 'ELOOP') return undefined;
      throw fsError(e, 'resolving storage key');
    }
    // Equal real and plain paths: no component of the path is a symlink.
    return real === plain ? plain : undefined;
  }

  private async rootReal(): Promise<string> {
    if (this.realRoot === undefined) await this.open();
    return this.realRoot!;
  }
}

function toEntry(key: string, st: { size: number; mtimeMs: number; birthtimeMs: number }): TreeEntry {
  const entry: TreeEntry = { key, size: st.size, modified: new Date(Math.round(st.mtimeMs)), version: String(st.mtimeMs), mtimeMs: st.mtimeMs };
  if (st.birthtimeMs > 0) entry.birthtime = new Date(Math.round(st.birthtimeMs));
  return entry;
}

/** Why a directory entry's name cannot be part of a key, or undefined. */
function nameProblem(name: string): string | undefined {
  if (name.includes('\\')) return 'a backslash in the name cannot be part of a key';
  if (name.includes('\uFFFD')) return 'the name is not valid UTF-8';
  return undefined;
}

function couldContain(rel: string, prefix: string): boolean {
  const asPrefix = rel + '/';
  return asPrefix.startsWith(prefix) || prefix.startsWith(asPrefix);
}

/** A read-only store exposing the regular files of an existing tree in place. */
export function createTreeStorage(options: TreeStorageOptions): TreeStorageAdapter {
  return new TreeStorageAdapter(options);
}
