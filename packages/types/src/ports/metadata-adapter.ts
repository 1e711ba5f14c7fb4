import type { SystemMetadata } from '../models.js';
import type { StorageKey } from './storage-adapter.js';

/**
 * One object in the catalogue: its complete system metadata (v2 superset, with
 * serialVersion, dateUploaded and dateSysMetadataModified always set) and where its bytes are.
 */
export interface ObjectRecord {
  sysmeta: StoredSystemMetadata;
  storageKey: StorageKey;
  /** True when this node holds the object as a replica of another node's content. */
  isReplica: boolean;
}

/** System metadata as stored: the fields the node must set are always present. */
export type StoredSystemMetadata = SystemMetadata & {
  serialVersion: number;
  dateUploaded: Date;
  dateSysMetadataModified: Date;
  submitter: string;
  archived: boolean;
};

/** A member of a series (objects sharing a seriesId), enough for the core to find the head. */
export interface SeriesMember {
  pid: string;
  obsoletes?: string;
  obsoletedBy?: string;
  dateUploaded: Date;
}

export interface ObjectQuery {
  /** Inclusive lower bound on dateSysMetadataModified. */
  fromDate?: Date;
  /** Exclusive upper bound on dateSysMetadataModified. */
  toDate?: Date;
  formatId?: string;
  /** Objects whose PID equals it, or whose seriesId equals it. */
  identifier?: string;
  /** false: leave out replicas (isReplica). undefined or true: include them. */
  replicas?: boolean;
  /**
   * Only objects one of these subjects may read (rightsHolder, or any permission granted to
   * the subject in the access policy; `public` matches the public grant), compared literally:
   * the caller expands its own subjects (groups, equivalent identities, `authenticatedUser`).
   * undefined: no filter; an empty array matches nothing.
   */
  readableBy?: readonly string[];
  /** Zero-based offset into the ordered result. */
  start: number;
  /** Maximum items to return; 0 returns only the total (MUST be cheap). */
  count: number;
}

export interface ObjectPage {
  /** Every object matching the filters, ignoring start/count. */
  total: number;
  items: ObjectRecord[];
}

/**
 * One atomic change to the catalogue. Either all of it is applied or none of it: inserts
 * first, then replaces, then removes, each in array order; the first failure rolls back the
 * whole change. The core builds these; an adapter only has to apply them faithfully.
 */
export interface CatalogueChange {
  /**
   * Records to add. MUST fail with kind 'already-exists' when a record's PID is already in
   * use as a PID or as a SID, or its seriesId is in use as a PID, also under concurrent
   * writers (unique constraints, not a check-then-insert in memory).
   */
  insert?: ObjectRecord[];
  /**
   * System metadata to replace. MUST fail with kind 'conflict' unless the stored
   * serialVersion equals `expectedSerialVersion` (compare-and-set), and with 'not-found' when
   * the PID is absent. A seriesId set by the replacement follows the insert rule.
   */
  replace?: Array<{ pid: string; expectedSerialVersion: number; sysmeta: StoredSystemMetadata; /** undefined keeps the stored value. */ isReplica?: boolean }>;
  /** Records to remove; 'not-found' when absent. */
  remove?: Array<{ pid: string }>;
}

/** What listObjects shows of an object: the fields of Types.ObjectInfo. */
export type ObjectSummary = Pick<StoredSystemMetadata, 'identifier' | 'formatId' | 'checksum' | 'dateSysMetadataModified' | 'size'>;

export interface MetadataCapabilities {
  /** `apply` is implemented. Default false: a read-only catalogue (a wrapped legacy archive). */
  write: boolean;
}

/**
 * The catalogue: system metadata and storage key by PID, series lookup, ordered listing.
 * Listing order is dateSysMetadataModified ascending, then PID ascending (stable paging).
 * Implementations MUST NOT do I/O in constructors (use `open`).
 */
export interface MetadataAdapter {
  readonly capabilities: MetadataCapabilities;
  open?(): Promise<void>;
  close?(): Promise<void>;

  /** The record of `pid`, or undefined. */
  get(pid: string): Promise<ObjectRecord | undefined>;

  /** Every object whose seriesId is `sid` (empty when none). */
  seriesMembers(sid: string): Promise<SeriesMember[]>;

  /** How `id` is in use: as a PID, as a SID, or not at all. */
  identifierUse(id: string): Promise<'pid' | 'sid' | undefined>;

  /** A page of objects matching `query`, in listing order, with the total. */
  list(query: ObjectQuery): Promise<ObjectPage>;

  /**
   * The same page as `list`, with only what listObjects shows of each object. Optional: a
   * store that keeps these fields in columns answers without decoding whole system metadata
   * (a page of 1,000 full records costs more to decode than to read); the core calls `list`
   * when it is absent.
   */
  listSummaries?(query: ObjectQuery): Promise<{ total: number; items: ObjectSummary[] }>;

  /** Apply one atomic change. Required when capabilities.write. */
  apply?(change: CatalogueChange): Promise<void>;
}
