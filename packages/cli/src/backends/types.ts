import type { AccessPolicy, CatalogueDescriptor, CatalogueParts, DescriptorContext, EventLogStore, StorageDescriptor } from '@memberkit/types';

/**
 * A backend plugs one kind of storage or catalogue into `memberkit serve`: a descriptor
 * (@memberkit/types, ports/adapter-descriptor.ts) exported by an adapter package as
 * `memberkitBackends`. Its `options` schema validates the configuration section (`storage` or
 * `catalogue`, minus `type`); its factory builds the adapter. backends/index.ts loads them.
 */
export type BackendContext = DescriptorContext;
export type StorageBackend<O = unknown> = StorageDescriptor<O>;
export type CatalogueBackend<O = unknown> = CatalogueDescriptor<O>;

/** A catalogue as the node gets it: a catalogue without its own event log is given the embedded one. */
export interface Catalogue extends CatalogueParts {
  eventLog: EventLogStore;
}

/** The backends a configuration may select, and the package that offers each type. */
export interface Backends {
  storage: ReadonlyArray<StorageBackend>;
  catalogue: ReadonlyArray<CatalogueBackend>;
  /** `storage:tree` → `@memberkit/adapter-filesystem` (for messages). */
  origin: ReadonlyMap<string, string>;
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
  /** Absent: the storage's native digest (an S3 ETag's MD5), else SHA-1. */
  checksumAlgorithm?: 'SHA-1' | 'MD5' | 'SHA-256';
  /** 'folders': publish a generated resource map per folder with one metadata document and data files. */
  datasets: 'folders' | false;
}

/** What a scan did (so far, when passed to onProgress). */
export type { ScanReport } from '@memberkit/core';
