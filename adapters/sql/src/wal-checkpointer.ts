import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type Database from 'better-sqlite3';

// The thread, in plain JavaScript (no loader in the thread). It checkpoints the WAL on its own
// connection a few times a second when another connection committed since (data_version
// moved): PASSIVE, so it never waits for or blocks a writer or reader. The fsyncs of the
// checkpoint happen here, not in the COMMIT of whichever request crossed SQLite's
// auto-checkpoint threshold on the main thread (about half of COMMIT's time under load).
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.file, { timeout: 0 });
db.pragma('busy_timeout = 0');
db.pragma('synchronous = NORMAL');
const version = db.prepare('PRAGMA data_version').pluck();
const checkpoint = db.prepare('PRAGMA wal_checkpoint(PASSIVE)');
let seen = -1;
parentPort.postMessage('ready');
const tick = () => {
  try {
    const now = version.get();
    if (now !== seen) {
      checkpoint.run();
      seen = now;
    }
  } catch (e) {
    // another connection holds the file for a moment (opening, recovering): next time
    if (!e || e.code !== 'SQLITE_BUSY') throw e;
  }
  setTimeout(tick, workerData.intervalMs);
};
setTimeout(tick, workerData.intervalMs);
`;

/** How often the thread looks for new WAL content. */
const INTERVAL_MS = 100;
/** Auto-checkpoint threshold (pages) of the main connection while the thread runs: a backstop only. */
const BACKSTOP_PAGES = 10_000;
/** SQLite's default threshold, restored if the thread stops. */
const DEFAULT_PAGES = 1000;

/**
 * Checkpoints a WAL database from a worker thread, so that the connection serving requests
 * never pays a checkpoint inside a COMMIT. While the thread runs, the main connection's own
 * auto-checkpoint only fires past BACKSTOP_PAGES (the thread died or cannot keep up); if the
 * thread fails to start or stops, the main connection goes back to SQLite's default.
 */
export class WalCheckpointer {
  readonly #worker: Worker;

  constructor(file: string, private readonly main: Database.Database) {
    this.#worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { file, driver: createRequire(import.meta.url).resolve('better-sqlite3'), intervalMs: INTERVAL_MS },
    });
    this.#worker.unref();
    this.#worker.once('message', () => this.#threshold(BACKSTOP_PAGES));
    this.#worker.once('error', () => this.#threshold(DEFAULT_PAGES));
    this.#worker.once('exit', () => this.#threshold(DEFAULT_PAGES));
  }

  #threshold(pages: number): void {
    if (this.main.open) this.main.pragma(`wal_autocheckpoint = ${pages}`);
  }

  /**
   * Stops the thread: a checkpoint in progress completes (termination stops JavaScript, not a
   * native call), and its connection closes as the thread ends. A checkpoint is safe to cut
   * at any point anyway; the WAL stays consistent.
   */
  stop(): void {
    void this.#worker.terminate();
  }
}

/** True when `file` names a database file (not an in-memory or temporary database). */
export function isDatabaseFile(file: string): boolean {
  return file !== '' && file !== ':memory:' && !file.startsWith('file::memory:');
}
