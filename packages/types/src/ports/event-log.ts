/** One recorded access, before the store gives it an entryId. */
export interface EventRecord {
  /** The PID acted on (log entries carry PIDs only). */
  identifier: string;
  ipAddress: string;
  userAgent: string;
  subject: string;
  /** create, read, update, delete, archive, replicate, synchronization_failed, ... */
  event: string;
  dateLogged: Date;
  nodeIdentifier: string;
}

export interface StoredEvent extends EventRecord {
  /** Unique, increasing with insertion. */
  entryId: string;
}

export interface EventQuery {
  /** Inclusive lower bound on dateLogged. */
  fromDate?: Date;
  /** Exclusive upper bound on dateLogged. */
  toDate?: Date;
  /** Only these event values (undefined: all). */
  events?: readonly string[];
  /** Only entries whose identifier starts with this prefix. */
  idPrefix?: string;
  /**
   * Only entries about objects one of these subjects may read (see ObjectQuery.readableBy).
   * undefined: no filter. A store that cannot evaluate it MUST throw kind 'unsupported'.
   */
  readableBy?: readonly string[];
  start: number;
  /** 0 returns only the total (MUST be cheap). */
  count: number;
}

/**
 * The node's event log (core-owned state). Ordered by dateLogged then entryId ascending.
 */
export interface EventLogStore {
  open?(): Promise<void>;
  close?(): Promise<void>;
  append(events: readonly EventRecord[]): Promise<void>;
  query(query: EventQuery): Promise<{ total: number; entries: StoredEvent[] }>;
}
