import type { Readable } from 'node:stream';
import type { Logger, ObjectChange } from '@memberkit/core';
import type { MetadataAdapter, ObjectRecord, StorageAdapter } from '@memberkit/types';
import { DEFAULT_MAX_DOCUMENT_BYTES, isResourceMapFormat, isScienceMetadataFormat, readResourceMap, readScienceMetadata } from '@memberkit/science';
import { buildDocument, resourceMapRelations, xmlText } from './document.js';
import type { SearchIndex } from './types.js';

export interface IndexerOptions {
  /** How often the follow loop looks for catalogue changes made by others (ms). 0 disables. Default 5000. */
  followIntervalMs?: number;
  /** How often index entries are checked against the catalogue for deletions (ms). 0 disables. Default 10 min. */
  reconcileIntervalMs?: number;
  /** Science metadata and resource maps larger than this are indexed with system metadata only. */
  maxDocumentBytes?: number;
  /** Catalogue page size for the follow loop and reconciliation. Default 500. */
  pageSize?: number;
}

const WATERMARK = 'watermark';

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

/**
 * Keeps a SearchIndex current with the catalogue:
 * - `onChange`: changes this process commits, indexed before the request answers (a create
 *   is searchable as soon as the client has its answer);
 * - the follow loop: catalogue records whose dateSysMetadataModified is at or after the
 *   stored watermark (changes by scanners and other processes), paged by date;
 * - reconciliation: indexed PIDs the catalogue no longer has are removed (deletes made elsewhere).
 * Every write re-reads the current record under a per-indexer lock, so a late writer never
 * puts an older version back.
 */
export class CatalogueIndexer {
  private chain: Promise<unknown> = Promise.resolve();
  private timers: NodeJS.Timeout[] = [];
  private following: Promise<number> | undefined;
  private reconciling: Promise<number> | undefined;
  private readonly indexedVersion = new Map<string, number>();
  private stopped = false;

  constructor(
    private readonly index: SearchIndex,
    private readonly deps: { metadata: MetadataAdapter; storage: StorageAdapter; logger: Logger },
    private readonly options: IndexerOptions = {},
  ) {}

  /** Run `fn` after every write queued before it. */
  private locked<T>(fn: () => Promise<T>): Promise<T> {
    const p = this.chain.then(fn);
    this.chain = p.catch(() => {});
    return p;
  }

  /** Index (or remove) `pid` as the catalogue has it now. */
  refresh(pid: string, force = false): Promise<void> {
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
  }

  private async readBytes(record: ObjectRecord): Promise<Uint8Array | undefined> {
    const max = this.options.maxDocumentBytes ?? DEFAULT_MAX_DOCUMENT_BYTES;
    if (record.sysmeta.size > max) return undefined;
    const r = await this.deps.storage.read(record.storageKey);
    if (!r) return undefined;
    return readAll(r.stream, max);
  }

  private async indexNow(record: ObjectRecord): Promise<void> {
    const sm = record.sysmeta;
    let doc = buildDocument(record);
    try {
      if (isScienceMetadataFormat(sm.formatId)) {
        const bytes = await this.readBytes(record);
        const science = bytes ? readScienceMetadata(sm.formatId, bytes) : undefined;
        if (science && bytes) doc = buildDocument(record, science, xmlText(Buffer.from(bytes).toString('utf8')));
      } else if (isResourceMapFormat(sm.formatId)) {
        const active = !sm.archived && !sm.obsoletedBy;
        const bytes = active ? await this.readBytes(record) : undefined;
        const map = bytes ? await readResourceMap(bytes) : undefined;
        await this.index.setRelations(sm.identifier, map ? resourceMapRelations(sm.identifier, map) : []);
      }
    } catch (err) {
      this.deps.logger.warn({ err, pid: sm.identifier }, 'query index: content not readable; indexed with system metadata only');
    }
    await this.index.upsert(doc);
    if (this.indexedVersion.size > 50_000) this.indexedVersion.clear();
    this.indexedVersion.set(sm.identifier, sm.serialVersion);
  }

  /** A change committed by this node (NodeExtension.onChange). */
  async onChange(change: ObjectChange): Promise<void> {
    await this.refresh(change.pid, true);
    // update: the previous version now has obsoletedBy.
    const obsoletes = change.record?.sysmeta.obsoletes;
    if (change.kind === 'update' && obsoletes) await this.refresh(obsoletes, true);
  }

  /** One pass of the follow loop; the number of records looked at. */
  follow(): Promise<number> {
    this.following ??= this.followPass().finally(() => {
      this.following = undefined;
    });
    return this.following;
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
    const follow = this.options.followIntervalMs ?? 5000;
    const reconcile = this.options.reconcileIntervalMs ?? 600_000;
    const guard = (what: string, p: Promise<unknown>) => p.catch((err) => this.deps.logger.error({ err }, `query index: ${what} failed`));
    void guard('catch-up', this.follow());
    if (follow > 0) this.timers.push(setInterval(() => void guard('follow', this.follow()), follow).unref());
    if (reconcile > 0) this.timers.push(setInterval(() => void guard('reconcile', this.reconcile()), reconcile).unref());
  }

  /** Stop the loops and wait for running passes and queued writes. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers) clearInterval(t);
    this.timers = [];
    await Promise.allSettled([this.following, this.reconciling, this.chain]);
  }
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
