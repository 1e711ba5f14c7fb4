import { readScienceMetadata, isScienceMetadataFormat } from './metadata.js';
import { readResourceMap, isResourceMapFormat } from './ore.js';
import type { ResourceMap, ScienceMetadata } from './types.js';

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
  /** Documents larger than this are not read (undefined). Default 16 MiB. */
  maxDocumentBytes?: number;
}

type Entry = { kind: 'metadata'; value: Promise<ScienceMetadata | undefined> } | { kind: 'map'; value: Promise<ResourceMap | undefined> };

/**
 * Parsed science metadata and resource maps, shared by views, packages and query: each object
 * version is parsed once. Keyed by `${pid}@${serialVersion}`; concurrent requests for the same
 * key share one load. Bad documents are cached as undefined (parsing them again would give the
 * same answer); failed loads are not cached.
 */
export class ScienceCache {
  private readonly entries = new Map<string, Entry>();
  private readonly load: ScienceBytesLoader;
  private readonly maxEntries: number;
  private readonly maxDocumentBytes: number;

  constructor(options: ScienceCacheOptions) {
    this.load = options.objects;
    this.maxEntries = Math.max(1, options.maxEntries ?? 500);
    this.maxDocumentBytes = options.maxDocumentBytes ?? 16 * 1024 * 1024;
  }

  static key(ref: Pick<ScienceObjectRef, 'pid' | 'serialVersion'>): string {
    return `${ref.pid}@${ref.serialVersion}`;
  }

  get size(): number {
    return this.entries.size;
  }

  /** Science metadata of a supported METADATA object; undefined for other formats or bad documents. */
  metadata(ref: ScienceObjectRef): Promise<ScienceMetadata | undefined> {
    if (!isScienceMetadataFormat(ref.formatId)) return Promise.resolve(undefined);
    return this.cached(ref, 'metadata', async (bytes) => readScienceMetadata(ref.formatId, bytes, { maxBytes: this.maxDocumentBytes })) as Promise<ScienceMetadata | undefined>;
  }

  /** The aggregation of a resource map object; undefined for other formats or bad documents. */
  resourceMap(ref: ScienceObjectRef): Promise<ResourceMap | undefined> {
    if (!isResourceMapFormat(ref.formatId)) return Promise.resolve(undefined);
    return this.cached(ref, 'map', (bytes) => readResourceMap(bytes, { maxBytes: this.maxDocumentBytes })) as Promise<ResourceMap | undefined>;
  }

  /** Forget every cached version of `pid` (optional: keys change with serialVersion anyway). */
  invalidate(pid: string): void {
    for (const k of [...this.entries.keys()]) if (k.slice(k.indexOf(':') + 1, k.lastIndexOf('@')) === pid) this.entries.delete(k);
  }

  clear(): void {
    this.entries.clear();
  }

  private cached<T>(ref: ScienceObjectRef, kind: Entry['kind'], parse: (bytes: Uint8Array) => Promise<T | undefined> | T | undefined): Promise<T | undefined> {
    const key = `${kind}:${ScienceCache.key(ref)}`;
    const hit = this.entries.get(key);
    if (hit) {
      this.entries.delete(key);
      this.entries.set(key, hit);
      return hit.value as Promise<T | undefined>;
    }
    if (ref.size !== undefined && ref.size > this.maxDocumentBytes) return Promise.resolve(undefined);
    const value = (async () => {
      const bytes = await this.load(ref);
      try {
        return await parse(bytes);
      } catch {
        return undefined;
      }
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
    return value.catch(() => undefined);
  }
}
