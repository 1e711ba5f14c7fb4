import { posix } from 'node:path';
import {
  AdapterError,
  createChecksumHash,
  formatForFileName,
  identifierProblem,
  type AccessPolicy,
  type CatalogueChange,
  type MetadataAdapter,
  type ObjectRecord,
  type StoredSystemMetadata,
  rescannedRecord,
} from '@memberkit/types';
import { FolderDatasets, FormatRules, FormatRulesError, HEAD_BYTES, type FolderFile, type FormatIdentification } from '@memberkit/science';
import type { S3BucketStorageAdapter } from './bucket-storage.js';
import type { S3Entry } from './s3-base.js';

/**
 * The part of a synchronous SQLite handle the scanner uses; a better-sqlite3 `Database`
 * (for instance the SQLite catalogue's own) fits it.
 */
export interface ScannerStateDatabase {
  exec(sql: string): unknown;
  prepare(sql: string): { get(...params: unknown[]): unknown; all(...params: unknown[]): unknown[]; run(...params: unknown[]): unknown };
}

export interface S3BucketScannerOptions {
  /** The wrapped bucket/prefix. */
  storage: S3BucketStorageAdapter;
  /** Where records go; MUST have the write side (`apply`). */
  catalogue: MetadataAdapter;
  /** Database for the scanner's own table (`s3_wrap_keys`, created when missing). */
  stateDatabase: ScannerStateDatabase;
  /** originMemberNode and authoritativeMemberNode of every object. */
  nodeId: string;
  /**
   * PID of an object from its key relative to the prefix. Default `pidFromKey` (the key with
   * whitespace, controls and `%` percent-encoded). A key whose PID breaks the identifier rules
   * is skipped and reported.
   */
  pidRule?: (key: string) => string;
  /**
   * Glob (`**\/*.eml.xml`, `data/**`) or extension (`xml`, no dot) → formatId, before the
   * format is identified from the object's first bytes, its extension, then its Content-Type
   * (see @memberkit/science FormatRules). Every value must be in the federation's list or in `extraFormats`.
   */
  formatOverrides?: Record<string, string>;
  /** formatIds outside the federation's list that may be published (by override or identification). */
  extraFormats?: string[];
  rightsHolder: string;
  /** Default: the rightsHolder. */
  submitter?: string;
  /** Access policy of new objects. Default none (only the rightsHolder may read). */
  accessPolicy?: AccessPolicy;
  /**
   * Default MD5: for objects uploaded in one part (not SSE-KMS/SSE-C) the ETag is the MD5,
   * so no byte is read. Other objects, and every object with another algorithm, are read once
   * and the digest cached by (key, size, ETag).
   */
  checksumAlgorithm?: 'SHA-1' | 'MD5' | 'SHA-256';
  /** Objects examined (HEAD, and read when needed) at once. Default 8. */
  concurrency?: number;
  /** Catalogue changes per `apply`; also the number of changed keys held in memory. Default 500. */
  batchSize?: number;
  now?: () => Date;
  /**
   * Let a scan that lists no object at all remove every catalogued one. Default false: such a
   * scan fails with kind 'unavailable' (a wrong prefix or missing permission looks like an empty bucket).
   */
  allowEmptyBucket?: boolean;
  /** Where `watch()` tells what each periodic scan changed (info) and why one failed (error). */
  logger?: ScanLogger;
  /**
   * 'folders': after each complete scan, publish a generated resource map for every key
   * "folder" holding one metadata document and data objects beside it (@memberkit/science
   * FolderDatasets); the node's storage must then be a DatasetMapStorage over the same state
   * database. Default false.
   */
  datasets?: 'folders' | false;
}

/** The part of a pino-style logger the scanner uses. */
export interface ScanLogger {
  info(fields: Record<string, unknown>, message: string): void;
  debug?(fields: Record<string, unknown>, message: string): void;
  error?(fields: Record<string, unknown>, message: string): void;
}

export interface S3ScanReport {
  added: number;
  changed: number;
  removed: number;
  unchanged: number;
  /** Objects whose checksum came from the ETag (no byte read). */
  fromEtag: number;
  skipped: Array<{ key: string; reason: string }>;
  durationMs: number;
  /** Keys listed so far (progress displays). */
  seen?: number;
}

export interface S3ScanOptions {
  signal?: AbortSignal;
  /** Called after each batch reaches the catalogue, with the counts so far. */
  onProgress?: (report: S3ScanReport) => void;
}

/** The default PID rule: the key, with whitespace, control characters and `%` percent-encoded. */
export function pidFromKey(key: string): string {
  // eslint-disable-next-line no-control-regex
  return key.replace(/[%\s\u0000-\u001f\u007f]/gu, (c) => encodeURIComponent(c));
}

interface StateRow {
  source: string;
  key: string;
  pid: string;
  size: number;
  etag: string;
  algorithm: string;
  checksum: string;
  scan: number;
  stamp: number;
  /** formatId the scanner identified for this object version (null: recorded before identification by content). */
  format: string | null;
}

/** An examined object's change, planned against the catalogue's record. */
interface Planned {
  item: Examined;
  change: CatalogueChange;
  outcome: 'added' | 'changed' | 'unchanged';
  state: StateRow;
}

interface Candidate {
  entry: S3Entry;
  pid: string;
  previous: StateRow | undefined;
  /** Unchanged bytes whose format is identified again: only the head is read. */
  reidentify?: boolean;
}

interface Examined extends Candidate {
  checksum: string;
  mediaType: string | undefined;
  format: FormatIdentification;
}

const STATE_SCHEMA = `
CREATE TABLE IF NOT EXISTS s3_wrap_keys (
  source    TEXT    NOT NULL,             -- s3://bucket/prefix of the wrapped store
  key       TEXT    NOT NULL,             -- storage key (relative to the prefix)
  pid       TEXT    NOT NULL,
  size      INTEGER NOT NULL,
  etag      TEXT    NOT NULL,             -- ETag when the checksum was computed
  algorithm TEXT    NOT NULL,
  checksum  TEXT    NOT NULL,
  scan      INTEGER NOT NULL,             -- last scan that saw the key
  stamp     INTEGER NOT NULL,             -- last dateSysMetadataModified the scanner set (epoch ms)
  PRIMARY KEY (source, key)
);
CREATE INDEX IF NOT EXISTS s3_wrap_keys_scan ON s3_wrap_keys (source, scan);
`;

/**
 * Keeps a catalogue in step with a wrapped bucket/prefix (the S3 counterpart of the
 * filesystem adapter's TreeScanner, with the same rules).
 *
 * Every listed object becomes an object whose storage key is its S3 key relative to the
 * prefix. The listing is read one ListObjectsV2 page at a time and changed keys are handled
 * in batches of `batchSize`, so memory stays flat for millions of keys. Checksums come from
 * the ETag when it is the MD5 and MD5 is the algorithm, otherwise from reading the object
 * once; either way they are cached in `s3_wrap_keys` by (key, size, ETag), so an unchanged
 * object costs nothing but its line in the listing.
 *
 * dateSysMetadataModified of every change is the scan's clock, strictly later than any stamp
 * the scanner set before and than the record's previous stamp. A changed object (other size
 * or ETag, other content) replaces its record with serialVersion + 1, keeping everything but
 * size and checksum. An object gone from the bucket is removed from the catalogue only after
 * a complete listing; an empty listing over a bucket that had objects fails (see
 * `allowEmptyBucket`). Records the scanner did not create are never touched.
 */
export class S3BucketScanner {
  readonly options: Readonly<S3BucketScannerOptions>;
  private readonly algorithm: 'SHA-1' | 'MD5' | 'SHA-256';
  private readonly concurrency: number;
  private readonly batchSize: number;
  private readonly now: () => Date;
  private readonly pidRule: (key: string) => string;
  private readonly source: string;
  private readonly formats: FormatRules;
  private lastStamp = 0;
  private schemaReady = false;
  private datasets: FolderDatasets | undefined;
  private running: Promise<S3ScanReport> | undefined;
  private queued: Promise<S3ScanReport> | undefined;

  constructor(options: S3BucketScannerOptions) {
    if (!options.catalogue.capabilities.write || !options.catalogue.apply) throw new AdapterError('unsupported', 'the scanner needs a writable catalogue');
    this.options = options;
    this.algorithm = options.checksumAlgorithm ?? 'MD5';
    this.concurrency = Math.max(1, options.concurrency ?? 8);
    this.batchSize = Math.max(1, options.batchSize ?? 500);
    this.now = options.now ?? (() => new Date());
    this.pidRule = options.pidRule ?? pidFromKey;
    this.source = `s3://${options.storage.bucket}/${options.storage.prefix}`;
    try {
      this.formats = new FormatRules({ overrides: options.formatOverrides ?? {}, extraFormats: options.extraFormats ?? [] });
    } catch (e) {
      if (e instanceof FormatRulesError) throw new AdapterError('invalid', e.message);
      throw e;
    }
  }

  /** Runs one scan; a call while one runs waits for it and then runs one more (at most one queued). */
  scan(options?: S3ScanOptions): Promise<S3ScanReport> {
    if (this.running === undefined) {
      const run = this.run(options ?? {}).finally(() => {
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
   * Rescans periodically: the first scan starts at once, each next one `intervalMs` (default
   * 60 s) after the previous one ended. Failed scans go to `onError` and are retried at the next
   * interval. `stop()` aborts a scan in progress and resolves when it has ended.
   */
  watch(options?: { intervalMs?: number; onError?: (error: unknown) => void; onScan?: (report: S3ScanReport) => void }): { stop(): Promise<void> } {
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
          logScan(this.options.logger, `wrap rescan of ${this.source}`, report);
          options?.onScan?.(report);
        },
        (e: unknown) => {
          if (stopped) return;
          this.options.logger?.error?.({ err: e }, `wrap rescan of ${this.source} failed`);
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

  private db(): ScannerStateDatabase {
    const db = this.options.stateDatabase;
    if (!this.schemaReady) {
      db.exec(STATE_SCHEMA);
      // Added with identification by content; rows of earlier versions hold null.
      if (!(db.prepare('PRAGMA table_info(s3_wrap_keys)').all() as Array<{ name: string }>).some((c) => c.name === 'format')) {
        db.exec('ALTER TABLE s3_wrap_keys ADD COLUMN format TEXT');
      }
      this.schemaReady = true;
    }
    return db;
  }

  private transaction(fn: () => void): void {
    const db = this.db();
    db.exec('BEGIN');
    try {
      fn();
      db.exec('COMMIT');
    } catch (e) {
      db.exec('ROLLBACK');
      throw e;
    }
  }

  private async run({ signal, onProgress }: S3ScanOptions): Promise<S3ScanReport> {
    const started = performance.now();
    signal?.throwIfAborted();
    const db = this.db();
    const max = db.prepare('SELECT max(scan) AS scan, max(stamp) AS stamp FROM s3_wrap_keys WHERE source = ?').get(this.source) as { scan: number | null; stamp: number | null };
    const scanId = (max.scan ?? 0) + 1;
    this.lastStamp = Math.max(this.lastStamp, max.stamp ?? 0);
    const report: S3ScanReport = { added: 0, changed: 0, removed: 0, unchanged: 0, fromEtag: 0, skipped: [], durationMs: 0 };
    let seen = 0;
    const snapshot = (): S3ScanReport => ({ ...report, skipped: [...report.skipped], durationMs: performance.now() - started, seen });
    const getRow = db.prepare('SELECT * FROM s3_wrap_keys WHERE source = ? AND key = ?');
    const touchRow = db.prepare('UPDATE s3_wrap_keys SET scan = max(scan, ?) WHERE source = ? AND key = ?');
    let touched: string[] = [];
    const flushTouched = (): void => {
      const keys = touched;
      touched = [];
      if (keys.length > 0) this.transaction(() => { for (const k of keys) touchRow.run(scanId, this.source, k); });
    };

    let work: Candidate[] = [];
    for await (const entry of this.options.storage.list({ ...(signal ? { signal } : {}), onSkip: (key, reason) => report.skipped.push({ key, reason }) })) {
      seen++;
      let pid: string;
      try {
        pid = this.pidRule(entry.key);
      } catch (e) {
        report.skipped.push({ key: entry.key, reason: `pidRule failed: ${describe(e)}` });
        continue;
      }
      const problem = typeof pid === 'string' ? identifierProblem(pid) : 'pidRule did not return a string';
      if (problem) {
        report.skipped.push({ key: entry.key, reason: `invalid identifier: ${problem}` });
        continue;
      }
      const previous = getRow.get(this.source, entry.key) as StateRow | undefined;
      const unchanged = previous && previous.pid === pid && previous.size === entry.size && previous.etag === entry.etag && previous.algorithm === this.algorithm;
      if (unchanged && this.formatStale(previous)) {
        // Same bytes, recorded before identification by content or under other overrides: read the head once.
        work.push({ entry, pid, previous, reidentify: true });
      } else if (unchanged) {
        report.unchanged++;
        touched.push(entry.key);
        if (touched.length >= 1000) {
          flushTouched();
          onProgress?.(snapshot()); // a rescan of unchanged keys shows progress too
        }
        continue;
      }
      work.push({ entry, pid, previous });
      if (work.length >= this.batchSize) {
        await this.processBatch(work, scanId, report, signal);
        work = [];
        onProgress?.(snapshot());
      }
    }
    if (work.length > 0) await this.processBatch(work, scanId, report, signal);
    flushTouched();
    signal?.throwIfAborted();

    if (seen === 0 && !this.options.allowEmptyBucket && db.prepare('SELECT 1 FROM s3_wrap_keys WHERE source = ? LIMIT 1').get(this.source) !== undefined) {
      throw new AdapterError('unavailable', `${this.source} lists no objects; not removing the catalogued ones (set allowEmptyBucket to allow)`);
    }
    await this.removeUnseen(scanId, report, signal);
    if (this.options.datasets === 'folders') await this.updateDatasets(report);
    const final = snapshot();
    onProgress?.(final);
    return final;
  }

  /** Dataset maps of the key folders, from the keys this complete scan left in `s3_wrap_keys`. */
  private async updateDatasets(report: S3ScanReport): Promise<void> {
    const { stateDatabase: db, catalogue, nodeId, rightsHolder, submitter, accessPolicy } = this.options;
    this.datasets ??= new FolderDatasets({
      catalogue, db, pidRule: this.pidRule, nodeId, rightsHolder, checksumAlgorithm: this.algorithm,
      ...(submitter ? { submitter } : {}), ...(accessPolicy ? { accessPolicy } : {}),
    });
    // Paged by key, the event loop free between pages (the catalogue may share the connection).
    const page = db.prepare('SELECT key AS path, pid, format AS formatId FROM s3_wrap_keys WHERE source = ? AND key > ? ORDER BY key LIMIT 1000');
    const source = this.source;
    const files = async function* (): AsyncGenerator<FolderFile> {
      for (let after = ''; ;) {
        const rows = page.all(source, after) as FolderFile[];
        yield* rows;
        if (rows.length < 1000) return;
        after = rows[rows.length - 1]!.path;
        await new Promise((r) => setImmediate(r));
      }
    };
    const d = await this.datasets.update(files, () => this.batchStamp());
    report.added += d.published;
    report.changed += d.archived;
    report.skipped.push(...d.skipped.map(({ path, reason }) => ({ key: path, reason })));
  }

  /** Examines (HEAD, read when needed) up to `concurrency` candidates at once, then applies them. */
  private async processBatch(items: Candidate[], scanId: number, report: S3ScanReport, signal: AbortSignal | undefined): Promise<void> {
    const examined: Examined[] = [];
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < items.length) {
        const item = items[next++]!;
        try {
          const result = await this.examine(item, report, signal);
          if (result) examined.push(result);
          else if (item.previous) this.keep(item.entry.key, scanId);
        } catch (e) {
          if (signal?.aborted) throw e;
          if (AdapterError.is(e, 'unavailable')) throw e;
          report.skipped.push({ key: item.entry.key, reason: `could not be read: ${describe(e)}` });
          // A read error is not proof that the object is gone: keep its record.
          if (item.previous) this.keep(item.entry.key, scanId);
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.concurrency, items.length) }, worker));
    signal?.throwIfAborted();
    if (examined.length > 0) await this.applyBatch(examined, scanId, report);
  }

  private keep(key: string, scanId: number): void {
    this.db().prepare('UPDATE s3_wrap_keys SET scan = max(scan, ?) WHERE source = ? AND key = ?').run(scanId, this.source, key);
  }

  /** Size, ETag, media type and checksum of a candidate; undefined when it vanished or changed meanwhile. */
  private async examine(item: Candidate, report: S3ScanReport, signal: AbortSignal | undefined): Promise<Examined | undefined> {
    const storage = this.options.storage;
    const opts = signal ? { signal } : {};
    const info = await storage.head(item.entry.key, opts);
    if (info === undefined) {
      report.skipped.push({ key: item.entry.key, reason: 'removed while being scanned' });
      return undefined;
    }
    const entry: S3Entry = { key: item.entry.key, size: info.size, modified: info.modified, etag: info.etag };
    if (item.reidentify && item.previous && info.etag === item.previous.etag && info.size === item.previous.size) {
      return { ...item, entry, checksum: item.previous.checksum, mediaType: info.mediaType, format: await this.identify(entry, info.mediaType, undefined, signal) };
    }
    if (this.algorithm === 'MD5' && info.md5 !== undefined) {
      report.fromEtag++;
      return { ...item, entry, checksum: info.md5, mediaType: info.mediaType, format: await this.identify(entry, info.mediaType, undefined, signal) };
    }
    // IfMatch: S3 refuses to serve other bytes than the ETag's; the HEAD after catches servers that ignore it.
    const read = await storage.read(entry.key, { ...opts, ifMatch: entry.etag });
    const hash = createChecksumHash(this.algorithm);
    let bytes = 0;
    const head: Buffer[] = []; // the first HEAD_BYTES, for identification, from the same read
    if (read !== undefined) {
      for await (const chunk of read.stream) {
        hash.update(chunk as Buffer);
        if (bytes < HEAD_BYTES) head.push(chunk as Buffer);
        bytes += (chunk as Buffer).length;
      }
    }
    const after = read === undefined ? undefined : await storage.head(entry.key, opts);
    if (after === undefined || after.etag !== entry.etag || bytes !== entry.size) {
      report.skipped.push({ key: entry.key, reason: 'changed or removed while being read; retried at the next scan' });
      return undefined;
    }
    const first = new Uint8Array(Buffer.concat(head).subarray(0, HEAD_BYTES));
    return { ...item, entry, checksum: hash.digest('hex'), mediaType: info.mediaType, format: await this.identify(entry, info.mediaType, first, signal) };
  }

  /** True when an unchanged object's recorded format may no longer be what identification says. */
  private formatStale(row: StateRow): boolean {
    if (row.format === null || row.format === undefined) return true;
    const override = this.formats.overrideFor(row.key);
    return override !== undefined && override.formatId !== row.format;
  }

  /** The object's format: its override, else from its first HEAD_BYTES (a ranged GET when not read already). */
  private async identify(entry: S3Entry, mediaType: string | undefined, head: Uint8Array | undefined, signal: AbortSignal | undefined): Promise<FormatIdentification> {
    let bytes: Uint8Array = head ?? new Uint8Array();
    if (head === undefined && entry.size > 0 && this.formats.needsContent(entry.key)) {
      try {
        const read = await this.options.storage.read(entry.key, { range: { start: 0, end: HEAD_BYTES - 1 }, ifMatch: entry.etag, ...(signal ? { signal } : {}) });
        if (read !== undefined) {
          const chunks: Buffer[] = [];
          for await (const chunk of read.stream) chunks.push(chunk as Buffer);
          bytes = new Uint8Array(Buffer.concat(chunks).subarray(0, HEAD_BYTES));
        }
      } catch (e) {
        if (signal?.aborted) throw e;
        // Unreadable head: the name and Content-Type decide.
      }
    }
    return this.formats.identify(entry.key, { name: posix.basename(entry.key), head: bytes, size: entry.size, ...(mediaType && !isGeneric(mediaType) ? { mediaType } : {}) });
  }

  /** dateSysMetadataModified for a batch: the clock, but strictly after every stamp set before. */
  private batchStamp(): number {
    this.lastStamp = Math.max(this.now().getTime(), this.lastStamp + 1);
    return this.lastStamp;
  }

  /**
   * What one examined object does to the catalogue, planned against the record as it is now.
   * Only size and checksum come from the object; every other field (access policy, replicas,
   * obsolescence, an administrator's edits) is the stored record's.
   */
  private async plan(item: Examined, base: number, scanId: number): Promise<Planned | { skip: string }> {
    const catalogue = this.options.catalogue;
    const { entry, pid, previous, checksum, format } = item;
    const state: StateRow = { source: this.source, key: entry.key, pid, size: entry.size, etag: entry.etag, algorithm: this.algorithm, checksum, scan: scanId, stamp: base, format: format.formatId };
    const change: CatalogueChange = {};
    // The PID rule changed since the key was last seen: its old record goes.
    if (previous && previous.pid !== pid) {
      const old = await catalogue.get(previous.pid);
      if (old && old.storageKey === entry.key) change.remove = [{ pid: previous.pid }];
    }
    const existing = await catalogue.get(pid);
    if (existing === undefined) {
      change.insert = [this.newRecord(entry, pid, checksum, format, base)];
      return { item, change, outcome: 'added', state };
    }
    if (existing.storageKey !== entry.key) return { skip: `identifier ${pid} is already used by another object` };
    // The scanner corrects only a format it set itself (an administrator's choice stays).
    const setByScanner = previous?.format ?? this.legacyFormat(entry.key);
    const reformat = existing.sysmeta.formatId === setByScanner && existing.sysmeta.formatId !== format.formatId;
    const next = rescannedRecord(existing.sysmeta, { size: entry.size, algorithm: this.algorithm, checksum, ...(reformat ? { reformat: format } : {}) }, base);
    state.stamp = next.stamp;
    // Same bytes (re-uploaded, the cache row was lost, or a concurrent scan recorded it): nothing to tell the CN.
    if (next.outcome === 'unchanged') return { item, change, outcome: 'unchanged', state };
    this.lastStamp = Math.max(this.lastStamp, next.stamp);
    change.replace = [{ pid, expectedSerialVersion: existing.sysmeta.serialVersion, sysmeta: next.sysmeta }];
    return { item, change, outcome: 'changed', state };
  }

  private async applyBatch(items: Examined[], scanId: number, report: S3ScanReport): Promise<void> {
    const catalogue = this.options.catalogue;
    const base = this.batchStamp();
    const changes: Planned[] = [];
    const kept: string[] = [];
    for (const item of items) {
      const p = await this.plan(item, base, scanId);
      if ('skip' in p) {
        report.skipped.push({ key: item.entry.key, reason: p.skip });
        kept.push(item.entry.key);
      } else changes.push(p);
    }

    const merged: Required<Pick<CatalogueChange, 'insert' | 'replace' | 'remove'>> = { insert: [], replace: [], remove: [] };
    for (const { change } of changes) {
      merged.insert.push(...(change.insert ?? []));
      merged.replace.push(...(change.replace ?? []));
      merged.remove.push(...(change.remove ?? []));
    }
    let applied = changes;
    try {
      if (merged.insert.length + merged.replace.length + merged.remove.length > 0) await catalogue.apply!(merged);
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
    // max(): a concurrent scan with a later scan number may have seen the key already; never
    // move its mark back, or that scan would take the key for gone.
    const upsert = this.db().prepare(`INSERT INTO s3_wrap_keys (source, key, pid, size, etag, algorithm, checksum, scan, stamp, format)
      VALUES (@source, @key, @pid, @size, @etag, @algorithm, @checksum, @scan, @stamp, @format)
      ON CONFLICT (source, key) DO UPDATE SET pid = excluded.pid, size = excluded.size, etag = excluded.etag,
        algorithm = excluded.algorithm, checksum = excluded.checksum, scan = max(scan, excluded.scan), stamp = max(stamp, excluded.stamp),
        format = excluded.format`);
    const keep = this.db().prepare('UPDATE s3_wrap_keys SET scan = max(scan, ?) WHERE source = ? AND key = ?');
    this.transaction(() => {
      for (const c of applied) upsert.run(c.state);
      // Not recorded this time, but seen: keep the record (an object is removed only when it is gone).
      for (const key of kept) keep.run(scanId, this.source, key);
    });
    for (const c of applied) report[c.outcome]++;
  }

  /**
   * Applies one planned change; when it loses a compare-and-set or an insert race, plans it
   * again from the record as it is now (up to 5 times). Undefined when it is not applied.
   */
  private async applyOne(first: Planned, base: number, scanId: number, report: S3ScanReport): Promise<Planned | undefined> {
    const catalogue = this.options.catalogue;
    const key = first.item.entry.key;
    let c: Planned = first;
    for (let attempt = 1; ; attempt++) {
      try {
        if (c.change.insert || c.change.replace || c.change.remove) await catalogue.apply!(c.change);
        return c;
      } catch (e) {
        if (!AdapterError.is(e) || e.kind === 'unavailable' || e.kind === 'internal') throw e;
        const raced = e.kind === 'conflict' || e.kind === 'already-exists' || e.kind === 'not-found';
        if (!raced || attempt >= 5) {
          report.skipped.push({ key, reason: `catalogue refused it (${e.kind}): ${e.message}` });
          return undefined;
        }
      }
      if (await this.stale(c.item)) return undefined;
      const again = await this.plan(c.item, base, scanId);
      if ('skip' in again) {
        report.skipped.push({ key, reason: again.skip });
        return undefined;
      }
      c = again;
    }
  }

  /**
   * Whether a lost race is better left to the next scan: a concurrent scan recorded this key
   * since it was listed (its record and cache row agree), or the object changed since it was
   * read. Writing ours then could put older bytes' checksum over newer ones for good.
   */
  private async stale(item: Examined): Promise<boolean> {
    const row = this.db().prepare('SELECT * FROM s3_wrap_keys WHERE source = ? AND key = ?').get(this.source, item.entry.key) as StateRow | undefined;
    const prev = item.previous;
    if (row !== undefined && (prev === undefined || row.etag !== prev.etag || row.size !== prev.size || row.checksum !== prev.checksum)) return true;
    const now = await this.options.storage.head(item.entry.key);
    return now === undefined || now.etag !== item.entry.etag || now.size !== item.entry.size;
  }

  /**
   * Removes the records of keys the completed listing did not see and that are really gone
   * (each is HEADed once more: a key a concurrent scan recorded, or one whose update raced, is
   * no reason to drop a record and its overlay), a page at a time.
   */
  private async removeUnseen(scanId: number, report: S3ScanReport, signal: AbortSignal | undefined): Promise<void> {
    const catalogue = this.options.catalogue;
    const page = this.db().prepare('SELECT key, pid FROM s3_wrap_keys WHERE source = ? AND scan < ? AND key > ? ORDER BY key LIMIT ?');
    const drop = this.db().prepare('DELETE FROM s3_wrap_keys WHERE source = ? AND key = ? AND scan < ?');
    const keep = this.db().prepare('UPDATE s3_wrap_keys SET scan = max(scan, ?) WHERE source = ? AND key = ?');
    let after = '';
    for (;;) {
      signal?.throwIfAborted();
      const rows = page.all(this.source, scanId, after, this.batchSize) as Array<{ key: string; pid: string }>;
      if (rows.length === 0) return;
      after = rows[rows.length - 1]!.key;
      const done: string[] = [];
      const present: string[] = [];
      for (const row of rows) {
        if (await this.options.storage.head(row.key, signal ? { signal } : {}) !== undefined) {
          present.push(row.key);
          continue;
        }
        const record = await catalogue.get(row.pid);
        if (!record || record.storageKey !== row.key) {
          done.push(row.key);
          continue;
        }
        try {
          await catalogue.apply!({ remove: [{ pid: row.pid }] });
          report.removed++;
          done.push(row.key);
        } catch (e) {
          if (AdapterError.is(e, 'not-found')) done.push(row.key);
          else if (!AdapterError.is(e) || e.kind === 'unavailable' || e.kind === 'internal') throw e;
          else report.skipped.push({ key: row.key, reason: `could not remove ${row.pid}: ${describe(e)}` });
        }
      }
      this.transaction(() => {
        for (const key of done) drop.run(this.source, key, scanId);
        for (const key of present) keep.run(scanId, this.source, key);
      });
    }
  }

  private newRecord(entry: S3Entry, pid: string, checksum: string, format: FormatIdentification, stamp: number): ObjectRecord {
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
      // LastModified when first seen: when the content came to be in the archive.
      dateUploaded: new Date(Math.min(entry.modified.getTime(), stamp)),
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

  /**
   * The format scanners before identification by content gave an object (extension override,
   * else the list's first entry for the extension). The Content-Type reading they also made is
   * not repeated: such records keep their format.
   */
  private legacyFormat(key: string): string {
    const fileName = posix.basename(key);
    const dot = fileName.lastIndexOf('.');
    const ext = dot > 0 ? fileName.slice(dot + 1).toLowerCase() : '';
    return (ext ? this.options.formatOverrides?.[ext] : undefined) ?? formatForFileName(fileName).formatId;
  }
}

/** What a completed scan changed, in one log line (info when it changed anything, else debug). */
export function logScan(logger: ScanLogger | undefined, what: string, report: { added: number; changed: number; removed: number; unchanged: number; skipped: unknown[]; durationMs: number }): void {
  if (!logger) return;
  const fields = { added: report.added, changed: report.changed, removed: report.removed, unchanged: report.unchanged, skipped: report.skipped.length, durationMs: Math.round(report.durationMs) };
  const message = `${what}: ${report.added} added, ${report.changed} changed, ${report.removed} removed, ${report.unchanged} unchanged, ${report.skipped.length} skipped`;
  if (report.added + report.changed + report.removed + report.skipped.length > 0 || !logger.debug) logger.info(fields, message);
  else logger.debug(fields, message);
}

function isGeneric(mediaType: string): boolean {
  const t = mediaType.split(';')[0]!.trim().toLowerCase();
  return t === '' || t === 'application/octet-stream' || t === 'binary/octet-stream';
}

function describe(e: unknown): string {
  if (AdapterError.is(e)) return `${e.kind}: ${e.message}`;
  return e instanceof Error ? e.message : String(e);
}

/** A scanner keeping `options.catalogue` in step with `options.storage`. No I/O until `scan()`. */
export function createS3BucketScanner(options: S3BucketScannerOptions): S3BucketScanner {
  return new S3BucketScanner(options);
}
