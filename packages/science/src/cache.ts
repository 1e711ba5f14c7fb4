import { isScienceMetadataFormat } from './metadata.js';
import { isResourceMapFormat } from './ore.js';
import { sharedSciencePool, type SciencePool } from './pool.js';
import type { ResourceMap, ScienceMetadata, ScienceRead } from './types.js';

/** One version of an object: enough to key the cache and to load its bytes. */
export interface ScienceObjectRef {
  pid: string;
  formatId: string;
  /** System metadata serialVersion; a new version (e.g. after updateSystemMetadata) is a new key. */
  serialVersion: number;
  /** Size in bytes when known; documents larger than `maxDocumentBytes` are not loaded. */
  size?: number;
}

/** Loads an object's bytes. Errors make the result undefined for that call (not cached). */
export type ScienceBytesLoader = (ref: ScienceObjectRef) => Promise<Uint8Array>;

export interface ScienceCacheOptions {
  /** How to load an object's bytes (e.g. read the storage adapter at the record's key). */
  objects: ScienceBytesLoader;
  /** Parsed documents kept (least recently used evicted first). Default 500. */
  maxEntries?: number;
  /** Documents larger than this are not read (not indexed). Default: the pool's budgets.maxBytes (16 MiB). */
  maxDocumentBytes?: number;
  /** Where documents are parsed. Default: the process's shared SciencePool (worker threads). */
  pool?: SciencePool;
}

type Entry = { kind: 'metadata'; value: Promise<ScienceRead<ScienceMetadata>> } | { kind: 'map'; value: Promise<ScienceRead<ResourceMap>> };

/**
 * Parsed science metadata and resource maps, shared by views, packages and query: each object
 * version is parsed once, in a worker thread of a SciencePool (never on the main thread).
 * Keyed by `${pid}@${serialVersion}`; concurrent requests for the same key share one load.
 * Every outcome of parsing is cached, unreadable and "not indexed" (over a budget, timed out,
 * out of memory) alike: parsing the same version again would give the same answer. Failed
 * loads (storage errors) are not cached.
 */
export class ScienceCache {
  private readonly entries = new Map<string, Entry>();
  private readonly load: ScienceBytesLoader;
  private readonly maxEntries: number;
  private readonly pool: SciencePool;
  private readonly maxDocumentBytes: number;

  constructor(options: ScienceCacheOptions) {
    this.load = options.objects;
    this.maxEntries = Math.max(1, options.maxEntries ?? 500);
    this.pool = options.pool ?? sharedSciencePool();
    this.maxDocumentBytes = Math.min(options.maxDocumentBytes ?? Infinity, this.pool.budgets.maxBytes);
  }

  static key(ref: Pick<ScienceObjectRef, 'pid' | 'serialVersion'>): string {
    return `${ref.pid}@${ref.serialVersion}`;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Science metadata of a supported METADATA object; undefined for other formats, bad documents or documents not indexed. */
  async metadata(ref: ScienceObjectRef): Promise<ScienceMetadata | undefined> {
    const r = await this.metadataResult(ref);
    return r.status === 'read' ? r.value : undefined;
  }

  /** The aggregation of a resource map object; undefined for other formats, bad documents or documents not indexed. */
  async resourceMap(ref: ScienceObjectRef): Promise<ResourceMap | undefined> {
    const r = await this.resourceMapResult(ref);
    return r.status === 'read' ? r.value : undefined;
  }

  /** Like {@link metadata}, saying why there is no value ("not indexed: <reason>"). */
  metadataResult(ref: ScienceObjectRef): Promise<ScienceRead<ScienceMetadata>> {
    if (!isScienceMetadataFormat(ref.formatId)) return Promise.resolve({ status: 'unreadable', reason: `format ${ref.formatId} is not science metadata` });
    return this.cached(ref, 'metadata', (bytes) => this.pool.metadata(ref.formatId, bytes));
  }

  /** Like {@link resourceMap}, saying why there is no value ("not indexed: <reason>"). */
  resourceMapResult(ref: ScienceObjectRef): Promise<ScienceRead<ResourceMap>> {
    if (!isResourceMapFormat(ref.formatId)) return Promise.resolve({ status: 'unreadable', reason: `format ${ref.formatId} is not a resource map` });
    return this.cached(ref, 'map', (bytes) => this.pool.resourceMap(bytes));
  }

  /** Forget every cached version of `pid` (optional: keys change with serialVersion anyway). */
  invalidate(pid: string): void {
    for (const k of [...this.entries.keys()]) if (k.slice(k.indexOf(':') + 1, k.lastIndexOf('@')) === pid) this.entries.delete(k);
  }

  clear(): void {
    this.entries.clear();
  }

  private cached<T>(ref: ScienceObjectRef, kind: Entry['kind'], parse: (bytes: Uint8Array) => Promise<ScienceRead<T>>): Promise<ScienceRead<T>> {
    const key = `${kind}:${ScienceCache.key(ref)}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value as Promise<ScienceRead<T>>;
    }
    const tooLarge: ScienceRead<T> = { status: 'not-indexed', reason: `larger than ${this.maxDocumentBytes} bytes` };
    // Known to be too large: answered without loading (nor caching: it costs nothing).
    if (ref.size !== undefined && ref.size > this.maxDocumentBytes) return Promise.resolve(tooLarge);
    const value = (async (): Promise<ScienceRead<T>> => {
      const bytes = await this.load(ref);
      if (bytes.byteLength > this.maxDocumentBytes) return tooLarge;
      return parse(bytes);
    })();
    this.entries.set(key, { kind, value } as Entry);
    value.catch(() => {
      if (this.entries.get(key)?.value === value) this.entries.delete(key);
    });
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value;
      if (oldest === undefined) break;
      this.entries.delete(oldest);
    }
    return value.catch((err: unknown): ScienceRead<T> => ({ status: 'unreadable', reason: `could not be loaded: ${String((err as Error)?.message ?? err).slice(0, 200)}` }));
  }
}
