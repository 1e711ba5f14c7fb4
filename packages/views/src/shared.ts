import { ChangeFollower, type ExtensionKit, type ObjectChange } from '@memberkit/core';
import type { CatalogueAdapter, ObjectRecord } from '@memberkit/types';
import { isResourceMapFormat, ScienceCache, type ResourceMap, type ScienceObjectRef } from '@memberkit/science';
import { buildPackageModel, type PackageModel } from './package-model.js';
import { ViewCache } from './view-cache.js';

export const ORE_FORMAT = 'http://www.openarchives.org/ore/terms';

/** Read an object's bytes whole (documents only: callers bound the size first). */
export async function readAll(kit: Pick<ExtensionKit, 'storage'>, record: ObjectRecord, maxBytes = 16 * 1024 * 1024): Promise<Uint8Array> {
  if (record.sysmeta.size > maxBytes) throw new Error(`'${record.sysmeta.identifier}' is ${record.sysmeta.size} bytes, larger than ${maxBytes}`);
  const content = await kit.storage.read(record.storageKey);
  if (!content) throw new Error(`the bytes of '${record.sysmeta.identifier}' are missing from storage`);
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const c of content.stream as AsyncIterable<Buffer>) {
    total += c.length;
    if (total > maxBytes) {
      content.stream.destroy();
      throw new Error(`'${record.sysmeta.identifier}' is larger than ${maxBytes} bytes`);
    }
    chunks.push(c);
  }
  return Buffer.concat(chunks);
}

export function refOf(record: ObjectRecord): ScienceObjectRef {
  return { pid: record.sysmeta.identifier, formatId: record.sysmeta.formatId, serialVersion: record.sysmeta.serialVersion, size: record.sysmeta.size };
}

/**
 * Which resource maps aggregate a PID. Built lazily from every resource map in the catalogue
 * (parsed through the shared ScienceCache), kept current by the node's change notifications,
 * and rebuilt after `ttlMs` so objects added by other processes (scanners, wrap mode) appear.
 */
export class PackageIndex {
  private index?: Promise<Map<string, Set<string>>>;
  private builtAt = 0;

  constructor(
    private readonly metadata: CatalogueAdapter,
    private readonly science: ScienceCache,
    private readonly ttlMs = 5 * 60_000,
  ) {}

  async mapsOf(pid: string): Promise<string[]> {
    if (!this.index || Date.now() - this.builtAt > this.ttlMs) {
      const next = this.build();
      // Keep answering from the old index while a rebuild runs; the first build is awaited.
      if (!this.index) this.index = next;
      else void next.then(() => (this.index = next)).catch(() => undefined);
      this.builtAt = Date.now();
    }
    const index = await this.index;
    return [...(index.get(pid) ?? [])];
  }

  private async build(): Promise<Map<string, Set<string>>> {
    const index = new Map<string, Set<string>>();
    const pageSize = 500;
    for (let start = 0; ; start += pageSize) {
      const page = await this.metadata.list({ formatId: ORE_FORMAT, start, count: pageSize });
      for (const record of page.items) await this.add(index, record);
      if (page.items.length < pageSize || start + pageSize >= page.total) break;
    }
    return index;
  }

  private async add(index: Map<string, Set<string>>, record: ObjectRecord): Promise<void> {
    const map = await this.science.resourceMap(refOf(record));
    if (!map) return;
    for (const member of map.aggregated) {
      let set = index.get(member);
      if (!set) index.set(member, (set = new Set()));
      set.add(record.sysmeta.identifier);
    }
  }

  async onChange(change: ObjectChange): Promise<void> {
    if (!this.index) return;
    const index = await this.index;
    if (change.kind === 'delete') {
      for (const set of index.values()) set.delete(change.pid);
      return;
    }
    if (change.record && isResourceMapFormat(change.record.sysmeta.formatId)) await this.add(index, change.record);
  }
}

export interface ScienceServices {
  science: ScienceCache;
  packages: PackageIndex;
  /** The resolved package of a resource map version (cached; undefined when it cannot be read). */
  packageModel(mapRecord: ObjectRecord): Promise<PackageModel | undefined>;
  /** Rendered views for anonymous callers, by (theme, object version, package version, page). */
  views: ViewCache<{ body: string | Uint8Array; mediaType: string }>;
  /** Forget what was computed from `pid` (a change this process made). */
  invalidate(change: ObjectChange): Promise<void>;
  /**
   * Forget what every change committed so far by any process (the catalogue's change feed)
   * was computed from; one cheap query when nothing changed. Call before serving from the caches.
   */
  catchUp(): Promise<void>;
}

// One cache and one index per node (keyed by its catalogue), shared by MNView and MNPackage.
const shared = new WeakMap<object, ScienceServices>();

export function scienceServices(kit: ExtensionKit, options: { science?: ScienceCache } = {}): ScienceServices {
  let s = shared.get(kit.metadata);
  if (!s) {
    const science =
      options.science ??
      new ScienceCache({
        objects: async (ref) => {
          const record = await kit.metadata.get(ref.pid);
          if (!record) throw new Error(`'${ref.pid}' is not in the catalogue`);
          return readAll(kit, record);
        },
      });
    const packages = new PackageIndex(kit.metadata, science);
    const seen = new WeakSet<object>();
    // Packages: a few large models; views: many small pages. Both expire for other processes' changes.
    const models = new ViewCache<Promise<PackageModel | undefined>>({ maxEntries: 64, maxBytes: 64, ttlMs: 5 * 60_000 });
    const views = new ViewCache<{ body: string | Uint8Array; mediaType: string }>({ maxEntries: 500, maxBytes: 64 * 1024 * 1024, ttlMs: 60_000 });
    // Changes of other processes and scanners: the change feed, from the head at start (the caches start empty).
    const feed = new ChangeFollower(kit.metadata, async (entries) => {
      for (const e of entries) {
        const record = e.kind === 'remove' ? undefined : await kit.metadata.get(e.pid);
        await s!.invalidate({ kind: record ? 'update' : 'delete', pid: e.pid, ...(record ? { record } : {}) });
      }
    });
    const feedStarted = feed.available ? feed.begin().then(() => undefined) : Promise.resolve();
    feedStarted.catch((err: unknown) => kit.logger.error({ err }, 'views: could not read the change feed'));
    s = {
      science,
      packages,
      views,
      packageModel(mapRecord) {
        const key = `${mapRecord.sysmeta.identifier}@${mapRecord.sysmeta.serialVersion}`;
        const hit = models.get(key);
        if (hit) return hit;
        const value = (async () => {
          const map = await science.resourceMap(refOf(mapRecord)).catch(() => undefined);
          return map ? buildPackageModel(kit.metadata, mapRecord, map) : undefined;
        })();
        const ids = new Set<string>([mapRecord.sysmeta.identifier]);
        models.set(key, value, (pid) => ids.has(pid));
        value.then(
          (m) => {
            if (m) for (const id of m.ids) ids.add(id);
          },
          () => models.delete(key),
        );
        return value;
      },
      async catchUp() {
        await feedStarted;
        await feed.catchUp();
      },
      async invalidate(change) {
        // MNView and MNPackage both forward each change: act once.
        if (seen.has(change)) return;
        seen.add(change);
        const ids = [change.pid, ...(change.record?.sysmeta.seriesId ? [change.record.sysmeta.seriesId] : [])];
        science.invalidate(change.pid);
        for (const id of ids) {
          models.invalidate(id);
          views.invalidate(id);
        }
        // A new or changed map changes the pages of the objects it aggregates.
        if (change.record && isResourceMapFormat(change.record.sysmeta.formatId)) {
          const map = await science.resourceMap(refOf(change.record)).catch(() => undefined);
          if (map) {
            views.invalidateSubjects(new Set(map.aggregated));
          } else views.clear();
        }
        if (change.kind === 'delete') views.clear();
        await packages.onChange(change);
      },
    };
    shared.set(kit.metadata, s);
  }
  return s;
}

export type { ResourceMap };
