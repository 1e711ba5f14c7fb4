import { posix } from 'node:path';
import type BetterSqlite3 from 'better-sqlite3';
import {
  AdapterError,
  formatForFileName,
  identifierProblem,
  type AccessPolicy,
  type CatalogueChange,
  type MetadataAdapter,
  type ObjectRecord,
  type StoredSystemMetadata,
  rescannedRecord,
} from '@memberkit/types';
import { FormatRules, FormatRulesError, HEAD_BYTES, type FormatIdentification } from '@memberkit/science';
import { FolderDatasets, type FolderFile } from '@memberkit/science';
import type { TreeEntry, TreeStorageAdapter } from './tree-storage.js';

export interface TreeScannerOptions {
  /** The wrapped tree. */
  storage: TreeStorageAdapter;
  /** Where records go; MUST have the write side (`apply`). */
  catalogue: MetadataAdapter;
  /** Database for the scanner's own tables (`wrap_files`, created when missing). Usually the catalogue's. */
  stateDatabase: BetterSqlite3.Database;
  /** originMemberNode and authoritativeMemberNode of every object. */
  nodeId: string;
  /**
   * PID of a file from its relative POSIX path. Default: the path itself. A file whose PID
   * breaks the identifier rules (whitespace, control characters, over 800 characters) is
   * skipped and reported.
   */
  /** PID of a file from its relative POSIX path. Default `pidFromPath`. */
  pidRule?: (relativePath: string) => string;
  /**
   * Glob (`**\/*.eml.xml`, `data/**`) or extension (`xml`, no dot) → formatId, before the
   * format is identified from the file's first bytes (see @memberkit/science FormatRules).
   * Every value must be in the federation's list or in `extraFormats`.
   */
  formatOverrides?: Record<string, string>;
  /** formatIds outside the federation's list that may be published (by override or identification). */
  extraFormats?: string[];
  rightsHolder: string;
  /** Default: the rightsHolder. */
  submitter?: string;
  /** Access policy of new objects. Default none (only the rightsHolder may read). */
  accessPolicy?: AccessPolicy;
  /** Default SHA-1. */
  checksumAlgorithm?: 'SHA-1' | 'MD5' | 'SHA-256';
  /** Files hashed at once (small files travel to the hashing threads in batches of up to this many). Default 64. */
  concurrency?: number;
  /** Catalogue changes per `apply`. Default 500. */
  batchSize?: number;
  /** A partial batch is applied at the latest this long after its first file was hashed. Default 1000 ms. */
  flushIntervalMs?: number;
  now?: () => Date;
  /**
   * Let a scan that finds no file at all remove every catalogued object. Default false: such a
   * scan fails with kind 'unavailable' (an unmounted volume looks exactly like an empty tree).
   */
  allowEmptyTree?: boolean;
  /** Where `watch()` tells what each periodic scan changed (info) and why one failed (error). */
  logger?: ScanLogger;
  /**
   * 'folders': after each complete scan, publish a generated resource map for every folder
   * holding one metadata document and data files beside it (@memberkit/science FolderDatasets); the
   * storage given to the node must then be a DatasetMapStorage over the same state database.
   * Default false.
   */
  datasets?: 'folders' | false;
}

/** The part of a pino-style logger the scanners use. */
export interface ScanLogger {
  info(fields: Record<string, unknown>, message: string): void;
  debug?(fields: Record<string, unknown>, message: string): void;
  error?(fields: Record<string, unknown>, message: string): void;
}

/** What a completed scan changed, in one log line (info when it changed anything, else debug). */
export function logScan(logger: ScanLogger | undefined, what: string, report: { added: number; changed: number; removed: number; unchanged: number; skipped: unknown[]; durationMs: number }): void {
  if (!logger) return;
  const fields = { added: report.added, changed: report.changed, removed: report.removed, unchanged: report.unchanged, skipped: report.skipped.length, durationMs: Math.round(report.durationMs) };
  const message = `${what}: ${report.added} added, ${report.changed} changed, ${report.removed} removed, ${report.unchanged} unchanged, ${report.skipped.length} skipped`;
  if (report.added + report.changed + report.removed + report.skipped.length > 0 || !logger.debug) logger.info(fields, message);
  else logger.debug(fields, message);
}

export interface ScanReport {
  added: number;
  changed: number;
  removed: number;
  unchanged: number;
  skipped: Array<{ path: string; reason: string }>;
  durationMs: number;
  /** Files listed so far, and bytes read to hash them (progress displays). */
  seen?: number;
  bytesHashed?: number;
}

export interface ScanOptions {
  signal?: AbortSignal;
  /** Called after each batch reaches the catalogue, with the counts so far. */
  onProgress?: (report: ScanReport) => void;
}

export interface WatchOptions {
  /** Pause between the end of one scan and the start of the next. Default 60 s. */
  intervalMs?: number;
  /** Failed scans are reported here (and retried at the next interval). */
  onError?: (error: unknown) => void;
  /** Completed scans are reported here. */
  onScan?: (report: ScanReport) => void;
}

interface StateRow {
  path: string;
  pid: string;
  size: number;
  mtime_ms: number;
  algorithm: string;
  checksum: string;
  scan: number;
  stamp: number;
  /** formatId the scanner identified for this file version (null: recorded before identification by content). */
  format: string | null;
}

/** A hashed file's change, planned against the catalogue's record. */
interface Planned {
  item: Hashed;
  change: CatalogueChange;
  outcome: 'added' | 'changed' | 'unchanged';
  state: StateRow;
}

/** A file hashed in this scan, on its way to the catalogue. */
interface Hashed {
  entry: TreeEntry;
  pid: string;
  previous: StateRow | undefined;
  checksum: string;
  format: FormatIdentification;
}

const STATE_SCHEMA = `
CREATE TABLE IF NOT EXISTS wrap_files (
  path      TEXT    NOT NULL PRIMARY KEY, -- storage key: relative POSIX path in the tree
  pid       TEXT    NOT NULL,
  size      INTEGER NOT NULL,
  mtime_ms  REAL    NOT NULL,             -- stat.mtimeMs when the checksum was computed
  algorithm TEXT    NOT NULL,
  checksum  TEXT    NOT NULL,
  scan      INTEGER NOT NULL,             -- last scan that saw the file
  stamp     INTEGER NOT NULL              -- last dateSysMetadataModified the scanner set (epoch ms)
);
CREATE INDEX IF NOT EXISTS wrap_files_scan ON wrap_files (scan);
`;

/**
 * Keeps a catalogue in step with a wrapped directory tree.
 *
 * Every regular file (as listed by the TreeStorageAdapter) becomes an object whose storage key
 * is its relative path. Checksums are computed once and cached in `wrap_files`, keyed by
 * (path, size, mtimeMs): an unchanged file is never read again. New objects reach the
 * catalogue in batches as soon as they are hashed, so listObjects answers while the rest of
 * a large tree is still being read.
 *
 * dateSysMetadataModified of every change is the scan's clock, strictly later than any stamp
 * the scanner set before and than the record's previous stamp, so a Coordinating Node
 * harvesting listObjects by fromDate never misses a change.
 *
 * A changed file (other size or mtime, other content) replaces its record with
 * serialVersion + 1, taking size and checksum from the file and keeping everything else
 * (access and replication policy, replicas, obsolescence links, seriesId, formatId, dates of
 * upload) from the stored record. A file touched without a content change only refreshes the
 * cache. A file gone from the tree is removed from the catalogue, but only after a complete,
 * successful walk: an aborted or failed scan never removes anything.
 */
/**
 * The default PID of a wrapped file: its relative path, with whitespace, control characters
 * and `%` percent-encoded, since identifiers may not hold whitespace. Encoding `%` too keeps
 * the rule one-to-one: two different paths never share a PID.
 */
export function pidFromPath(relativePath: string, prefix = ''): string {
  // eslint-disable-next-line no-control-regex
  return prefix + relativePath.replace(/[%\s\u0000-\u001f\u007f]/gu, (c) => encodeURIComponent(c));
}

export class TreeScanner {
  readonly options: Readonly<TreeScannerOptions>;
  private readonly algorithm: 'SHA-1' | 'MD5' | 'SHA-256';
  private readonly concurrency: number;
  private readonly batchSize: number;
  private readonly flushIntervalMs: number;
  private readonly now: () => Date;
  private readonly pidRule: (relativePath: string) => string;
  private readonly formats: FormatRules;
  private schemaReady = false;
  private lastStamp = 0;
  private datasets: FolderDatasets | undefined;
  private running: Promise<ScanReport> | undefined;
  private queued: Promise<ScanReport> | undefined;

  constructor(options: TreeScannerOptions) {
    if (!options.catalogue.capabilities.write || typeof options.catalogue.apply !== 'function') {
      throw new AdapterError('unsupported', 'the tree scanner needs a writable catalogue (apply)');
    }
    this.options = { ...options };
    this.algorithm = options.checksumAlgorithm ?? 'SHA-1';
    this.concurrency = Math.max(1, Math.trunc(options.concurrency ?? 64));
    this.batchSize = Math.max(1, Math.trunc(options.batchSize ?? 500));
    this.flushIntervalMs = Math.max(0, options.flushIntervalMs ?? 1000);
    this.now = options.now ?? (() => new Date());
    this.pidRule = options.pidRule ?? pidFromPath;
    try {
      this.formats = new FormatRules({ overrides: options.formatOverrides ?? {}, extraFormats: options.extraFormats ?? [] });
    } catch (e) {
      if (e instanceof FormatRulesError) throw new AdapterError('invalid', e.message);
      throw e;
    }
  }

  /**
   * Brings the catalogue in step with the tree. Scans never overlap: a call made while one
   * runs waits for it and then runs one more scan (every caller waiting at that time shares
   * that scan and its report; its signal and onProgress are those of the caller that queued it).
   * The promise may be left unawaited (objects appear as they are hashed), but then attach a
   * rejection handler.
   */
  scan(options?: ScanOptions): Promise<ScanReport> {
    if (this.running === undefined) {
      const run = this.run(options ?? {}).finally(() => {
        if (this.running === run) this.running = undefined;
      });
      this.running = run;
      return run;
    }
    this.queued ??= this.running
      .catch(() => undefined)
      .then(() => {
        this.queued = undefined;
        return this.scan(options);
      });
    return this.queued;
  }

  /**
   * Rescans periodically: the first scan starts at once, each next one `intervalMs` after the
   * previous one ended. `stop()` aborts a scan in progress and resolves when it has ended.
   */
  watch(options?: WatchOptions): { stop(): Promise<void> } {
    const intervalMs = options?.intervalMs ?? 60_000;
    const controller = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    let current: Promise<unknown> | undefined;
    let stopped = false;
    const tick = (): void => {
      timer = undefined;
      if (stopped) return;
      current = this.scan({ signal: controller.signal }).then(
        (report) => {
          logScan(this.options.logger, `wrap rescan of ${this.options.storage.root}`, report);
          options?.onScan?.(report);
        },
        (e: unknown) => {
          if (stopped) return;
          this.options.logger?.error?.({ err: e }, `wrap rescan of ${this.options.storage.root} failed`);
          options?.onError?.(e);
        },
      ).finally(() => {
        current = undefined;
        if (!stopped) timer = setTimeout(tick, intervalMs);
      });
    };
    timer = setTimeout(tick, 0);
    return {
      stop: async () => {
        stopped = true;
        if (timer !== undefined) clearTimeout(timer);
        controller.abort(new AdapterError('unavailable', 'watch stopped'));
        await current;
      },
    };
  }

  private ensureSchema(): BetterSqlite3.Database {
    const db = this.options.stateDatabase;
    if (!this.schemaReady) {
      db.exec(STATE_SCHEMA);
      // Added with identification by content; rows of earlier versions hold null.
      const columns = db.prepare('PRAGMA table_info(wrap_files)').all() as Array<{ name: string }>;
      if (!columns.some((c) => c.name === 'format')) db.exec('ALTER TABLE wrap_files ADD COLUMN format TEXT');
      this.schemaReady = true;
    }
    return db;
  }

  private async run({ signal, onProgress }: ScanOptions): Promise<ScanReport> {
    const started = performance.now();
    signal?.throwIfAborted();
    const db = this.ensureSchema();
    const scanId = ((db.prepare('SELECT max(scan) AS s FROM wrap_files').get() as { s: number | null }).s ?? 0) + 1;
    const maxStamp = (db.prepare('SELECT max(stamp) AS s FROM wrap_files').get() as { s: number | null }).s ?? 0;
    this.lastStamp = Math.max(this.lastStamp, maxStamp);

    const report: ScanReport = { added: 0, changed: 0, removed: 0, unchanged: 0, skipped: [], durationMs: 0 };
    let seen = 0;
    let bytesHashed = 0;
    const snapshot = (): ScanReport => ({ ...report, skipped: [...report.skipped], durationMs: performance.now() - started, seen, bytesHashed });
    const getRow = db.prepare('SELECT * FROM wrap_files WHERE path = ?');
    const touchRow = db.prepare('UPDATE wrap_files SET scan = max(scan, ?) WHERE path = ?');
    const touchAll = db.transaction((paths: string[]) => {
      for (const p of paths) touchRow.run(scanId, p);
    });

    let touched: string[] = [];
    const flushTouched = (): void => {
      if (touched.length > 0) touchAll(touched);
      touched = [];
    };

    let pending: Hashed[] = [];
    let chain: Promise<void> = Promise.resolve();
    let fatal: { error: unknown } | undefined;
    let timer: NodeJS.Timeout | undefined;
    let backlog = 0; // hashed files not yet applied
    const flushPending = (): Promise<void> => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      const items = pending;
      pending = [];
      if (items.length > 0) {
        chain = chain.then(async () => {
          if (fatal) return;
          try {
            await this.applyBatch(items, scanId, report);
            onProgress?.(snapshot());
          } catch (e) {
            fatal = { error: e };
          } finally {
            backlog -= items.length;
          }
        });
      }
      return chain;
    };
    const enqueue = (item: Hashed): void => {
      backlog++;
      pending.push(item);
      if (pending.length >= this.batchSize) void flushPending();
      else if (timer === undefined) timer = setTimeout(() => void flushPending(), this.flushIntervalMs);
    };

    const inflight = new Set<Promise<void>>();
    const hashOne = async (entry: TreeEntry, pid: string, previous: StateRow | undefined, known?: string): Promise<void> => {
      try {
        // `known`: the checksum of an unchanged file whose format is identified again.
        const checksum = known ?? await this.hashFile(entry, signal);
        if (checksum === undefined) {
          report.skipped.push({ path: entry.key, reason: 'changed or removed while being read; retried at the next scan' });
          if (previous) touched.push(entry.key);
        } else {
          if (known === undefined) bytesHashed += entry.size;
          enqueue({ entry, pid, previous, checksum, format: await this.identify(entry, signal) });
        }
      } catch (e) {
        if (signal?.aborted) return;
        report.skipped.push({ path: entry.key, reason: `could not be read: ${describe(e)}` });
        // Keep the record we have: a read error is not proof that the file is gone.
        if (previous) touched.push(entry.key);
      }
    };

    let walkError: { error: unknown } | undefined;
    try {
      const entries = this.options.storage.list({
        ...(signal ? { signal } : {}),
        onSkip: (path, reason) => report.skipped.push({ path, reason }),
      });
      for await (const entry of entries) {
        if (fatal) break;
        seen++;
        let pid: string;
        try {
          pid = this.pidRule(entry.key);
        } catch (e) {
          report.skipped.push({ path: entry.key, reason: `pidRule failed: ${describe(e)}` });
          continue;
        }
        const problem = typeof pid === 'string' ? identifierProblem(pid) : 'pidRule did not return a string';
        if (problem) {
          report.skipped.push({ path: entry.key, reason: `invalid identifier: ${problem}` });
          continue;
        }
        const previous = getRow.get(entry.key) as StateRow | undefined;
        const unchanged = previous && previous.pid === pid && previous.size === entry.size && previous.mtime_ms === entry.mtimeMs
          && previous.algorithm === this.algorithm;
        if (unchanged && this.formatStale(previous)) {
          // Same bytes, but recorded before identification by content or under other overrides:
          // read the head (not the whole file) once and correct a format the scanner had set.
          while (inflight.size >= this.concurrency) await Promise.race(inflight);
          const job: Promise<void> = hashOne(entry, pid, previous, previous.checksum).finally(() => inflight.delete(job));
          inflight.add(job);
          if (backlog >= 2 * this.batchSize) await chain;
          continue;
        }
        if (unchanged) {
          report.unchanged++;
          touched.push(entry.key);
          if (touched.length >= 1000) {
            flushTouched();
            onProgress?.(snapshot()); // a rescan of unchanged files shows progress too
          }
          continue;
        }
        while (inflight.size >= this.concurrency) await Promise.race(inflight);
        const job: Promise<void> = hashOne(entry, pid, previous).finally(() => inflight.delete(job));
        inflight.add(job);
        // Constant memory: do not run ahead of the catalogue by more than two batches.
        if (backlog >= 2 * this.batchSize) await chain;
      }
    } catch (e) {
      walkError = { error: e };
    }
    await Promise.all(inflight);
    flushTouched();
    await flushPending();
    if (fatal) throw fatal.error;
    if (walkError) throw walkError.error;
    signal?.throwIfAborted();

    // An empty walk over a tree we knew files in is more likely an unmounted volume than a
    // deliberate deletion of everything: refuse rather than drop every record and its overlay.
    if (seen === 0 && !this.options.allowEmptyTree && db.prepare('SELECT 1 FROM wrap_files LIMIT 1').get() !== undefined) {
      throw new AdapterError('unavailable', `the tree ${this.options.storage.root} lists no files; not removing the catalogued ones (set allowEmptyTree to allow)`);
    }
    await this.removeUnseen(scanId, report, signal);
    if (this.options.datasets === 'folders') await this.updateDatasets(report);
    const final = snapshot();
    onProgress?.(final);
    return final;
  }

  /** Dataset maps of the folders, from the files this complete scan left in `wrap_files`. */
  private async updateDatasets(report: ScanReport): Promise<void> {
    const { stateDatabase: db, catalogue, nodeId, rightsHolder, submitter, accessPolicy } = this.options;
    this.datasets ??= new FolderDatasets({
      catalogue, db, pidRule: this.pidRule, nodeId, rightsHolder, checksumAlgorithm: this.algorithm,
      ...(submitter ? { submitter } : {}), ...(accessPolicy ? { accessPolicy } : {}),
    });
    // Paged by path, the event loop free between pages (the catalogue shares the connection).
    const page = db.prepare('SELECT path, pid, format AS formatId FROM wrap_files WHERE path > ? ORDER BY path LIMIT 1000');
    const files = async function* (): AsyncGenerator<FolderFile> {
      for (let after = ''; ;) {
        const rows = page.all(after) as FolderFile[];
        yield* rows;
        if (rows.length < 1000) return;
        after = rows[rows.length - 1]!.path;
        await new Promise((r) => setImmediate(r));
      }
    };
    const d = await this.datasets.update(files, () => this.batchStamp());
    report.added += d.published;
    report.changed += d.archived;
    report.skipped.push(...d.skipped);
  }

  /** True when an unchanged file's recorded format may no longer be what identification says. */
  private formatStale(row: StateRow): boolean {
    if (row.format === null) return true;
    const override = this.formats.overrideFor(row.path);
    return override !== undefined && override.formatId !== row.format;
  }

  /** The file's format: its override, else from its first HEAD_BYTES (read only when the name does not settle it). */
  private async identify(entry: TreeEntry, signal: AbortSignal | undefined): Promise<FormatIdentification> {
    let head: Uint8Array = new Uint8Array();
    if (entry.size > 0 && this.formats.needsContent(entry.key)) {
      try {
        head = await readHead(this.options.storage, entry.key, signal);
      } catch (e) {
        if (signal?.aborted) throw e;
        // Unreadable head: the name alone decides; the checksum step reports real read errors.
      }
    }
    return this.formats.identify(entry.key, { name: posix.basename(entry.key), head, size: entry.size });
  }

  /** The file's checksum, or undefined when it vanished or changed since it was listed or while being read. */
  private async hashFile(entry: TreeEntry, signal: AbortSignal | undefined): Promise<string | undefined> {
    const d = await this.options.storage.digest(entry.key, this.algorithm, { sizeHint: entry.size, ...(signal ? { signal } : {}) });
    if (d === undefined || d.size !== entry.size || d.mtimeMs !== entry.mtimeMs) return undefined;
    return d.checksum;
  }

  /** dateSysMetadataModified for a batch: the clock, but strictly after every stamp set before. */
  private batchStamp(): number {
    this.lastStamp = Math.max(this.now().getTime(), this.lastStamp + 1);
    return this.lastStamp;
  }

  /**
   * What one hashed file does to the catalogue, planned against the record as it is now.
   * Only size and checksum come from the file; every other field (access policy, replicas,
   * obsolescence, an administrator's edits) is the stored record's.
   */
  private async plan(item: Hashed, base: number, scanId: number): Promise<Planned | { skip: string }> {
    const catalogue = this.options.catalogue;
    const { entry, pid, previous, checksum, format } = item;
    const state: StateRow = {
      path: entry.key, pid, size: entry.size, mtime_ms: entry.mtimeMs, algorithm: this.algorithm, checksum, scan: scanId, stamp: base, format: format.formatId,
    };
    const change: CatalogueChange = {};
    // The PID rule changed since the file was last seen: its old record goes.
    if (previous && previous.pid !== pid) {
      const old = await catalogue.get(previous.pid);
      if (old && old.storageKey === entry.key) change.remove = [{ pid: previous.pid }];
    }
    const existing = await catalogue.get(pid);
    if (existing === undefined) {
      change.insert = [this.newRecord(entry, pid, checksum, base, format)];
      return { item, change, outcome: 'added', state };
    }
    if (existing.storageKey !== entry.key) return { skip: `identifier ${pid} is already used by another object` };
    // The scanner corrects only a format it set itself (an administrator's choice stays).
    const setByScanner = previous?.format ?? this.legacyFormat(entry.key);
    const reformat = existing.sysmeta.formatId === setByScanner && existing.sysmeta.formatId !== format.formatId;
    const next = rescannedRecord(existing.sysmeta, { size: entry.size, algorithm: this.algorithm, checksum, ...(reformat ? { reformat: format } : {}) }, base);
    state.stamp = next.stamp;
    // Touched, hashed again after a lost cache row, or recorded by a concurrent scan: same bytes, nothing to tell the CN.
    if (next.outcome === 'unchanged') return { item, change, outcome: 'unchanged', state };
    this.lastStamp = Math.max(this.lastStamp, next.stamp);
    change.replace = [{ pid, expectedSerialVersion: existing.sysmeta.serialVersion, sysmeta: next.sysmeta }];
    return { item, change, outcome: 'changed', state };
  }

  private async applyBatch(items: Hashed[], scanId: number, report: ScanReport): Promise<void> {
    const catalogue = this.options.catalogue;
    const base = this.batchStamp();
    const changes: Planned[] = [];
    const kept: string[] = [];
    for (const item of items) {
      const p = await this.plan(item, base, scanId);
      if ('skip' in p) {
        report.skipped.push({ path: item.entry.key, reason: p.skip });
        kept.push(item.entry.key);
      } else changes.push(p);
    }

    const merged: CatalogueChange = { insert: [], replace: [], remove: [] };
    for (const { change } of changes) {
      merged.insert!.push(...(change.insert ?? []));
      merged.replace!.push(...(change.replace ?? []));
      merged.remove!.push(...(change.remove ?? []));
    }
    let applied = changes;
    try {
      if (merged.insert!.length + merged.replace!.length + merged.remove!.length > 0) await catalogue.apply!(merged);
    } catch (e) {
      if (!AdapterError.is(e) || e.kind === 'unavailable' || e.kind === 'internal') throw e;
      // One change lost a race (a concurrent scan or an administrator's update got there
      // first) or was refused: the others go on their own, and the loser is planned again
      // against the record as it is now.
      applied = [];
      for (const c of changes) {
        const done = await this.applyOne(c, base, scanId, report);
        if (done) applied.push(done);
        else kept.push(c.item.entry.key);
      }
    }

    const db = this.options.stateDatabase;
    // max(): a concurrent scan with a later scan number may have seen the file already; never
    // move its mark back, or that scan would take the file for gone.
    const upsert = db.prepare(`INSERT INTO wrap_files (path, pid, size, mtime_ms, algorithm, checksum, scan, stamp, format)
      VALUES (@path, @pid, @size, @mtime_ms, @algorithm, @checksum, @scan, @stamp, @format)
      ON CONFLICT (path) DO UPDATE SET pid = excluded.pid, size = excluded.size, mtime_ms = excluded.mtime_ms,
        algorithm = excluded.algorithm, checksum = excluded.checksum, scan = max(scan, excluded.scan), stamp = max(stamp, excluded.stamp),
        format = excluded.format`);
    const keep = db.prepare('UPDATE wrap_files SET scan = max(scan, ?) WHERE path = ?');
    db.transaction(() => {
      for (const c of applied) upsert.run(c.state);
      // Not recorded this time, but seen: keep the record (a file is removed only when it is gone).
      for (const path of kept) keep.run(scanId, path);
    })();
    for (const c of applied) report[c.outcome]++;
  }

  /**
   * Applies one planned change; when it loses a compare-and-set or an insert race, plans it
   * again from the record as it is now (up to 5 times). Undefined when it is not applied.
   */
  private async applyOne(first: Planned, base: number, scanId: number, report: ScanReport): Promise<Planned | undefined> {
    const catalogue = this.options.catalogue;
    const path = first.item.entry.key;
    let c: Planned = first;
    for (let attempt = 1; ; attempt++) {
      try {
        if (c.change.insert || c.change.replace || c.change.remove) await catalogue.apply!(c.change);
        return c;
      } catch (e) {
        if (!AdapterError.is(e) || e.kind === 'unavailable' || e.kind === 'internal') throw e;
        const raced = e.kind === 'conflict' || e.kind === 'already-exists' || e.kind === 'not-found';
        if (!raced || attempt >= 5) {
          report.skipped.push({ path, reason: `catalogue refused it (${e.kind}): ${e.message}` });
          return undefined;
        }
      }
      if (await this.stale(c.item)) return undefined;
      const again = await this.plan(c.item, base, scanId);
      if ('skip' in again) {
        report.skipped.push({ path, reason: again.skip });
        return undefined;
      }
      c = again;
    }
  }

  /**
   * Whether a lost race is better left to the next scan: a concurrent scan recorded this file
   * since it was listed (its record and cache row agree), or the file changed since it was
   * hashed. Writing ours then could put older bytes' checksum over newer ones for good.
   */
  private async stale(item: Hashed): Promise<boolean> {
    const row = this.options.stateDatabase.prepare('SELECT * FROM wrap_files WHERE path = ?').get(item.entry.key) as StateRow | undefined;
    const prev = item.previous;
    if (row !== undefined && (prev === undefined || row.mtime_ms !== prev.mtime_ms || row.size !== prev.size || row.checksum !== prev.checksum)) return true;
    const now = await this.options.storage.statEntry(item.entry.key);
    return now === undefined || now.mtimeMs !== item.entry.mtimeMs || now.size !== item.entry.size;
  }

  /**
   * Removes the records of files the completed walk did not see and that are really gone:
   * each is looked up in the tree once more, since a file a concurrent scan recorded, or one
   * whose update raced, is no reason to drop a record and its overlay.
   */
  private async removeUnseen(scanId: number, report: ScanReport, signal: AbortSignal | undefined): Promise<void> {
    const db = this.options.stateDatabase;
    const catalogue = this.options.catalogue;
    const page = db.prepare('SELECT path, pid FROM wrap_files WHERE scan < ? AND path > ? ORDER BY path LIMIT ?');
    const drop = db.prepare('DELETE FROM wrap_files WHERE path = ? AND scan < ?');
    const keep = db.prepare('UPDATE wrap_files SET scan = max(scan, ?) WHERE path = ?');
    let after = '';
    for (;;) {
      signal?.throwIfAborted();
      const rows = page.all(scanId, after, this.batchSize) as Array<{ path: string; pid: string }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.path;
      const remove: Array<{ pid: string; path: string }> = [];
      const forget: string[] = [];
      const present: string[] = [];
      for (const row of rows) {
        if (await this.options.storage.statEntry(row.path, signal ? { signal } : {}) !== undefined) {
          present.push(row.path);
          continue;
        }
        const record = await catalogue.get(row.pid);
        if (record && record.storageKey === row.path) remove.push(row);
        else forget.push(row.path);
      }
      const done: string[] = [...forget];
      try {
        if (remove.length > 0) await catalogue.apply!({ remove: remove.map(({ pid }) => ({ pid })) });
        done.push(...remove.map((r) => r.path));
        report.removed += remove.length;
      } catch (e) {
        if (!AdapterError.is(e) || e.kind === 'unavailable' || e.kind === 'internal') throw e;
        for (const r of remove) {
          try {
            await catalogue.apply!({ remove: [{ pid: r.pid }] });
            report.removed++;
            done.push(r.path);
          } catch (e2) {
            if (AdapterError.is(e2, 'not-found')) done.push(r.path);
            else report.skipped.push({ path: r.path, reason: `could not remove ${r.pid}: ${describe(e2)}` });
          }
        }
      }
      db.transaction(() => {
        for (const path of done) drop.run(path, scanId);
        for (const path of present) keep.run(scanId, path);
      })();
    }
  }

  private newRecord(entry: TreeEntry, pid: string, checksum: string, stamp: number, format: FormatIdentification): ObjectRecord {
    const fileName = posix.basename(entry.key);
    const { rightsHolder, submitter, accessPolicy, nodeId } = this.options;
    const sysmeta: StoredSystemMetadata = {
      serialVersion: 1,
      identifier: pid,
      formatId: format.formatId,
      size: entry.size,
      checksum: { algorithm: this.algorithm, value: checksum },
      submitter: submitter ?? rightsHolder,
      rightsHolder,
      archived: false,
      // The file's modification time when first seen: when the content came to be in the archive.
      dateUploaded: new Date(Math.min(entry.mtimeMs, stamp)),
      dateSysMetadataModified: new Date(stamp),
      originMemberNode: nodeId,
      authoritativeMemberNode: nodeId,
      replica: [],
      mediaType: { name: format.mediaType, property: [] },
      fileName,
    };
    if (accessPolicy) sysmeta.accessPolicy = structuredClone(accessPolicy);
    return { sysmeta, storageKey: entry.key, isReplica: false };
  }

  /** The format scanners before identification by content gave a file (extension override, else the list's first entry for the extension). */
  private legacyFormat(path: string): string {
    const fileName = posix.basename(path);
    const dot = fileName.lastIndexOf('.');
    const ext = dot > 0 ? fileName.slice(dot + 1).toLowerCase() : '';
    return (ext ? this.options.formatOverrides?.[ext] : undefined) ?? formatForFileName(fileName).formatId;
  }
}

/** The first HEAD_BYTES of a file in the tree (fewer when it is shorter). */
async function readHead(storage: TreeStorageAdapter, key: string, signal: AbortSignal | undefined): Promise<Uint8Array> {
  const read = await storage.read(key, { range: { start: 0, end: HEAD_BYTES - 1 }, ...(signal ? { signal } : {}) });
  if (read === undefined) return new Uint8Array();
  const chunks: Buffer[] = [];
  let length = 0;
  try {
    for await (const chunk of read.stream) {
      chunks.push(chunk as Buffer);
      length += (chunk as Buffer).length;
      if (length >= HEAD_BYTES) break;
    }
  } finally {
    read.stream.destroy();
  }
  return new Uint8Array(Buffer.concat(chunks, Math.min(length, HEAD_BYTES)));
}

function describe(e: unknown): string {
  if (AdapterError.is(e)) return `${e.kind}: ${e.message}`;
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code ?? (e instanceof Error ? e.message : String(e));
}

/** A scanner keeping `options.catalogue` in step with `options.storage`. No I/O until `scan()`. */
export function createTreeScanner(options: TreeScannerOptions): TreeScanner {
  return new TreeScanner(options);
}
