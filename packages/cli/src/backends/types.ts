import type { z } from 'zod';
import type { Logger } from '@memberkit/core';
import type { AccessPolicy, EventLogStore, JobStore, MetadataAdapter, ScanStateStore, StorageAdapter } from '@memberkit/types';

/**
 * A backend plugs one kind of storage or catalogue into `memberkit serve`. Its `options`
 * schema validates the configuration section (`storage` or `catalogue`, minus `type`); its
 * factory builds the adapter. Register a backend with one line in backends/index.ts.
 */
export interface BackendContext {
  /** Resolve a configured path against the configuration file's folder. */
  resolvePath(path: string): string;
  logger: Logger;
  /** The catalogue's scan state (wrap mode: scan rows, the scan lease, generated dataset maps). */
  scanState(): ScanStateStore;
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
export type { ScanReport } from '@memberkit/core';

export interface StorageBackend<O = unknown> {
  /** The `storage.type` value that selects this backend. */
  type: string;
  description: string;
  options: z.ZodType<O>;
  create(options: O, ctx: BackendContext): Promise<StorageAdapter> | StorageAdapter;
  /** Wrap mode support: the storage lists an existing archive that the core's WrapScanner publishes. */
  wrappable?: boolean;
}

export interface Catalogue {
  metadata: MetadataAdapter;
  eventLog: EventLogStore;
  /** Durable jobs (replication...); required for a federation section. */
  jobs?: JobStore;
  /** Scan state in the catalogue's own store (wrap mode); several processes share it. */
  scanState?: ScanStateStore;
}

export interface CatalogueBackend<O = unknown> {
  /** The `catalogue.type` value that selects this backend. */
  type: string;
  description: string;
  options: z.ZodType<O>;
  /** Build (not open) the catalogue; the node opens and closes its adapters. */
  create(options: O, ctx: BackendContext): Promise<Catalogue> | Catalogue;
}
