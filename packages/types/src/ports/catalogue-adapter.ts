import type { SystemMetadata } from '../models.js';
import type { StorageKey } from './storage-adapter.js';
import type { EventRecord } from './event-log.js';

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
  /**
   * Event-log entries of the change, written in the same transaction as the change (all or
   * none). Only given when `logsEventsTo` answered true for the node's event log; a catalogue
   * that does not log events never receives them.
   */
  events?: readonly EventRecord[];
  /**
   * Write intents (ids returned by `intend`) the change settles: removed in the same
   * transaction, so bytes whose catalogue commit happened are never swept.
   */
  intents?: readonly string[];
}

/** What `apply` did, as the store recorded it. */
export interface AppliedChange {
  /**
   * dateSysMetadataModified stored for each inserted or replaced PID. A catalogue with one
   * clock assigns it in the transaction (never earlier than the proposed date, the previous
   * stamp of the catalogue + 1 ms, or the object's previous value + 1 ms), so listing order is
   * commit order; the core puts these dates into its answers and notices.
   */
  dates: ReadonlyMap<string, Date>;
  /** Position of the change's last entry in the change feed (absent without a feed). */
  seq?: number;
}

/** One entry of the change feed: `pid` was inserted, replaced or removed by the commit at `seq`. */
export interface FeedEntry {
  seq: number;
  pid: string;
  kind: 'insert' | 'replace' | 'remove';
}

/** A page of the change feed and the feed's head when it was read. */
export interface FeedPage {
  entries: FeedEntry[];
  /** The last committed position (entries beyond it may not be visible yet). */
  head: number;
}

/** A write intent older than a sweep's grace period (its writer died, or failed before the catalogue commit). */
export interface StaleIntent {
  id: string;
  /** The name the bytes were committed under (the PID). */
  name: string;
  created: Date;
}

/** What listObjects shows of an object: the fields of Types.ObjectInfo. */
export type ObjectSummary = Pick<StoredSystemMetadata, 'identifier' | 'formatId' | 'checksum' | 'dateSysMetadataModified' | 'size'>;

/**
 * System metadata fields an overlay (CatalogueCapabilities.overlay) keeps beside a read-only
 * legacy archive: what the archive lacks and the node must be able to change (access policy,
 * rights holder, archived, replicas, ...). Every other field comes from the archive, except
 * serialVersion and dateSysMetadataModified, which move with every change.
 */
export const OVERLAY_FIELDS = [
  'accessPolicy', 'replicationPolicy', 'archived', 'replica', 'rightsHolder', 'mediaType', 'fileName',
  'originMemberNode', 'authoritativeMemberNode',
] as const;

export type OverlayField = (typeof OVERLAY_FIELDS)[number];

/**
 * What a catalogue declares. A declared capability is an obligation (the testkit checks it,
 * the core relies on it); each flag says its default and what the core does without it.
 */
export interface CatalogueCapabilities {
  /**
   * `apply` takes every change: insert, replace and remove of any record. Default false: a
   * read-only catalogue (a wrapped legacy archive). Off: the core refuses create, update,
   * delete and replicate with NotImplemented, and changes records only as `overlay` allows.
   */
  write: boolean;
  /**
   * With `write` false: `apply` takes `replace` changes that touch only OVERLAY_FIELDS (kept
   * in an overlay beside the read-only archive), with the same compare-and-set on
   * serialVersion; a replace that changes any other field fails with 'unsupported'. The core
   * then allows archive, updateSystemMetadata of overlay fields and the CN's system metadata
   * refresh (overlay fields only). Default false: the core refuses those with NotImplemented
   * and never calls `apply`.
   */
  overlay?: boolean;
}

/**
 * The catalogue: system metadata and storage key by PID, series lookup, ordered listing.
 * Listing order is dateSysMetadataModified ascending, then PID ascending (stable paging).
 * Implementations MUST NOT do I/O in constructors (use `open`).
 */
export interface CatalogueAdapter {
  readonly capabilities: CatalogueCapabilities;
  open?(): Promise<void>;
  close?(): Promise<void>;

  /** The record of `pid`, or undefined. */
  get(pid: string): Promise<ObjectRecord | undefined>;

  /**
   * Optional: the records of several PIDs at once, by PID (absent ones left out), for callers
   * that look up hundreds together (a wrap scan's batch). Without it they call `get` per PID.
   */
  getMany?(pids: readonly string[]): Promise<Map<string, ObjectRecord>>;

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

  /**
   * Apply one atomic change. Required when capabilities.write. Returns the dates it stored
   * (AppliedChange); a catalogue that stores the proposed dates as given may return nothing.
   */
  apply?(change: CatalogueChange): Promise<AppliedChange | void>;

  /**
   * True when `apply` writes `change.events` into `eventLog` in its own transaction (the
   * catalogue and the log are one store). Absent or false: the core appends events after apply.
   */
  logsEventsTo?(eventLog: unknown): boolean;

  /**
   * The change feed: every insert, replace and remove in commit order, positions increasing
   * with commit order across processes (a plain serial is not: it is taken before commit).
   * Entries after `seq`, at most `limit`, with the head. Optional: without it, consumers
   * (query index, caches) cannot follow other processes' changes.
   */
  changesSince?(seq: number, limit: number): Promise<FeedPage>;
  /** The feed's head alone (MUST be one cheap query: consumers call it before each request). */
  changeHead?(): Promise<number>;
  /**
   * The feed's head when the adapter knows it without I/O (an embedded database that no
   * process has written since the head was last read), else undefined. Optional: lets a
   * consumer that is up to date skip even the cheap query on a hot read path.
   */
  knownChangeHead?(): number | undefined;
  /**
   * Forget feed entries older than `before` and beyond the newest `keepLatest` (the sweep runs
   * it), keeping the newest; the number removed. Positions are dense, so a reader that fell
   * behind sees a gap before its next entry and reconciles in full.
   */
  pruneChanges?(before: Date, keepLatest: number): Promise<number>;

  /**
   * Records that bytes are about to be committed to storage under `name`; returns the intent's
   * id, which the catalogue change that references the bytes settles (`change.intents`). The
   * three intent methods come together or not at all. With `unused` (the write's new PID and
   * SID), the intent is recorded only if none of them is in use as a PID or SID; otherwise it
   * fails with 'already-exists' and records nothing (one write instead of a read and a write).
   */
  intend?(name: string, unused?: readonly string[]): Promise<string>;
  /** Intents created before `before` and never settled, oldest first, at most `limit`. */
  staleIntents?(before: Date, limit: number): Promise<StaleIntent[]>;
  /** Forget intents (the sweep handled them). */
  dropIntents?(ids: readonly string[]): Promise<void>;
  /** True when a catalogue row references storage key `key` (the sweep never removes those bytes). */
  referencesKey?(key: string): Promise<boolean>;
}
