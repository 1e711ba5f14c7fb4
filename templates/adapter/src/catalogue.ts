import {
  AdapterError,
  type CatalogueChange,
  type CatalogueAdapter,
  type CatalogueCapabilities,
  type ObjectPage,
  type ObjectQuery,
  type ObjectRecord,
  type SeriesMember,
  type StoredSystemMetadata,
} from '@memberkit/types';

/**
 * Options of the catalogue. YOUR BACKEND: replace these with what your catalogue needs
 * (a database URL, a table mapping, the path of a manifest file...).
 */
export interface TemplateCatalogueOptions {
  /** Records present when the catalogue opens (e.g. fixtures). Default none. */
  initial?: readonly ObjectRecord[];
}

/** The catalogue's state. YOUR BACKEND: your tables/collections, with the same constraints. */
interface CatalogueState {
  /** PID -> record (the PID is the primary key). */
  records: Map<string, ObjectRecord>;
  /** seriesId -> PIDs of its members (several objects may share a seriesId). */
  series: Map<string, Set<string>>;
}

/**
 * The catalogue (CatalogueAdapter in @memberkit/types): system metadata and storage key by
 * PID, series lookup, ordered listing, and the write side (`apply`).
 *
 * This starting point keeps the catalogue in memory; each place that touches the in-memory
 * state is marked `YOUR BACKEND:`. What it shows, and what your backend MUST keep:
 * - identifiers: a PID is never equal to another PID or to any seriesId, and a seriesId is
 *   never equal to any PID (the record's own included); kind 'already-exists' otherwise.
 *   In a database these are unique constraints, so they hold under concurrent writers;
 * - `apply` is atomic: inserts, then replaces, then removes, in array order; the first
 *   failure leaves nothing of the change (a transaction);
 * - `replace` is a compare-and-set on serialVersion ('conflict'), keeps the storage key and
 *   keeps isReplica when it is undefined; 'not-found' for an absent PID;
 * - `list` orders by dateSysMetadataModified, then PID, and `readableBy` matches the
 *   rightsHolder and every subject of an allow rule with at least one permission, compared
 *   literally (`CN=alice` is not `CN=Alice`);
 * - records go in and out as copies: a caller never shares an object with the store.
 */
export class TemplateCatalogue implements CatalogueAdapter {
  /** `write: true` means `apply` is implemented; a read-only catalogue declares false and drops `apply`. */
  readonly capabilities: CatalogueCapabilities = { write: true };

  private readonly initial: readonly ObjectRecord[];
  // YOUR BACKEND: the connection or pool, created in open().
  private state: CatalogueState | undefined;

  constructor(options: TemplateCatalogueOptions = {}) {
    // No I/O here: only remember the options.
    this.initial = options.initial ?? [];
  }

  async open(): Promise<void> {
    // YOUR BACKEND: connect, run migrations, check the schema.
    if (this.state) return;
    const state: CatalogueState = { records: new Map(), series: new Map() };
    if (this.initial.length > 0) applyChange(state, { insert: this.initial.map(copy) });
    this.state = state;
  }

  async close(): Promise<void> {
    // YOUR BACKEND: release connections.
    this.state = undefined;
  }

  async get(pid: string): Promise<ObjectRecord | undefined> {
    // YOUR BACKEND: SELECT ... WHERE pid = ?
    const record = this.current().records.get(pid);
    return record === undefined ? undefined : copy(record);
  }

  async seriesMembers(sid: string): Promise<SeriesMember[]> {
    // YOUR BACKEND: SELECT pid, obsoletes, obsoleted_by, date_uploaded ... WHERE series_id = ?
    const { records, series } = this.current();
    const members: SeriesMember[] = [];
    for (const pid of series.get(sid) ?? []) {
      const sysmeta = records.get(pid)!.sysmeta;
      members.push({
        pid,
        ...(sysmeta.obsoletes !== undefined ? { obsoletes: sysmeta.obsoletes } : {}),
        ...(sysmeta.obsoletedBy !== undefined ? { obsoletedBy: sysmeta.obsoletedBy } : {}),
        dateUploaded: new Date(sysmeta.dateUploaded),
      });
    }
    return members;
  }

  async identifierUse(id: string): Promise<'pid' | 'sid' | undefined> {
    // YOUR BACKEND: one lookup in an identifiers table (id primary key, kind).
    const { records, series } = this.current();
    if (records.has(id)) return 'pid';
    if (series.has(id)) return 'sid';
    return undefined;
  }

  async list(query: ObjectQuery): Promise<ObjectPage> {
    const { start, count } = query;
    if (!Number.isSafeInteger(start) || start < 0) throw new AdapterError('invalid', `start must be a non-negative integer, got ${start}`);
    if (!Number.isSafeInteger(count) || count < 0) throw new AdapterError('invalid', `count must be a non-negative integer, got ${count}`);
    // YOUR BACKEND: one query with WHERE (the filters below), ORDER BY
    // date_sysmeta_modified, pid, LIMIT count OFFSET start, and a COUNT(*) for the total.
    // Index (date_sysmeta_modified, pid): nodes page through millions of objects.
    const readers = query.readableBy === undefined ? undefined : new Set(query.readableBy);
    const matching = [...this.current().records.values()].filter((record) => {
      const sm = record.sysmeta;
      const modified = sm.dateSysMetadataModified.getTime();
      if (query.fromDate !== undefined && modified < query.fromDate.getTime()) return false; // inclusive
      if (query.toDate !== undefined && modified >= query.toDate.getTime()) return false; // exclusive
      if (query.formatId !== undefined && sm.formatId !== query.formatId) return false;
      if (query.identifier !== undefined && sm.identifier !== query.identifier && sm.seriesId !== query.identifier) return false;
      if (query.replicas === false && record.isReplica) return false;
      if (readers !== undefined && !readableBy(sm).some((subject) => readers.has(subject))) return false;
      return true;
    });
    matching.sort(listingOrder);
    return { total: matching.length, items: count === 0 ? [] : matching.slice(start, start + count).map(copy) };
  }

  async apply(change: CatalogueChange): Promise<void> {
    // YOUR BACKEND: BEGIN; the same steps as SQL statements; COMMIT (ROLLBACK on the first
    // error, then rethrow it as an AdapterError: unique violation -> 'already-exists',
    // 0 rows updated by the compare-and-set -> 'conflict' or 'not-found').
    // In memory: apply to a draft and swap it in only when every step succeeded.
    const current = this.current();
    const draft: CatalogueState = {
      records: new Map(current.records),
      series: new Map([...current.series].map(([sid, pids]) => [sid, new Set(pids)])),
    };
    applyChange(draft, change);
    this.state = draft;
  }

  private current(): CatalogueState {
    // YOUR BACKEND: map "not opened" or "connection lost" to 'unavailable' like this.
    if (this.state === undefined) throw new AdapterError('unavailable', 'the catalogue is not open');
    return this.state;
  }
}

/** Apply `change` to `state` in place (the caller passes a draft). */
function applyChange(state: CatalogueState, change: CatalogueChange): void {
  for (const record of change.insert ?? []) {
    const pid = record.sysmeta?.identifier;
    if (typeof pid !== 'string' || pid === '') throw new AdapterError('invalid', 'sysmeta.identifier must be a non-empty string');
    if (state.records.has(pid) || state.series.has(pid)) throw new AdapterError('already-exists', `identifier ${pid} is already in use`);
    checkSeriesId(state, pid, record.sysmeta.seriesId);
    const stored = copy(record);
    state.records.set(pid, stored);
    addToSeries(state, stored.sysmeta);
  }
  for (const { pid, expectedSerialVersion, sysmeta, isReplica } of change.replace ?? []) {
    const existing = state.records.get(pid);
    if (existing === undefined) throw new AdapterError('not-found', `no object ${pid}`);
    if (sysmeta.identifier !== pid) throw new AdapterError('invalid', `replacement sysmeta.identifier must equal ${pid}`);
    // Compare-and-set: the caller read serialVersion N and expects it still to be N.
    if (existing.sysmeta.serialVersion !== expectedSerialVersion) {
      throw new AdapterError('conflict', `${pid} has serialVersion ${existing.sysmeta.serialVersion}, expected ${expectedSerialVersion}`);
    }
    removeFromSeries(state, existing.sysmeta);
    checkSeriesId(state, pid, sysmeta.seriesId);
    const replaced: ObjectRecord = { sysmeta: structuredClone(sysmeta), storageKey: existing.storageKey, isReplica: isReplica ?? existing.isReplica };
    state.records.set(pid, replaced);
    addToSeries(state, replaced.sysmeta);
  }
  for (const { pid } of change.remove ?? []) {
    const existing = state.records.get(pid);
    if (existing === undefined) throw new AdapterError('not-found', `no object ${pid}`);
    removeFromSeries(state, existing.sysmeta);
    state.records.delete(pid);
  }
}

/** A seriesId is never equal to any PID, the record's own included. */
function checkSeriesId(state: CatalogueState, pid: string, seriesId: string | undefined): void {
  if (seriesId === undefined) return;
  if (seriesId === pid || state.records.has(seriesId)) throw new AdapterError('already-exists', `seriesId ${seriesId} is in use as a PID`);
}

function addToSeries(state: CatalogueState, sysmeta: StoredSystemMetadata): void {
  if (sysmeta.seriesId === undefined) return;
  const members = state.series.get(sysmeta.seriesId) ?? new Set<string>();
  members.add(sysmeta.identifier);
  state.series.set(sysmeta.seriesId, members);
}

function removeFromSeries(state: CatalogueState, sysmeta: StoredSystemMetadata): void {
  if (sysmeta.seriesId === undefined) return;
  const members = state.series.get(sysmeta.seriesId);
  members?.delete(sysmeta.identifier);
  if (members?.size === 0) state.series.delete(sysmeta.seriesId);
}

/** The subjects that may read an object: its rightsHolder and every subject granted any permission. */
export function readableBy(sysmeta: StoredSystemMetadata): string[] {
  const subjects = [sysmeta.rightsHolder];
  for (const rule of sysmeta.accessPolicy?.allow ?? []) {
    if ((rule.permission?.length ?? 0) > 0) subjects.push(...(rule.subject ?? []));
  }
  return subjects;
}

/** Listing order: dateSysMetadataModified ascending, then PID ascending. */
function listingOrder(a: ObjectRecord, b: ObjectRecord): number {
  const byDate = a.sysmeta.dateSysMetadataModified.getTime() - b.sysmeta.dateSysMetadataModified.getTime();
  if (byDate !== 0) return byDate;
  const pa = a.sysmeta.identifier;
  const pb = b.sysmeta.identifier;
  return pa < pb ? -1 : pa > pb ? 1 : 0;
}

function copy(record: ObjectRecord): ObjectRecord {
  return structuredClone(record);
}

/** A catalogue (call `open()` before use, or let the node open it). */
export function createTemplateCatalogue(options: TemplateCatalogueOptions = {}): TemplateCatalogue {
  return new TemplateCatalogue(options);
}
