import { open, type FileHandle } from 'node:fs/promises';
import { AdapterError } from '@memberkit/types';

/** How the write-ahead log's bytes are flushed to the disk (fdatasync; a test may observe it). */
export type WalFlush = (handle: FileHandle) => Promise<void>;

const fdatasync: WalFlush = (handle) => handle.datasync();

/**
 * SQLite: makes committed transactions durable before they are acknowledged, with one
 * fdatasync of the write-ahead log for every commit that asked while none was running (a group
 * commit of the fsyncs), on the thread pool instead of inside COMMIT on the main thread.
 *
 * The connection runs `synchronous = NORMAL`: its COMMIT writes the transaction's frames to the
 * WAL without syncing them, so a power cut could lose a write that was already acknowledged.
 * `sync()` resolves once an fdatasync of the WAL that began after the call has ended: every
 * frame written before the call (this process's and any other's) is then on the disk, which is
 * what `synchronous = FULL` would have done inside each COMMIT. A checkpoint syncs the WAL
 * before copying it, so frames checkpointed meanwhile are durable too; the WAL file is never
 * removed while this process holds a connection to the database.
 */
export class WalSync {
  #handle: Promise<FileHandle | undefined> | undefined;
  /** The fdatasync under way. */
  #running: Promise<void> | undefined;
  /** The next one, shared by every caller that asked while one was under way. */
  #next: Promise<void> | undefined;
  #closed = false;

  constructor(
    private readonly walFile: string,
    private readonly flush: WalFlush = fdatasync,
  ) {}

  /**
   * Resolves once every WAL frame written before this call is durable; rejects with 'unavailable'
   * when the flush fails, marked `committed` (the callers' transactions did commit).
   */
  sync(): Promise<void> {
    if (this.#running === undefined) return this.#start();
    // The flush under way may have begun before this caller's commit: wait for the next one.
    const next = (): Promise<void> => this.#startNext();
    return (this.#next ??= this.#running.then(next, next));
  }

  /**
   * Called as each flush ends, before the next may begin; the next waits for the promise it
   * returns (which must not reject). The store commits there the writes it held while the flush
   * ran (SqlStore), so that the next flush covers them.
   */
  beforeNext: (() => Promise<void>) | undefined;

  /** True while a flush is under way: a commit made now waits for the one after it (see `sync`). */
  get flushing(): boolean {
    return this.#running !== undefined;
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.allSettled([this.#running, this.#next]);
    const handle = await this.#handle?.catch(() => undefined);
    this.#handle = undefined;
    await handle?.close().catch(() => undefined);
  }

  #startNext(): Promise<void> {
    this.#next = undefined;
    return this.#start();
  }

  #start(): Promise<void> {
    const run = this.#flushOnce().finally(() => {
      if (this.#running === run) this.#running = undefined;
    });
    this.#running = run;
    return run;
  }

  async #flushOnce(): Promise<void> {
    try {
      await this.#flushLog();
    } finally {
      await this.beforeNext?.();
    }
  }

  async #flushLog(): Promise<void> {
    if (this.#closed) return;
    const handle = await (this.#handle ??= this.#open());
    // No WAL yet: nothing was written through it (it exists from the first commit on).
    if (handle === undefined) return;
    try {
      await this.flush(handle);
    } catch (e) {
      throw new AdapterError('unavailable', `the catalogue's write-ahead log could not be flushed to the disk (${(e as Error).message}); the write may not survive a crash`, { cause: e, committed: true });
    }
  }

  async #open(): Promise<FileHandle | undefined> {
    try {
      // read-write: a platform may refuse to flush a file opened read-only
      return await open(this.walFile, 'r+');
    } catch (e) {
      // not kept: the next sync opens it again (a failure may pass, a missing log appear)
      this.#handle = undefined;
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new AdapterError('unavailable', `cannot open the catalogue's write-ahead log ${this.walFile}: ${(e as Error).message}`, { cause: e, committed: true });
      return undefined;
    }
  }
}
