import type { Readable } from 'node:stream';
import { ChangeFollower, type Logger, type ObjectChange } from '@memberkit/core';
import type { FeedEntry } from '@memberkit/types';
import type { CatalogueAdapter, ObjectRecord, StorageAdapter } from '@memberkit/types';
import { isResourceMapFormat, isScienceMetadataFormat, sharedSciencePool, type ResourceMap, type ScienceMetadata, type SciencePool } from '@memberkit/science';
import { buildDocument, resourceMapRelations } from './document.js';
import type { SearchIndex } from './types.js';

export interface IndexerOptions {
  /**
   * How often the follow loop looks for catalogue changes made by others (ms), besides the
   * catch-up before each query. 0 disables. Default 1000 with a change feed, 5000 without.
   */
  followIntervalMs?: number;
  /** How often index entries are checked against the catalogue for deletions (ms). 0 disables. Default 10 min. */
  reconcileIntervalMs?: number;
  /** Science metadata and resource maps larger than this are indexed with system metadata only (not indexed: too large). Default: the pool's budgets.maxBytes (16 MiB). */
  maxDocumentBytes?: number;
  /** Where science metadata and resource maps are parsed (worker threads, budgets). Default: the process's shared SciencePool. */
  pool?: SciencePool;
  /** Catalogue page size for the follow loop and reconciliation. Default 500. */
  pageSize?: number;
}

const WATERMARK = 'watermark';
/** State key of the change-feed position the index reflects. */
const FEED = 'feed';
/** State key of an object whose content is not indexed: JSON {checksum, serialVersion, reason}. */
const NOT_INDEXED = 'notIndexed:';

/** What parsing an object's content gave, kept per PID and checksum (a PID's bytes never change). */
type Content =
  | { checksum: string; kind: 'metadata'; science: ScienceMetadata; text?: string }
  | { checksum: string; kind: 'map'; map: ResourceMap }
  | { checksum: string; kind: 'none'; notIndexed?: string };

/** Parsed contents kept for re-indexing after system metadata changes, least recently used evicted. */
const CONTENT_ENTRIES = 200;
const CONTENT_TEXT_CHARS = 32 * 1024 * 1024;

const contentKind = (formatId: string): 'metadata' | 'map' | undefined => (isScienceMetadataFormat(formatId) ? 'metadata' : isResourceMapFormat(formatId) ? 'map' : undefined);

async function readAll(stream: Readable, max: number): Promise<Uint8Array | undefined> {
  const chunks: Buffer[] = [];
  let n = 0;
  for await (const chunk of stream) {
    const b = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk as Uint8Array);
    n += b.length;
    if (n > max) {
      stream.destroy();
      return undefined;
    }
    chunks.push(b);
  }
  return Buffer.concat(chunks);
}

/** Records indexed per shared transaction (a full walk of the catalogue, a page of the feed): a few ms of SQLite each. */
const BULK_CHUNK = 100;

/** A record read from the catalogue, to index (`force`: even at the serialVersion indexed). */
interface Listed {
  record: ObjectRecord;
  force: boolean;
}

/**
 * Keeps a SearchIndex current with the catalogue:
 * - `onChange`: changes this process commits. System metadata is indexed before the request
 *   answers (a create is found by its fields, an access change applies, at once); the content
 *   of science metadata and resource maps is parsed afterwards, off the request path, in the
 *   SciencePool's worker threads, and the document re-indexed with it (see `settled`);
 * - the change feed (ChangeFollower): every change of every process and scanner, in commit
 *   order, from the position stored in the index; `catchUp` before each query applies what
 *   was committed elsewhere (an object made private on another process is refused at once).
 *   A catalogue without a feed (a mapped legacy catalogue) is followed by date instead;
 * - reconciliation: indexed PIDs the catalogue no longer has are removed (deletes made elsewhere).
 * Every write re-reads the current record under a per-indexer lock, so a late writer never
 * puts an older version back. Nothing is parsed on the main thread.
 *
 * Content over a budget (size, depth, elements, attributes, text, links), too slow or too
 * large for a worker's memory is "not indexed": the object keeps its system metadata fields,
 * its `notIndexed` field says why (its owner and administrators see it in search results;
 * `q=notIndexed:*` lists them all), a warning is logged once, and the index's state table
 * remembers it per PID and checksum, so neither a restart's catch-up nor a later system
 * metadata change parses it again.
 */
export class CatalogueIndexer {
  private chain: Promise<unknown> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  private following: Promise<number> | undefined;
  private reconciling: Promise<number> | undefined;
  private readonly indexedVersion = new Map<string, number>();
  private readonly contents = new Map<string, Content>();
  private contentTextChars = 0;
  /** Objects whose content waits to be parsed after a change (PID to its latest record). */
  private readonly pending = new Map<string, ObjectRecord>();
  private readonly parsing = new Map<string, Promise<void>>();
  private background: Promise<void> | undefined;
  private stopped = false;
  private readonly pool: SciencePool;
  private readonly feed: ChangeFollower;
  private started: Promise<void> | undefined;

  constructor(
    private readonly index: SearchIndex,
    private readonly deps: { metadata: CatalogueAdapter; storage: StorageAdapter; logger: Logger },
    private readonly options: IndexerOptions = {},
  ) {
    this.pool = options.pool ?? sharedSciencePool();
    this.feed = new ChangeFollower(deps.metadata, (entries) => this.applyFeed(entries), options.pageSize ?? 500);
  }

  /**
   * Index the feed's entries in order and store the position reached. Positions are dense: a
   * first entry beyond the position + 1 means the entries between were pruned (the sweep's
   * retention) while this index was behind, so every object is indexed again and indexed PIDs
   * the catalogue lost are removed before following on.
   */
  private async applyFeed(entries: FeedEntry[]): Promise<void> {
    const at = this.feed.at;
    if (at !== undefined && entries[0]!.seq > at + 1) {
      this.deps.logger.warn({ at, next: entries[0]!.seq }, "query index: fell behind the change feed's retention; indexing every object again");
      // Forced: an object deleted and re-created in the gap may carry the serialVersion indexed before.
      await this.indexEverything(true);
      await this.reconcilePass();
    }
    // Each PID once, as the catalogue has it now (every entry would read the same); a
    // re-created object starts again at serialVersion 1: index it even if a version 1 was.
    const forced = new Map<string, boolean>();
    for (const e of entries) forced.set(e.pid, (forced.get(e.pid) ?? false) || e.kind === 'insert');
    const plain: Listed[] = [];
    for (const [pid, force] of forced) {
      if (this.stopped) return;
      const record = await this.deps.metadata.get(pid);
      if (record && !contentKind(record.sysmeta.formatId)) plain.push({ record, force });
      else await this.refresh(pid, force);
    }
    await this.indexListed(plain);
    await this.index.setState(FEED, String(entries.at(-1)!.seq));
  }

  /**
   * Apply every change committed so far, by any process (one cheap query when there is none):
   * called before each query. Without a change feed, a no-op.
   */
  async catchUp(): Promise<void> {
    if (!this.feed.available) return;
    await this.started;
    await this.feed.catchUp();
  }

  /** Run `fn` after every write queued before it. */
  private locked<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(fn);
    this.chain = p.catch(() => {});
    return p;
  }

  /** Index (or remove) `pid` as the catalogue has it now (content parsed first when needed). */
  async refresh(pid: string, force = false): Promise<void> {
    const record = await this.deps.metadata.get(pid);
    if (record && contentKind(record.sysmeta.formatId) && (force || this.indexedVersion.get(pid) !== record.sysmeta.serialVersion)) await this.parse(record);
    await this.write(pid, force);
  }

  /**
   * Records with nothing to parse, indexed as read, without reading each again, and asked for
   * together so that the index writes them in shared transactions (one transaction per
   * document costs 0.5 ms: 100,000 objects kept a new node busy for a minute, and every
   * create or scanned file paid one). A record read before a later change is indexed again
   * when the feed hands that change over (queries catch up with the feed first); one already
   * indexed at a later serialVersion by another path is left as it is.
   */
  private async indexListed(items: readonly Listed[]): Promise<void> {
    for (let i = 0; i < items.length; i += BULK_CHUNK) {
      const chunk = items.slice(i, i + BULK_CHUNK);
      await this.locked(() =>
        Promise.all(
          chunk.map(({ record, force }) => {
            const indexed = this.indexedVersion.get(record.sysmeta.identifier);
            return force || indexed === undefined || indexed < record.sysmeta.serialVersion ? this.indexNow(record) : undefined;
          }),
        ),
      );
    }
  }

  /** Under the lock: index what the catalogue has now, with the content known so far. */
  private write(pid: string, force: boolean): Promise<void> {
    return this.locked(async () => {
      const record = await this.deps.metadata.get(pid);
      if (!record) {
        await this.removeNow(pid);
        return;
      }
      if (!force && this.indexedVersion.get(pid) === record.sysmeta.serialVersion) return;
      await this.indexNow(record);
    });
  }

  private async removeNow(pid: string): Promise<void> {
    await this.index.remove(pid);
    this.indexedVersion.delete(pid);
    this.forget(pid);
    if (await this.index.state(NOT_INDEXED + pid)) await this.index.setState(NOT_INDEXED + pid, '');
  }

  /**
   * Index `record` with its content when known (parsed, or recorded as not indexed); else
   * with system metadata only, its content queued for parsing. Returns whether the content
   * was included.
   */
  private async indexNow(record: ObjectRecord): Promise<boolean> {
    const sm = record.sysmeta;
    const kind = contentKind(sm.formatId);
    const active = !sm.archived && !sm.obsoletedBy;
    if (!kind || (kind === 'map' && !active)) {
      if (kind === 'map') await this.index.setRelations(sm.identifier, []);
      await this.index.upsert(buildDocument(record));
      this.markIndexed(record);
      return true;
    }
    const content = this.contents.get(sm.identifier);
    if (!content || content.checksum !== sm.checksum.value) {
      // Searchable by its system metadata now (access changes apply at once); content follows.
      await this.index.upsert(buildDocument(record));
      this.enqueue(record);
      return false;
    }
    this.contents.delete(sm.identifier);
    this.contents.set(sm.identifier, content);
    let doc = buildDocument(record);
    if (content.kind === 'metadata') doc = buildDocument(record, content.science, content.text);
    else if (content.kind === 'map') await this.index.setRelations(sm.identifier, resourceMapRelations(sm.identifier, content.map));
    else if (kind === 'map') await this.index.setRelations(sm.identifier, []);
    if (content.kind === 'none' && content.notIndexed) doc.notIndexed = content.notIndexed;
    await this.index.upsert(doc);
    this.markIndexed(record);
    return true;
  }

  private markIndexed(record: ObjectRecord): void {
    if (this.indexedVersion.size > 50_000) this.indexedVersion.clear();
    this.indexedVersion.set(record.sysmeta.identifier, record.sysmeta.serialVersion);
  }

  private remember(pid: string, content: Content): void {
    this.forget(pid);
    this.contents.set(pid, content);
    this.contentTextChars += content.kind === 'metadata' ? (content.text?.length ?? 0) : 0;
    for (const [oldest] of this.contents) {
      if (this.contents.size <= CONTENT_ENTRIES && this.contentTextChars <= CONTENT_TEXT_CHARS) break;
      if (oldest === pid) break;
      this.forget(oldest);
    }
  }

  private forget(pid: string): void {
    const c = this.contents.get(pid);
    if (c?.kind === 'metadata') this.contentTextChars -= c.text?.length ?? 0;
    this.contents.delete(pid);
  }

  private async readBytes(record: ObjectRecord): Promise<Uint8Array | undefined> {
    const r = await this.deps.storage.read(record.storageKey);
    if (!r) return undefined;
    return readAll(r.stream, this.maxBytes);
  }

  private get maxBytes(): number {
    return Math.min(this.options.maxDocumentBytes ?? Infinity, this.pool.budgets.maxBytes);
  }

  /**
   * Make the content of `record` known (off the lock, in the pool's workers): parsed, or
   * "not indexed" with its reason, recorded in the index's state table. Content recorded as
   * not indexed before (same PID and checksum) is not parsed again.
   */
  private parse(record: ObjectRecord): Promise<void> {
    // One parse per object at a time (a change and the follow loop may ask together).
    const pid = record.sysmeta.identifier;
    const running = this.parsing.get(pid);
    if (running) return running.then(() => this.parse(record));
    const p = this.parseNow(record).finally(() => this.parsing.delete(pid));
    this.parsing.set(pid, p);
    return p;
  }

  private async parseNow(record: ObjectRecord): Promise<void> {
    const sm = record.sysmeta;
    const kind = contentKind(sm.formatId);
    const pid = sm.identifier;
    const checksum = sm.checksum.value;
    if (!kind || this.contents.get(pid)?.checksum === checksum) return;
    if (kind === 'map' && (sm.archived || sm.obsoletedBy)) return;
    const recorded = await this.index.state(NOT_INDEXED + pid);
    if (recorded) {
      try {
        const r = JSON.parse(recorded) as { checksum?: string; reason?: string };
        if (r.checksum === checksum && r.reason) return this.remember(pid, { checksum, kind: 'none', notIndexed: r.reason });
      } catch {
        // Unreadable state: parse again.
      }
    }
    let notIndexed: string | undefined;
    try {
      if (sm.size > this.maxBytes) notIndexed = `larger than ${this.maxBytes} bytes`;
      else {
        const bytes = await this.readBytes(record);
        if (bytes === undefined) notIndexed = `larger than ${this.maxBytes} bytes`;
        else {
          const r = kind === 'metadata' ? await this.pool.metadata(sm.formatId, bytes, { withText: true }) : await this.pool.resourceMap(bytes);
          if (r.status === 'read') {
            if (kind === 'metadata') this.remember(pid, { checksum, kind, science: r.value as ScienceMetadata, ...(r.text !== undefined ? { text: r.text } : {}) });
            else this.remember(pid, { checksum, kind, map: r.value as ResourceMap });
            return;
          }
          if (r.status === 'not-indexed') notIndexed = r.reason;
          else this.deps.logger.debug({ pid, reason: r.reason }, 'query index: content not readable; indexed with system metadata only');
        }
      }
    } catch (err) {
      // Storage errors: indexed with system metadata only this time, tried again at the next change.
      this.deps.logger.warn({ err, pid }, 'query index: content could not be read; indexed with system metadata only');
      return this.remember(pid, { checksum, kind: 'none' });
    }
    if (notIndexed) {
      this.deps.logger.warn({ pid, reason: notIndexed }, `query index: content of '${pid}' not indexed: ${notIndexed}`);
      await this.index.setState(NOT_INDEXED + pid, JSON.stringify({ checksum, serialVersion: sm.serialVersion, reason: notIndexed }));
    }
    this.remember(pid, notIndexed ? { checksum, kind: 'none', notIndexed } : { checksum, kind: 'none' });
  }

  /** Parse `record`'s content in the background, then index it again. */
  private enqueue(record: ObjectRecord): void {
    this.pending.set(record.sysmeta.identifier, record);
    this.background ??= this.drain().finally(() => {
      this.background = undefined;
    });
  }

  private async drain(): Promise<void> {
    // Let the request that queued this answer first.
    await yieldToEventLoop();
    while (this.pending.size && !this.stopped) {
      const [pid, record] = this.pending.entries().next().value as [string, ObjectRecord];
      this.pending.delete(pid);
      try {
        await this.parse(record);
        await this.write(pid, true);
      } catch (err) {
        this.deps.logger.error({ err, pid }, 'query index: indexing content failed');
      }
    }
  }

  /** Resolves when every content queued by changes so far is parsed and indexed (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.background) await this.background;
    await this.chain;
  }

  /**
   * A change committed by this node (NodeExtension.onChange). With a change feed: a catch-up
   * in the background (queries catch up first). Without: system metadata now, content in the
   * background.
   */
  async onChange(change: ObjectChange): Promise<void> {
    if (this.feed.available && this.started) {
      // The feed has the change: follow it in the background (its changes indexed together,
      // in shared transactions) instead of making the write that made it wait for the index.
      // Every query catches up with the feed before it answers, so none misses the change.
      void this.catchUp().catch((err: unknown) => this.deps.logger.error({ err }, 'query index: catch-up failed'));
      return;
    }
    await this.write(change.pid, true);
    // update: the previous version now has obsoletedBy.
    const obsoletes = change.record?.sysmeta.obsoletes;
    if (change.kind === 'update' && obsoletes) await this.write(obsoletes, true);
  }
  /** One pass of the follow loop (the change feed, or dates without one); the number of records looked at. */
  follow(): Promise<number> {
    if (this.feed.available) {
      return (async () => {
        // Not started yet (a pass asked for directly): continue from the stored position.
        if (this.feed.at === undefined) await this.startFeed();
        const before = this.feed.at ?? 0;
        await this.catchUp();
        return (this.feed.at ?? before) - before;
      })();
    }
    this.following ??= this.followPass().finally(() => {
      this.following = undefined;
    });
    return this.following;
  }

  /**
   * With a change feed: continue from the stored position; an index that has none (new, or
   * built before the feed existed) takes the head first, then indexes every record once.
   */
  private async startFeed(): Promise<void> {
    const stored = await this.index.state(FEED);
    if (stored && /^\d+$/.test(stored)) {
      await this.feed.begin(Number(stored));
      return;
    }
    const head = await this.feed.begin();
    await this.indexEverything();
    await this.index.setState(FEED, String(head));
  }

  /** Index every record the catalogue has (a new index, or one that fell behind the feed). */
  private async indexEverything(force = false): Promise<void> {
    const size = this.options.pageSize ?? 500;
    for (let start = 0; !this.stopped; start += size) {
      const page = await this.deps.metadata.list({ start, count: size });
      const plain: Listed[] = [];
      for (const record of page.items) {
        if (contentKind(record.sysmeta.formatId)) await this.refresh(record.sysmeta.identifier, force);
        else plain.push({ record, force });
      }
      await this.indexListed(plain);
      if (page.items.length < size) break;
      await yieldToEventLoop();
    }
  }

  private async followPass(): Promise<number> {
    const size = this.options.pageSize ?? 500;
    const stored = await this.index.state(WATERMARK);
    let from = stored ? new Date(stored) : undefined;
    let skip = 0;
    let seen = 0;
    for (;;) {
      if (this.stopped) break;
      const page = await this.deps.metadata.list({ ...(from ? { fromDate: from } : {}), start: skip, count: size });
      for (const record of page.items) {
        seen++;
        await this.refresh(record.sysmeta.identifier);
      }
      const last = page.items.at(-1);
      if (!last) break;
      const lastDate = last.sysmeta.dateSysMetadataModified;
      if (from && lastDate.getTime() === from.getTime()) skip += page.items.length;
      else {
        from = lastDate;
        skip = page.items.filter((r) => r.sysmeta.dateSysMetadataModified.getTime() === lastDate.getTime()).length;
      }
      await this.index.setState(WATERMARK, from.toISOString());
      if (page.items.length < size) break;
      // The catalogue and the index answer synchronously (SQLite): let requests and timers
      // run between pages, or a long catch-up would hold the event loop until it ends.
      await yieldToEventLoop();
    }
    return seen;
  }

  /** Remove indexed PIDs the catalogue no longer has; the number removed. */
  reconcile(): Promise<number> {
    this.reconciling ??= this.reconcilePass().finally(() => {
      this.reconciling = undefined;
    });
    return this.reconciling;
  }

  private async reconcilePass(): Promise<number> {
    let after: string | undefined;
    let removed = 0;
    for (;;) {
      if (this.stopped) break;
      const ids = await this.index.ids(after, 500);
      if (!ids.length) break;
      for (const pid of ids) {
        if ((await this.deps.metadata.identifierUse(pid)) !== 'pid') {
          await this.refresh(pid, true);
          removed++;
        }
      }
      after = ids.at(-1);
      await yieldToEventLoop();
    }
    return removed;
  }

  /** Start the follow loop (a first pass now: catch up with the catalogue) and reconciliation. */
  start(): void {
    const withFeed = this.feed.available;
    const follow = this.options.followIntervalMs ?? (withFeed ? 1000 : 5000);
    const reconcile = this.options.reconcileIntervalMs ?? 600_000;
    const guard = (what: string, p: Promise<unknown>) => p.catch((err) => this.deps.logger.error({ err }, `query index: ${what} failed`));
    if (withFeed) {
      this.started = this.startFeed();
      void guard('catch-up', this.started.then(() => this.feed.catchUp()));
    } else void guard('catch-up', this.follow());
    if (follow > 0) this.timers.push(setInterval(() => void guard('follow', this.follow()), follow).unref());
    if (reconcile > 0) this.timers.push(setInterval(() => void guard('reconcile', this.reconcile()), reconcile).unref());
  }

  /** Stop the loops and wait for running passes and queued writes. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await Promise.allSettled([this.started, this.feed.idle(), this.following, this.reconciling, this.background, this.chain]);
  }
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
