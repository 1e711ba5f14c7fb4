import { randomUUID } from 'node:crypto';
import { posix } from 'node:path';
import {
  AdapterError,
  formatForFileName,
  identifierProblem,
  rescannedRecord,
  type AccessPolicy,
  type CatalogueChange,
  type ChecksumAlgorithmName,
  type CatalogueAdapter,
  type ObjectRecord,
  type ScanStateRow,
  type ScanStateStore,
  type StorageEntry,
  type StoredSystemMetadata,
} from '@memberkit/types';
import { FolderDatasets, FormatRules, FormatRulesError, type FolderFile, type FormatIdentification } from '@memberkit/science';
import type { CatalogueCommit } from '../services/catalogue-writer.js';
import type { ObjectChange } from '../extension.js';
import { EntryExaminer } from './entry-examiner.js';
import { pagesAhead } from './pages-ahead.js';
import { emptyReport, logScan, type ScanLogger, type ScanReport } from './scan-report.js';
import { isWrapStorage, pidFromPath, type WrapStorage } from './wrap-storage.js';

/** Where the scanner's changes go: the core's CatalogueWriter (events logged, extensions told). */
export interface CatalogueCommitter {
  commit(commit: CatalogueCommit): Promise<unknown>;
}

export interface WrapScannerOptions {
  /** The wrapped storage (capabilities.list). */
  storage: WrapStorage;
  /** Name of the wrapped root in the scan state: the tree's path, `s3://bucket/prefix`. */
  root: string;
  /** Records are read here (get, seriesMembers)... */
  catalogue: CatalogueAdapter;
  /** ...and every change is written through here. */
  writer: CatalogueCommitter;
  /** Scan state and the root's lease (usually the catalogue's store). */
  state: ScanStateStore;
  /** originMemberNode and authoritativeMemberNode of every object; also the events' subject. */
  nodeId: string;
  /** PID of an entry from its key. Default `pidFromPath`. A PID breaking the identifier rules is skipped and reported. */
  pidRule?: (key: string) => string;
  /** Glob or extension → formatId, before identification by content (@memberkit/science FormatRules). */
  formatOverrides?: Record<string, string>;
  /** formatIds outside the federation's list that may be published. */
  extraFormats?: string[];
  rightsHolder: string;
  /** Default: the rightsHolder. */
  submitter?: string;
  /** Access policy of new objects. Default none (only the rightsHolder may read). */
  accessPolicy?: AccessPolicy;
  /**
   * Default: the storage's first native digest (an S3 ETag's MD5: no byte is read for it), else
   * SHA-1. The old bucket scanner used MD5, the old tree scanner SHA-1: existing scan state stays valid.
   */
  checksumAlgorithm?: ChecksumAlgorithmName;
  /** Entries examined at once. Default 64. */
  concurrency?: number;
  /** Catalogue changes per commit. Default 500. */
  batchSize?: number;
  /** A partial batch is committed at the latest this long after its first entry was hashed. Default 1000 ms. */
  flushIntervalMs?: number;
  now?: () => Date;
  /**
   * Let a scan that lists nothing remove every catalogued object. Default false: such a scan
   * fails with kind 'unavailable' (an unmounted volume or a wrong prefix looks like an empty root).
   */
  allowEmpty?: boolean;
  logger?: ScanLogger;
  /** 'folders': publish a generated resource map per dataset folder after each complete scan. */
  datasets?: 'folders' | false;
  /** Lease holder name (default: a random id per scanner). */
  holder?: string;
  /** Lease duration, renewed while a scan runs. Default 60 s. */
  leaseMs?: number;
}

export interface ScanOptions {
  signal?: AbortSignal;
  /** Called after each batch reaches the catalogue, with the counts so far. */
  onProgress?: (report: ScanReport) => void;
  /** Wait for the root's lease instead of skipping the scan when another scanner holds it. */
  waitForLease?: boolean;
  /** For tests only: where a scan waits so that tests can overlap scans for certain (see ScanPause). */
  pause?: ScanPause;
}

/**
 * Awaited by a scan at two points, so a test can hold it there while other scans or changes
 * happen: 'apply' after a batch was planned against the catalogue and before it is committed
 * (with the batch's keys), 'remove' after a complete listing and before unseen entries are
 * looked at again (no keys). Production scans pass none.
 */
export type ScanPause = (point: 'apply' | 'remove', keys: readonly string[]) => Promise<void>;

export interface WatchOptions {
  /** Pause between the end of one scan and the start of the next. Default 60 s. */
  intervalMs?: number;
  onError?: (error: unknown) => void;
  onScan?: (report: ScanReport) => void;
}

/** A listed entry on its way to the catalogue. */
interface Candidate {
  entry: StorageEntry;
  pid: string;
  previous: ScanStateRow | undefined;
  /** Same bytes as recorded: only the format is identified again. */
  known?: string;
}

interface Hashed extends Candidate {
  checksum: string;
  format: FormatIdentification;
}

/** A hashed entry's change, planned against the catalogue's record as it is now. */
interface Planned {
  item: Hashed;
  change: CatalogueChange;
  outcome: 'added' | 'changed' | 'unchanged';
  state: ScanStateRow;
}

const ACTOR_FIELDS = { ipAddress: '127.0.0.1', userAgent: 'memberkit wrap scanner' };

/** Hashed entries waiting for the catalogue, in batches, at most. */
const MAX_BACKLOG_BATCHES = 2;

/** Listed entries are looked up in the scan state a page at a time... */
const LIST_PAGE = 256;
/**
 * ...and read this many pages ahead of the examination. Without it a tree scan waited at every
 * directory for its listing and lstats (queued behind the hashing on the file workers): a fifth
 * of the main thread idle.
 */
const LIST_PAGES_AHEAD = 4;

/**
 * Keeps the catalogue in step with a wrapped storage (wrap mode), for any StorageAdapter that
 * lists: every listed entry becomes an object whose storage key is the entry's key.
 *
 * - Checksums are computed once and remembered in the scan state by (key, size, version): an
 *   unchanged entry is never read again. New objects reach the catalogue in batches as soon as
 *   they are hashed, so the node answers while the rest of a large root is still read.
 * - Every change goes through the core's CatalogueWriter: events are logged (`create`,
 *   `update`, `delete`) and extensions (query index, views) hear of it at once.
 * - A changed entry replaces its record by `rescannedRecord` (serialVersion + 1, size and
 *   checksum from the bytes, everything else, access policy included, from the stored record).
 * - One scanner at a time per root, across processes: a scan takes the root's lease in the
 *   scan state first; a scanner that finds it held skips (logged at debug).
 * - A change that loses a race is planned again from the record as it is now; an entry is
 *   removed only after a complete, successful listing AND a fresh look at the storage that
 *   finds it absent. An empty listing over a root with recorded entries fails (`allowEmpty`).
 */
export class WrapScanner {
  readonly options: Readonly<WrapScannerOptions>;
  private readonly algorithm: ChecksumAlgorithmName;
  private readonly concurrency: number;
  private readonly batchSize: number;
  private readonly flushIntervalMs: number;
  private readonly now: () => Date;
  private readonly pidRule: (key: string) => string;
  private readonly formats: FormatRules;
  private readonly examiner: EntryExaminer;
  private readonly holder: string;
  private readonly leaseMs: number;
  private lastStamp = 0;
  private datasets: FolderDatasets | undefined;
  private running: Promise<ScanReport> | undefined;
  private queued: Promise<ScanReport> | undefined;

  constructor(options: WrapScannerOptions) {
    if (!isWrapStorage(options.storage)) throw new AdapterError('unsupported', 'wrap mode needs a storage that lists its entries (capabilities.list)');
    this.options = { ...options };
    this.algorithm = options.checksumAlgorithm ?? options.storage.capabilities.nativeChecksums[0] ?? 'SHA-1';
    this.concurrency = Math.max(1, Math.trunc(options.concurrency ?? 64));
    this.batchSize = Math.max(1, Math.trunc(options.batchSize ?? 500));
    this.flushIntervalMs = Math.max(0, options.flushIntervalMs ?? 1000);
    this.now = options.now ?? (() => new Date());
    this.pidRule = options.pidRule ?? ((key) => pidFromPath(key));
    this.holder = options.holder ?? `${options.nodeId}:${randomUUID()}`;
    this.leaseMs = Math.max(1000, options.leaseMs ?? 60_000);
    try {
      this.formats = new FormatRules({ overrides: options.formatOverrides ?? {}, extraFormats: options.extraFormats ?? [] });
    } catch (e) {
      if (e instanceof FormatRulesError) throw new AdapterError('invalid', e.message);
      throw e;
    }
    this.examiner = new EntryExaminer(options.storage, this.algorithm, this.formats);
  }

  /**
   * Brings the catalogue in step with the storage. Scans of one scanner never overlap: a call
   * made while one runs waits for it and then runs one more (shared by every caller waiting).
   */
  scan(options?: ScanOptions): Promise<ScanReport> {
    if (this.running === undefined) {
      const run = this.leased(options ?? {}).finally(() => {
        if (this.running === run) this.running = undefined;
      });
      this.running = run;
      return run;
    }
    this.queued ??= this.running.catch(() => undefined).then(() => {
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
          logScan(this.options.logger, `wrap rescan of ${this.options.root}`, report);
          options?.onScan?.(report);
        },
        (e: unknown) => {
          if (stopped) return;
          this.options.logger?.error?.({ err: e }, `wrap rescan of ${this.options.root} failed`);
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

  /** One scan under the root's lease (renewed while it runs; a lost lease aborts the scan). */
  private async leased(options: ScanOptions): Promise<ScanReport> {
    const { state, root } = this.options;
    while (!(await state.tryAcquire(root, this.holder, this.leaseMs))) {
      if (!options.waitForLease) return { ...emptyReport(), leased: false };
      options.signal?.throwIfAborted();
      await new Promise((r) => setTimeout(r, Math.min(1000, this.leaseMs / 4)));
    }
    const controller = new AbortController();
    const forward = (): void => controller.abort(options.signal?.reason);
    options.signal?.addEventListener('abort', forward, { once: true });
    if (options.signal?.aborted) forward();
    const renewal = setInterval(() => {
      state.renew(root, this.holder, this.leaseMs).then(
        (held) => {
          if (!held) controller.abort(new AdapterError('unavailable', `the scan lease of ${root} was lost`));
        },
        () => undefined, // a failed renewal is retried at the next tick; the lease outlives several
      );
    }, Math.max(250, this.leaseMs / 3));
    try {
      return await this.run({ ...options, signal: controller.signal });
    } finally {
      clearInterval(renewal);
      options.signal?.removeEventListener('abort', forward);
      await state.release(root, this.holder).catch(() => undefined);
    }
  }

  private async run({ signal, onProgress, pause }: ScanOptions): Promise<ScanReport> {
    const started = performance.now();
    signal?.throwIfAborted();
    const { state, root } = this.options;
    const scanId = (await state.lastScan(root)) + 1;
    const report = emptyReport();
    const snapshot = (): ScanReport => ({ ...report, skipped: [...report.skipped], durationMs: performance.now() - started });

    let touched: string[] = [];
    const flushTouched = async (): Promise<void> => {
      const keys = touched;
      touched = [];
      await state.touch(root, keys, scanId);
    };

    let pending: Hashed[] = [];
    let chain: Promise<void> = Promise.resolve();
    let fatal: { error: unknown } | undefined;
    let timer: NodeJS.Timeout | undefined;
    let backlog = 0; // hashed entries not yet committed
    // Wakes a start() waiting for the backlog to shrink, once a batch has been committed.
    let batchCommitted: (() => void) | undefined;
    const flushPending = (): Promise<void> => {
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      const items = pending;
      pending = [];
      if (items.length > 0) {
        chain = chain.then(async () => {
          if (fatal) return;
          try {
            await this.applyBatch(items, scanId, report, pause);
            onProgress?.(snapshot());
          } catch (e) {
            fatal = { error: e };
          } finally {
            backlog -= items.length;
            const wake = batchCommitted;
            batchCommitted = undefined;
            wake?.();
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
    const examineOne = async (c: Candidate): Promise<void> => {
      try {
        const examined = await this.examiner.examine(c.entry, signal, c.known);
        if (examined === undefined) {
          report.skipped.push({ path: c.entry.key, reason: 'changed or removed while being read; retried at the next scan' });
          if (c.previous) touched.push(c.entry.key);
          return;
        }
        report.bytesHashed! += examined.bytesRead;
        if (examined.native) report.fromNative!++;
        enqueue({ ...c, checksum: examined.checksum, format: examined.format });
      } catch (e) {
        if (signal?.aborted) return;
        if (AdapterError.is(e, 'unavailable')) {
          fatal ??= { error: e };
          return;
        }
        report.skipped.push({ path: c.entry.key, reason: `could not be read: ${describe(e)}` });
        // A read error is not proof that the entry is gone: keep its record.
        if (c.previous) touched.push(c.entry.key);
      }
    };
    // One caller waits for a free slot at a time (consider() starts entries in turn): a single
    // resolver, not Promise.race over every job in flight (a reaction per job per wait).
    let slotFreed: (() => void) | undefined;
    const start = async (c: Candidate): Promise<void> => {
      while (inflight.size >= this.concurrency) await new Promise<void>((resolve) => (slotFreed = resolve));
      const job: Promise<void> = examineOne(c).finally(() => {
        inflight.delete(job);
        const wake = slotFreed;
        slotFreed = undefined;
        wake?.();
      });
      inflight.add(job);
      // Constant memory: never run ahead of the catalogue by more than MAX_BACKLOG_BATCHES.
      // Waiting for the next batch's commit, not the whole chain's: before, the scan stopped
      // until the last batch queued was committed and its WAL synced (an fdatasync of several
      // milliseconds every batch, the main thread idle meanwhile).
      while (backlog >= MAX_BACKLOG_BATCHES * this.batchSize && !fatal) await new Promise<void>((resolve) => (batchCommitted = resolve));
    };

    /** Listed entries, looked up in the scan state a page at a time. */
    const consider = async (entries: StorageEntry[]): Promise<void> => {
      const rows = await state.getMany(root, entries.map((e) => e.key));
      for (const entry of entries) {
        if (fatal) return;
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
        const previous = rows.get(entry.key);
        const unchanged = previous !== undefined && entry.version !== undefined && previous.pid === pid && previous.size === entry.size
          && previous.version === entry.version && previous.algorithm === this.algorithm;
        if (unchanged && this.formatStale(previous)) {
          // Same bytes, recorded before identification by content or under other overrides:
          // read the head (not the whole entry) once and correct a format the scanner had set.
          await start({ entry, pid, previous, known: previous.checksum });
        } else if (unchanged) {
          report.unchanged++;
          touched.push(entry.key);
          if (touched.length >= 1000) {
            await flushTouched();
            onProgress?.(snapshot()); // a rescan of unchanged entries shows progress too
          }
        } else {
          await start({ entry, pid, previous });
        }
      }
    };

    let walkError: { error: unknown } | undefined;
    try {
      const listOptions = { ...(signal ? { signal } : {}), onSkip: (path: string, reason: string) => report.skipped.push({ path, reason }) };
      // Pages of the listing are read ahead of the examination, so the storage's waits (a
      // directory's next entries, a bucket's next page) overlap the hashing instead of stalling it.
      for await (const page of pagesAhead(this.options.storage.list(listOptions), LIST_PAGE, LIST_PAGES_AHEAD)) {
        if (fatal) break;
        report.seen! += page.length;
        await consider(page);
      }
    } catch (e) {
      walkError = { error: e };
    }
    await Promise.all(inflight);
    await flushTouched();
    await flushPending();
    if (fatal) throw fatal.error;
    if (walkError) throw walkError.error;
    signal?.throwIfAborted();

    // An empty listing over a root we knew entries in is more likely an unmounted volume or a
    // wrong prefix than a deliberate deletion of everything: refuse rather than drop them all.
    if (report.seen === 0 && !this.options.allowEmpty && await state.hasEntries(root)) {
      throw new AdapterError('unavailable', `${root} lists nothing; not removing the catalogued objects (set allowEmpty to allow)`);
    }
    await pause?.('remove', []);
    await this.removeUnseen(scanId, report, signal);
    if (this.options.datasets === 'folders') await this.updateDatasets(report);
    const final = snapshot();
    onProgress?.(final);
    return final;
  }

  /** True when an unchanged entry's recorded format may no longer be what identification says. */
  private formatStale(row: ScanStateRow): boolean {
    if (row.format === null) return true;
    const override = this.formats.overrideFor(row.key);
    return override !== undefined && override.formatId !== row.format;
  }

  /** dateSysMetadataModified proposed for a batch: the clock, strictly after every stamp proposed before. */
  private batchStamp(): number {
    this.lastStamp = Math.max(this.now().getTime(), this.lastStamp + 1);
    return this.lastStamp;
  }

  /**
   * What one hashed entry does to the catalogue, planned against the record as it is now.
   * Only size and checksum (and a format the scanner set) come from the bytes.
   */
  private async plan(item: Hashed, base: number, scanId: number, records?: ReadonlyMap<string, ObjectRecord>): Promise<Planned | { skip: string }> {
    const catalogue = this.options.catalogue;
    const { entry, pid, previous, checksum, format } = item;
    const state: ScanStateRow = {
      key: entry.key, pid, size: entry.size, version: entry.version ?? '', algorithm: this.algorithm, checksum, format: format.formatId, scan: scanId,
    };
    const change: CatalogueChange = {};
    // The PID rule changed since the entry was last seen: its old record goes.
    if (previous && previous.pid !== pid) {
      const old = await catalogue.get(previous.pid);
      if (old && old.storageKey === entry.key) change.remove = [{ pid: previous.pid }];
    }
    const existing = records ? records.get(pid) : await catalogue.get(pid);
    if (existing === undefined) {
      change.insert = [this.newRecord(entry, pid, checksum, base, format)];
      return { item, change, outcome: 'added', state };
    }
    if (existing.storageKey !== entry.key) return { skip: `identifier ${pid} is already used by another object` };
    // The scanner corrects only a format it set itself (an administrator's choice stays).
    const setByScanner = previous?.format ?? this.legacyFormat(entry.key);
    const reformat = existing.sysmeta.formatId === setByScanner && existing.sysmeta.formatId !== format.formatId;
    const next = rescannedRecord(existing.sysmeta, { size: entry.size, algorithm: this.algorithm, checksum, ...(reformat ? { reformat: format } : {}) }, base);
    // Touched, hashed again after a lost state row, or recorded by a concurrent scan: nothing to tell.
    if (next.outcome === 'unchanged') return { item, change, outcome: 'unchanged', state };
    change.replace = [{ pid, expectedSerialVersion: existing.sysmeta.serialVersion, sysmeta: next.sysmeta }];
    return { item, change, outcome: 'changed', state };
  }

  private async applyBatch(items: Hashed[], scanId: number, report: ScanReport, pause: ScanPause | undefined): Promise<void> {
    const base = this.batchStamp();
    const planned: Planned[] = [];
    const kept: string[] = [];
    // The batch's records in one read where the catalogue can (a lookup per entry costs more
    // than the entry's share of the commit); a change that loses a race is planned again below.
    const records = await this.options.catalogue.getMany?.(items.map((item) => item.pid));
    for (const item of items) {
      const p = await this.plan(item, base, scanId, records);
      if ('skip' in p) {
        report.skipped.push({ path: item.entry.key, reason: p.skip });
        kept.push(item.entry.key);
      } else planned.push(p);
    }
    const merged: CatalogueChange = {
      insert: planned.flatMap((p) => p.change.insert ?? []),
      replace: planned.flatMap((p) => p.change.replace ?? []),
      remove: planned.flatMap((p) => p.change.remove ?? []),
    };
    await pause?.('apply', planned.map((p) => p.item.entry.key));
    let applied = planned;
    try {
      await this.commit(merged);
    } catch (e) {
      if (!AdapterError.is(e) || e.kind === 'unavailable' || e.kind === 'internal') throw e;
      // One change lost a race (a concurrent scan or an administrator got there first) or was
      // refused: the others go on their own, and the loser is planned again from the record.
      applied = [];
      for (const p of planned) {
        const done = await this.applyOne(p, base, scanId, report);
        if (done) applied.push(done);
        else kept.push(p.item.entry.key);
      }
    }
    await this.options.state.put(this.options.root, applied.map((p) => p.state));
    // Not recorded this time, but seen: keep the row (an entry is removed only when it is gone).
    await this.options.state.touch(this.options.root, kept, scanId);
    for (const p of applied) report[p.outcome]++;
  }

  /**
   * Commits one planned change; when it loses a compare-and-set or an insert race, re-reads the
   * record and plans again (up to 5 times). Undefined when it is not applied (the entry is
   * then kept as it is and looked at again by the next scan, never removed for it).
   */
  private async applyOne(first: Planned, base: number, scanId: number, report: ScanReport): Promise<Planned | undefined> {
    const path = first.item.entry.key;
    let p: Planned = first;
    for (let attempt = 1; ; attempt++) {
      try {
        await this.commit(p.change);
        return p;
      } catch (e) {
        if (!AdapterError.is(e) || e.kind === 'unavailable' || e.kind === 'internal') throw e;
        const raced = e.kind === 'conflict' || e.kind === 'already-exists' || e.kind === 'not-found';
        if (!raced || attempt >= 5) {
          report.skipped.push({ path, reason: `catalogue refused it (${e.kind}): ${e.message}` });
          return undefined;
        }
      }
      const again = await this.plan(p.item, base, scanId);
      if ('skip' in again) {
        report.skipped.push({ path, reason: again.skip });
        return undefined;
      }
      p = again;
    }
  }

  /**
   * Removes the records of entries the complete listing did not show and that are really gone:
   * each is looked up in the storage once more, since an entry that a concurrent change or a
   * lost race left unmarked is no reason to drop a record and its access policy.
   */
  private async removeUnseen(scanId: number, report: ScanReport, signal: AbortSignal | undefined): Promise<void> {
    const { state, root, catalogue, storage } = this.options;
    let after = '';
    for (;;) {
      signal?.throwIfAborted();
      const rows = await state.unseen(root, scanId, after, this.batchSize);
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.key;
      const remove: ObjectRecord[] = [];
      const forget: string[] = [];
      const present: string[] = [];
      for (const row of rows) {
        const now = storage.entry ? await storage.entry(row.key, signal ? { signal } : {}) : await storage.stat(row.key, signal ? { signal } : {});
        if (now !== undefined) {
          present.push(row.key);
          continue;
        }
        const record = await catalogue.get(row.pid);
        if (record && record.storageKey === row.key) remove.push(record);
        else forget.push(row.key);
      }
      const done = [...forget];
      try {
        await this.commit({ remove: remove.map((r) => ({ pid: r.sysmeta.identifier })) });
        done.push(...remove.map((r) => r.storageKey));
        report.removed += remove.length;
      } catch (e) {
        if (!AdapterError.is(e) || e.kind === 'unavailable' || e.kind === 'internal') throw e;
        for (const r of remove) {
          try {
            await this.commit({ remove: [{ pid: r.sysmeta.identifier }] });
            report.removed++;
            done.push(r.storageKey);
          } catch (e2) {
            if (AdapterError.is(e2, 'not-found')) done.push(r.storageKey);
            else report.skipped.push({ path: r.storageKey, reason: `could not remove ${r.sysmeta.identifier}: ${describe(e2)}` });
          }
        }
      }
      await state.forget(root, done, scanId);
      await state.touch(root, present, scanId);
    }
  }

  /**
   * Writes a change through the core's writer: one event per object (`create`, `update`,
   * `delete`) and a notice for the extensions, so a query right after the scan sees it.
   */
  private async commit(change: CatalogueChange): Promise<void> {
    const inserts = change.insert ?? [];
    const replaces = change.replace ?? [];
    const removes = change.remove ?? [];
    if (inserts.length + replaces.length + removes.length === 0) return;
    const events: Array<{ event: string; pid: string }> = [];
    const notices: ObjectChange[] = [];
    for (const r of removes) {
      events.push({ event: 'delete', pid: r.pid });
      notices.push({ kind: 'delete', pid: r.pid });
    }
    for (const r of inserts) {
      events.push({ event: 'create', pid: r.sysmeta.identifier });
      notices.push({ kind: 'create', pid: r.sysmeta.identifier, record: r });
    }
    for (const r of replaces) {
      events.push({ event: 'update', pid: r.pid });
      const record = await this.options.catalogue.get(r.pid).catch(() => undefined);
      notices.push({ kind: r.sysmeta.archived && record && !record.sysmeta.archived ? 'archive' : 'update', pid: r.pid, record: { sysmeta: r.sysmeta, storageKey: record?.storageKey ?? '', isReplica: record?.isReplica ?? false } });
    }
    await this.options.writer.commit({
      change: { ...(inserts.length ? { insert: inserts } : {}), ...(replaces.length ? { replace: replaces } : {}), ...(removes.length ? { remove: removes } : {}) },
      events,
      actor: { subject: this.options.nodeId || 'memberkit-wrap', ...ACTOR_FIELDS },
      notices,
    });
  }

  /** Dataset maps of the folders, from the entries this complete scan left in the scan state. */
  private async updateDatasets(report: ScanReport): Promise<void> {
    const { state, root, catalogue, nodeId, rightsHolder, submitter, accessPolicy } = this.options;
    this.datasets ??= new FolderDatasets({
      catalogue, state, root, commit: (change) => this.commit(change), pidRule: this.pidRule, nodeId, rightsHolder, checksumAlgorithm: this.algorithm,
      ...(submitter ? { submitter } : {}), ...(accessPolicy ? { accessPolicy } : {}),
    });
    const files = async function* (): AsyncGenerator<FolderFile> {
      for (let after = ''; ;) {
        const rows = await state.page(root, after, 1000);
        for (const r of rows) yield { path: r.key, pid: r.pid, formatId: r.format };
        if (rows.length < 1000) return;
        after = rows[rows.length - 1]!.key;
      }
    };
    const d = await this.datasets.update(files, () => this.batchStamp());
    report.added += d.published;
    report.changed += d.archived;
    report.skipped.push(...d.skipped);
  }

  private newRecord(entry: StorageEntry, pid: string, checksum: string, stamp: number, format: FormatIdentification): ObjectRecord {
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
      // The entry's modification time when first seen: when the content came to be in the archive.
      dateUploaded: new Date(Math.min(entry.modified.getTime(), stamp)),
      dateSysMetadataModified: new Date(stamp),
      originMemberNode: nodeId,
      authoritativeMemberNode: nodeId,
      replica: [],
      mediaType: { name: format.mediaType, property: [] },
      fileName: posix.basename(entry.key),
    };
    if (accessPolicy) sysmeta.accessPolicy = structuredClone(accessPolicy);
    return { sysmeta, storageKey: entry.key, isReplica: false };
  }

  /** The format scanners gave an entry before identification by content (extension override, else the list's first entry). */
  private legacyFormat(key: string): string {
    const fileName = posix.basename(key);
    const dot = fileName.lastIndexOf('.');
    const ext = dot > 0 ? fileName.slice(dot + 1).toLowerCase() : '';
    return (ext ? this.options.formatOverrides?.[ext] : undefined) ?? formatForFileName(fileName).formatId;
  }
}

function describe(e: unknown): string {
  if (AdapterError.is(e)) return `${e.kind}: ${e.message}`;
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code ?? (e instanceof Error ? e.message : String(e));
}

/** A scanner keeping `options.catalogue` in step with `options.storage`. No I/O until `scan()`. */
export function createWrapScanner(options: WrapScannerOptions): WrapScanner {
  return new WrapScanner(options);
}
