import type BetterSqlite3 from 'better-sqlite3';
import type { z } from 'zod';
import type { Logger } from '@memberkit/core';
import type { AccessPolicy, EventLogStore, JobStore, MetadataAdapter, StorageAdapter } from '@memberkit/types';

/**
 * A backend plugs one kind of storage or catalogue into `memberkit serve`. Its `options`
 * schema validates the configuration section (`storage` or `catalogue`, minus `type`); its
 * factory builds the adapter. Register a backend with one line in backends/index.ts.
 */
export interface BackendContext {
  /** Resolve a configured path against the configuration file's folder. */
  resolvePath(path: string): string;
  logger: Logger;
  /** A SQLite database for small local state (scanner caches), opened on first use. */
  stateDatabase(): Promise<BetterSqlite3.Database>;
}

/** What the wrap section says, for scanners: defaults for every wrapped object. */
export interface WrapOptions {
  nodeId: string;
  pidPrefix: string;
  formatOverrides: Record<string, string>;
  /** formatIds outside the federation's list that may be published. */
  extraFormats: string[];
  rightsHolder: string;
  accessPolicy: AccessPolicy;
  checksumAlgorithm: 'SHA-1' | 'MD5' | 'SHA-256';
  /** 'folders': publish a generated resource map per folder with one metadata document and data files. */
  datasets: 'folders' | false;
}

/** What a scan did (so far, when passed to onProgress). */
export interface ScanReport {
  added: number;
  changed: number;
  removed: number;
  unchanged: number;
  skipped: ReadonlyArray<{ path: string; reason: string }>;
  durationMs: number;
  /** Files or keys listed so far, when the scanner counts them. */
  seen?: number;
  /** Bytes read to compute checksums so far, when the scanner counts them. */
  bytesHashed?: number;
}

/** Keeps a catalogue in step with what a read-only storage holds (wrap mode). */
export interface Scanner {
  /** One scan; `onProgress` hears the counts so far after each batch reaches the catalogue. */
  scan(options?: { onProgress?: (report: ScanReport) => void }): Promise<ScanReport>;
  /** Rescan every `intervalMs` after the previous scan ended; each result or failure is reported. */
  watch(options: { intervalMs: number; onScan?: (report: ScanReport) => void; onError?: (error: unknown) => void }): { stop(): Promise<void> };
}

export interface StorageBackend<O = unknown> {
  /** The `storage.type` value that selects this backend. */
  type: string;
  description: string;
  options: z.ZodType<O>;
  create(options: O, ctx: BackendContext): Promise<StorageAdapter> | StorageAdapter;
  /** Wrap mode support: a scanner publishing the storage's content into the catalogue. */
  scanner?(storage: StorageAdapter, catalogue: MetadataAdapter, wrap: WrapOptions, ctx: BackendContext): Promise<Scanner> | Scanner;
}

export interface Catalogue {
  metadata: MetadataAdapter;
  eventLog: EventLogStore;
  /** Durable jobs (replication...); required for a federation section. */
  jobs?: JobStore;
  /** The catalogue's SQLite database, when it has one (scanner state then lives there). */
  sqlite?: () => BetterSqlite3.Database;
}

export interface CatalogueBackend<O = unknown> {
  /** The `catalogue.type` value that selects this backend. */
  type: string;
  description: string;
  options: z.ZodType<O>;
  /** Build (not open) the catalogue; the node opens and closes its adapters. */
  create(options: O, ctx: BackendContext): Promise<Catalogue> | Catalogue;
}
