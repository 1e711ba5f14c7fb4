import { AdapterError } from '@memberkit/types';
import type { AppliedChange, CatalogueAdapter, CatalogueCapabilities, CatalogueChange, FeedEntry, FeedPage, ObjectPage, ObjectQuery, ObjectRecord, SeriesMember, StaleIntent, StoredSystemMetadata } from '@memberkit/types';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { dialectSql, inList, num, text, textOrNull } from './dialect.js';
import { isUniqueViolation } from './errors.js';
import { changesOf, DialectText, FOR_UPDATE, q, rowOf, rowsOf, Rows, type Routine } from './executor.js';
import { countRows, orderedPage } from './paging.js';
import { asStep, MERGE_LIMIT, mergedPublicPage, OBJECT_POSITIONS, objectSlice, positionedPage, type PositionDelta, type PositionSlice } from './position-index.js';
import { readers, reviveSysmeta, serializeSysmeta, SUMMARY_COLUMNS, summaryOf } from './object-row.js';
import type { SqlStore } from './sql-store.js';
import { listingIndexesCoverSummaries } from './migrations.js';
import { changeHead, changesSince, feedRows, insertFeedRows, knownChangeHead, pruneChanges } from './change-feed.js';
import { lockClockSteps, type ClockTick } from './clock.js';
import type { WriteGroup } from './write-group.js';
import { appendEvents, SqlEventLog } from './event-log.js';
import { dropIntents, intend, settleIntents, staleIntents } from './write-intents.js';
import { checkSlice, epochMs, type ObjectSummary } from '@memberkit/types';

const RECORD_COLUMNS = 'r.sysmeta, r.storage_key, r.is_replica';

interface RecordRow {
  sysmeta: unknown;
  storage_key: unknown;
  is_replica: unknown;
}

/**
 * The readableBy condition on `pidColumn`: an access row for one of `subjects` exists.
 * 'exists' probes per row (shallow pages), 'in' collects readable PIDs once (totals, deep pages).
 */
export function readableBy(pidColumn: RawBuilder<unknown>, subjects: readonly string[], form: 'exists' | 'in', table = 'mk_access'): RawBuilder<unknown> {
  const t = sql.table(table);
  return form === 'exists'
    ? sql`EXISTS (SELECT 1 FROM ${t} a WHERE a.pid = ${pidColumn} AND ${inList(sql.ref('a.subject'), subjects)})`
    : sql`${pidColumn} IN (SELECT a.pid FROM ${t} a WHERE ${inList(sql.ref('a.subject'), subjects)})`;
}

/**
 * The native catalogue (CatalogueAdapter, capabilities.write) on PostgreSQL, MySQL/MariaDB or
 * SQLite: the same semantics as the embedded SQLite catalogue of the filesystem adapter.
 * Obtain it from `createSqlCatalogue(...).catalogue`; its open/close open and close the store.
 *
 * - `apply` is one write transaction: inserts, then replaces, then removes, in array order;
 *   the first failure rolls back everything. Deadlocks and serialization failures are
 *   retried a few times, then reported as 'unavailable'.
 * - PID/SID rules are enforced by the primary key of `mk_identifiers` (not by reads in
 *   memory), so they hold across processes: a PID never equals another PID or any SID; a
 *   seriesId never equals any PID (its own included) → 'already-exists'.
 * - `replace` is a compare-and-set: the row is locked (`FOR UPDATE`) and updated `WHERE
 *   serial_version = expected`; 'conflict' when it changed, 'not-found' when absent. It
 *   keeps the storage key, and keeps isReplica when undefined.
 * - readableBy matches the rightsHolder and every subject of an allow rule with at least one
 *   permission, literally (the caller expands its subjects).
 * - MySQL/MariaDB keep identifiers as VARBINARY(2048): a PID longer than 2048 UTF-8 bytes is
 *   refused with 'invalid' there (PostgreSQL and SQLite have no limit).
 */
export class SqlNativeCatalogue implements CatalogueAdapter {
  readonly capabilities: CatalogueCapabilities = { write: true };

  constructor(
    readonly store: SqlStore,
    /** 'proposed': store the writer's dates as given (imports, tests); see SqlCatalogueOptions.clock. */
    readonly clock: 'catalogue' | 'proposed' = 'catalogue',
  ) {}

  async open(): Promise<void> {
    await this.store.open();
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  async get(pid: string): Promise<ObjectRecord | undefined> {
    // Decoding inside the routine: an unreadable stored record is 'internal' with its cause.
    return this.store.readOne('get object', function* () {
      const row = yield* rowOf<RecordRow>(q`SELECT sysmeta, storage_key, is_replica FROM mk_objects WHERE pid = ${pid}`);
      return row === undefined ? undefined : toRecord(row);
    });
  }

  async getMany(pids: readonly string[]): Promise<Map<string, ObjectRecord>> {
    const found = new Map<string, ObjectRecord>();
    if (pids.length === 0) return found;
    await this.store.reading('get objects', function* () {
      // Parameter lists stay below every dialect's limit.
      for (let i = 0; i < pids.length; i += 500) {
        const rows = yield* rowsOf<RecordRow & { pid: unknown }>(q`SELECT pid, sysmeta, storage_key, is_replica FROM mk_objects WHERE pid IN ${new Rows([pids.slice(i, i + 500)])}`);
        for (const row of rows) found.set(text(row.pid), toRecord(row));
      }
    });
    return found;
  }

  /** Every object whose seriesId is `sid`, ordered by dateUploaded then PID. */
  async seriesMembers(sid: string): Promise<SeriesMember[]> {
    const rows = await this.store.readOne('list series members', () =>
      rowsOf<{ pid: unknown; obsoletes: unknown; obsoleted_by: unknown; date_uploaded: unknown }>(q`SELECT pid, obsoletes, obsoleted_by, date_uploaded
        FROM mk_objects WHERE series_id = ${sid} ORDER BY date_uploaded, pid`),
    );
    return rows.map((row) => {
      const member: SeriesMember = { pid: text(row.pid), dateUploaded: new Date(num(row.date_uploaded)) };
      const obsoletes = textOrNull(row.obsoletes);
      const obsoletedBy = textOrNull(row.obsoleted_by);
      if (obsoletes !== null) member.obsoletes = obsoletes;
      if (obsoletedBy !== null) member.obsoletedBy = obsoletedBy;
      return member;
    });
  }

  async identifierUse(id: string): Promise<'pid' | 'sid' | undefined> {
    const row = await this.store.readOne('identifierUse', () => rowOf<{ kind: unknown }>(q`SELECT kind FROM mk_identifiers WHERE id = ${id}`));
    return row === undefined ? undefined : (text(row.kind) as 'pid' | 'sid');
  }

  /**
   * Listing order dateSysMetadataModified then PID; total and items from one snapshot.
   * - Slices the position index describes (every object or the public ones, optionally
   *   between two dates) come from it: any page in one bucket's walk (position-index.ts).
   * - Other filters walk an index (`orderedPage`). A readableBy that includes `public` reads
   *   `is_public = 1 OR readable by the other subjects`, and its total is the public count
   *   plus the restricted objects the other subjects may read, counted apart.
   */
  async list(query: ObjectQuery): Promise<ObjectPage> {
    const { total, rows } = await this.#page<RecordRow>(query, RECORD_COLUMNS);
    return { total, items: rows.map(toRecord) };
  }

  /** The page `list` returns, read from the summary columns (no system metadata JSON decoded). */
  async listSummaries(query: ObjectQuery): Promise<{ total: number; items: ObjectSummary[] }> {
    // The position index's rows as arrays of values: no object per row (better-sqlite3's raw
    // mode, node-pg's rowMode 'array'); a page of 1,000 summaries is mostly that.
    const arrays = this.store.dialect.name !== 'mysql';
    const covered = listingIndexesCoverSummaries(this.store.dialect);
    const { total, rows } = await this.#page<Record<string, unknown> | unknown[]>(query, SUMMARY_COLUMNS, arrays, covered);
    return { total, items: rows.map((row) => summaryOf(row)) };
  }

  async #page<Row>(query: ObjectQuery, columns: string, arrays = false, covered = false): Promise<{ total: number; rows: Row[] }> {
    checkSlice(query.start, query.count);
    const base = objectConditions(query);
    const subjects = query.readableBy;
    if (subjects !== undefined && subjects.length === 0) return { total: 0, rows: [] };
    const others = subjects?.filter((s) => s !== 'public') ?? [];
    const publicToo = subjects?.includes('public') ?? false;
    const ranked = objectSlice(query);
    const store = this.store;
    const publicAndOwn = (slice: PositionSlice) => this.#publicAndOwn<Row>(slice, others, query.start, query.count, columns, covered);
    return store.reading('list objects', function* () {
      if (ranked !== undefined && ranked.others.length === 0) {
        const { slice } = ranked;
        // Any depth: the walk starts at the nearer end of the page's bucket (at most half a bucket
        // skipped, also on the first pages, which a walk from the start of the index would skip
        // up to a whole bucket for), and reads the buckets instead of the counter for its total.
        const page = yield* positionedPage<Row>(store.dialect.name, OBJECT_POSITIONS, slice, { start: query.start, count: query.count, columns, arrays, covered });
        if (page !== undefined) return page;
      }
      if (ranked !== undefined && ranked.others.length > 0) {
        const merged = yield* publicAndOwn(ranked.slice);
        if (merged !== undefined) return merged;
      }
      const readable = (form: 'exists' | 'in') => {
        if (!publicToo) return readableBy(sql.ref('o.pid'), others, form);
        return others.length === 0 ? sql`o.is_public = 1` : sql`(o.is_public = 1 OR ${readableBy(sql.ref('o.pid'), others, form)})`;
      };
      const total = function* (): Routine<number> {
        if (subjects === undefined) return base.length === 0 ? yield* store.counter('objects') : yield* countRows('mk_objects', base);
        if (!publicToo) return yield* countRows('mk_objects', [...base, readableBy(sql.ref('o.pid'), others, 'in')]);
        const restricted = others.length === 0 ? 0 : yield* countRows('mk_objects', [...base, sql`o.is_public = 0`, readableBy(sql.ref('o.pid'), others, 'in')]);
        const indexed = ranked === undefined ? undefined : yield* positionedPage(store.dialect.name, OBJECT_POSITIONS, ranked.slice, { start: 0, count: 0, columns });
        return restricted + (indexed?.total ?? (yield* countRows('mk_objects', [...base, sql`o.is_public = 1`])));
      };
      return yield* orderedPage<Row>({
        dialect: store.dialect.name,
        table: 'mk_objects',
        order: ['date_modified', 'pid'],
        where: (form) => (subjects === undefined ? base : [...base, readable(form)]),
        total,
        columns,
        start: query.start,
        count: query.count,
      });
    });
  }

  /** `public` ∪ the restricted objects `others` may read, when those are few (mergedPublicPage). */
  *#publicAndOwn<Row>(slice: PositionSlice, others: string[], start: number, count: number, columns: string, covered: boolean): Routine<{ total: number; rows: Row[] } | undefined> {
    const d = this.store.dialect;
    const conditions = [sql`o.is_public = 0`, readableBy(sql.ref('o.pid'), others, 'in')];
    if (slice.from !== undefined) conditions.push(sql`o.date_modified >= ${slice.from}`);
    if (slice.to !== undefined) conditions.push(sql`o.date_modified < ${slice.to}`);
    const own = sql`SELECT o.date_modified AS d, o.pid AS k FROM mk_objects o
      WHERE ${sql.join(conditions, sql` AND `)} ORDER BY o.date_modified, o.pid LIMIT ${MERGE_LIMIT + 1}`.compile(this.store.db);
    const byKeys = (pids: string[]) => sql`SELECT ${sql.raw(columns)}, r.pid AS k FROM mk_objects r WHERE ${inList(sql.ref('r.pid'), pids)}`.compile(this.store.db);
    return yield* mergedPublicPage<Row>(d.name, OBJECT_POSITIONS, slice, { start, count, columns, covered }, asStep(own), (pids) => asStep(byKeys(pids)));
  }

  /**
   * One write transaction: takes the catalogue clock first (clock.ts), stamps
   * dateSysMetadataModified of every inserted and replaced record from it, applies the rows,
   * appends `change.events` to the event log, settles `change.intents` and records the change
   * feed; returns the stored dates and the feed position.
   */
  async apply(change: CatalogueChange): Promise<AppliedChange> {
    return this.store.writing('apply catalogue change', (group) => this.#apply(change, group));
  }

  *#apply(change: CatalogueChange, group: WriteGroup): Routine<AppliedChange> {
    const store = this.store;
    // The clock is locked once per transaction: the first write of a group takes it.
    let tick = group.tick;
    if (tick) tick.nextWrite();
    else tick = group.tick = yield* lockClockSteps(store, this.clock === 'proposed');
    const w: WriteBatch = { ranks: [], access: new Map(), objects: 0 };
    const dates = new Map<string, Date>();
    const feed: Array<Omit<FeedEntry, 'seq'>> = [];
    const inserts = change.insert ?? [];
    // A change of new objects without a seriesId in a write-behind group: their rows are
    // written with the group's last statement. Anything else may read or change rows of the
    // group's earlier new objects, which are written first.
    const behind = group.writeBehind && inserts.length > 0 && inserts.length <= INSERT_CHUNK && !change.replace?.length && !change.remove?.length && inserts.every((r) => r.sysmeta?.seriesId == null);
    if (!behind) yield* group.flushBehind();
    if (behind) {
      for (const record of inserts) {
        dates.set(record.sysmeta.identifier, this.#insertBehind(record, w, tick, group));
        feed.push({ pid: record.sysmeta.identifier, kind: 'insert' });
      }
      // One statement holds them all at the end: keep it well below PostgreSQL's 65,535 parameters.
      if (group.behindRows >= BEHIND_ROWS) yield* group.flushBehind();
    } else {
      // Many new records without a seriesId (a wrap scan's batch): their identifier and object
      // rows in multi-row statements. A seriesId is claimed and checked record by record.
      const plain = inserts.length > 1 ? inserts.filter((r) => r.sysmeta?.seriesId == null) : [];
      if (plain.length > 1) {
        const stamped = yield* this.#insertMany(plain, w, tick);
        for (let i = 0; i < plain.length; i++) dates.set(plain[i]!.sysmeta.identifier, stamped[i]!);
      }
      for (const record of inserts) {
        if (plain.length < 2 || record.sysmeta?.seriesId != null) dates.set(record.sysmeta?.identifier, yield* this.#insert(record, w, tick));
        feed.push({ pid: record.sysmeta.identifier, kind: 'insert' });
      }
    }
    for (const replacement of change.replace ?? []) {
      dates.set(replacement.pid, yield* this.#replace(replacement, w, tick));
      feed.push({ pid: replacement.pid, kind: 'replace' });
    }
    // removes delete access rows: the rows of inserts and replaces go in first
    yield* writeAccess(w.access);
    for (const { pid } of change.remove ?? []) {
      yield* this.#remove(pid, w);
      dates.delete(pid);
      feed.push({ pid, kind: 'remove' });
    }
    const events = change.events ?? [];
    if (events.length > 0) yield* appendEvents(store, events, group);
    // settled intents and feed entries are written once for the group (WriteGroup.defer)
    if (change.intents !== undefined && change.intents.length > 0) group.defer('intents', change.intents.map((id) => [id]), (rows) => settleIntents(rows.map(([id]) => id as string)), { resultFree: true });
    const { rows: feedEntries, last: seq } = feedRows(tick, feed);
    group.defer('feed', feedEntries, insertFeedRows, { resultFree: true });
    // Position index, counters and clock: written once for the whole group (WriteGroup.finish).
    group.add({ positions: [[OBJECT_POSITIONS, w.ranks]], objects: w.objects });
    return seq === undefined ? { dates } : { dates, seq };
  }

  /** True for an SqlEventLog on this catalogue's store: `apply` then writes the change's events itself. */
  logsEventsTo(eventLog: unknown): boolean {
    return eventLog instanceof SqlEventLog && eventLog.store === this.store;
  }

  changesSince(seq: number, limit: number): Promise<FeedPage> {
    return changesSince(this.store, seq, limit);
  }

  changeHead(): Promise<number> {
    return changeHead(this.store);
  }

  knownChangeHead(): number | undefined {
    return knownChangeHead(this.store);
  }

  pruneChanges(before: Date, keepLatest: number): Promise<number> {
    return pruneChanges(this.store, before, keepLatest);
  }

  intend(name: string, unused?: readonly string[]): Promise<string> {
    return intend(this.store, name, unused);
  }

  staleIntents(before: Date, limit: number): Promise<StaleIntent[]> {
    return staleIntents(this.store, before, limit);
  }

  dropIntents(ids: readonly string[]): Promise<void> {
    return dropIntents(this.store, ids);
  }

  async referencesKey(key: string): Promise<boolean> {
    return (await this.store.readOne('find a storage key', () => rowOf(q`SELECT 1 AS x FROM mk_objects WHERE storage_key = ${key} LIMIT 1`))) !== undefined;
  }

  *#insert(record: ObjectRecord, w: WriteBatch, tick: ClockTick): Routine<Date> {
    const pid = record.sysmeta?.identifier;
    if (typeof pid !== 'string' || pid === '') throw new AdapterError('invalid', 'sysmeta.identifier must be a non-empty string');
    if (typeof record.storageKey !== 'string') throw new AdapterError('invalid', `storageKey of ${pid} must be a string`);
    const stamped = new Date(tick.stamp(epochMs(record.sysmeta.dateSysMetadataModified, 'dateSysMetadataModified')));
    const c = columns({ ...record.sysmeta, dateSysMetadataModified: stamped });
    const access = readers(record.sysmeta);
    const replica = record.isReplica ? 1 : 0;
    const fused = this.store.dialect.name === 'postgres' && access.size > 0;
    try {
      if (fused) {
        // One round trip: the identifier, the row and its access rows in one statement (data-
        // modifying CTEs). A replace of this PID later in the change deletes these access rows
        // (it does unless `w.access` holds the PID), as it deletes those of an earlier change.
        yield* changesOf(q`WITH i AS (INSERT INTO mk_identifiers (id, kind, refs) VALUES (${pid}, 'pid', 1)),
          o AS (INSERT INTO mk_objects (pid, series_id, format_id, date_modified, date_uploaded, serial_version, is_replica,
            obsoletes, obsoleted_by, storage_key, sysmeta, is_public, size, checksum_algorithm, checksum_value)
          VALUES (${pid}, ${c.series_id}, ${c.format_id}, ${c.date_modified}, ${c.date_uploaded}, ${c.serial_version},
            ${replica}, ${c.obsoletes}, ${c.obsoleted_by}, ${record.storageKey}, ${c.sysmeta}, ${c.is_public},
            ${c.size}, ${c.checksum_algorithm}, ${c.checksum_value}))
          INSERT INTO mk_access (pid, subject) VALUES ${new Rows([...access].map((s) => [pid, s]))}`);
      } else {
        yield* changesOf(q`INSERT INTO mk_identifiers (id, kind, refs) VALUES (${pid}, 'pid', 1)`);
        w.access.set(pid, access);
      }
    } catch (e) {
      if (isUniqueViolation(e)) throw new AdapterError('already-exists', `identifier ${pid} is already in use`, { cause: e });
      throw e;
    }
    if (c.series_id !== null) yield* this.#claimSid(c.series_id);
    if (!fused) {
      yield* changesOf(q`INSERT INTO mk_objects (pid, series_id, format_id, date_modified, date_uploaded, serial_version, is_replica,
          obsoletes, obsoleted_by, storage_key, sysmeta, is_public, size, checksum_algorithm, checksum_value)
        VALUES (${pid}, ${c.series_id}, ${c.format_id}, ${c.date_modified}, ${c.date_uploaded}, ${c.serial_version},
          ${replica}, ${c.obsoletes}, ${c.obsoleted_by}, ${record.storageKey}, ${c.sysmeta}, ${c.is_public},
          ${c.size}, ${c.checksum_algorithm}, ${c.checksum_value})`);
    }
    w.objects++;
    w.ranks.push({ date: c.date_modified, key: pid, n: 1, pub: c.is_public });
    return stamped;
  }

  /**
   * Inserts records without a seriesId: identifier rows, then object rows, INSERT_CHUNK rows
   * per statement (access rows through `w.access`, as for one record). An identifier already
   * in use fails the whole change (which record is not known; apply them one by one to learn).
   */
  *#insertMany(records: readonly ObjectRecord[], w: WriteBatch, tick: ClockTick): Routine<Date[]> {
    const dates: Date[] = [];
    const identifiers: unknown[][] = [];
    const objects: unknown[][] = [];
    for (const record of records) {
      const { pid, stamped, row } = newObjectRow(record, w, tick);
      identifiers.push([pid, 'pid', 1]);
      objects.push(row);
      w.access.set(pid, readers(record.sysmeta));
      dates.push(stamped);
    }
    try {
      yield* insertIdentifierRows(identifiers);
    } catch (e) {
      if (isUniqueViolation(e)) throw new AdapterError('already-exists', `an identifier of these ${records.length} new objects is already in use`, { cause: e });
      throw e;
    }
    yield* insertObjectRows(objects);
    return dates;
  }

  /**
   * A new record without a seriesId, written behind (WriteGroup.flushBehind): its identifier,
   * object and access rows join the group's last statement. An identifier in use then fails
   * the group, whose writes run again one by one, this one through `#insert`.
   */
  #insertBehind(record: ObjectRecord, w: WriteBatch, tick: ClockTick, group: WriteGroup): Date {
    const { pid, stamped, row } = newObjectRow(record, w, tick);
    group.defer('identifier rows', [[pid, 'pid', 1]], insertIdentifierRows, { behind: true });
    group.defer('object rows', [row], insertObjectRows, { behind: true });
    group.defer('access rows', [...readers(record.sysmeta)].map((s) => [pid, s]), insertAccessRows, { behind: true });
    return stamped;
  }

  *#replace(replacement: NonNullable<CatalogueChange['replace']>[number], w: WriteBatch, tick: ClockTick): Routine<Date> {
    const { pid, expectedSerialVersion, sysmeta, isReplica } = replacement;
    if (sysmeta?.identifier !== pid) throw new AdapterError('invalid', `replacement sysmeta.identifier must equal ${pid}`);
    const proposed = epochMs(sysmeta.dateSysMetadataModified, 'dateSysMetadataModified');
    const stored = yield* this.#lock(pid);
    if (stored === undefined) throw new AdapterError('not-found', `no object ${pid}`);
    if (stored.serialVersion !== expectedSerialVersion) {
      throw new AdapterError('conflict', `serialVersion of ${pid} is ${stored.serialVersion}, expected ${expectedSerialVersion}`);
    }
    const stamped = new Date(tick.stamp(proposed, stored.dateModified));
    const c = columns({ ...sysmeta, dateSysMetadataModified: stamped });
    // undefined keeps the stored isReplica
    const replica = isReplica === undefined ? null : isReplica ? 1 : 0;
    const changed = yield* changesOf(q`UPDATE mk_objects SET series_id = ${c.series_id}, format_id = ${c.format_id},
        date_modified = ${c.date_modified}, date_uploaded = ${c.date_uploaded}, serial_version = ${c.serial_version},
        is_replica = COALESCE(${replica}, is_replica), obsoletes = ${c.obsoletes}, obsoleted_by = ${c.obsoleted_by}, sysmeta = ${c.sysmeta},
        is_public = ${c.is_public}, size = ${c.size}, checksum_algorithm = ${c.checksum_algorithm}, checksum_value = ${c.checksum_value}
      WHERE pid = ${pid} AND serial_version = ${expectedSerialVersion}`);
    if (changed === 0) throw new AdapterError('conflict', `serialVersion of ${pid} changed`);
    if (stored.seriesId !== c.series_id) {
      if (stored.seriesId !== null) yield* this.#releaseSid(stored.seriesId);
      if (c.series_id !== null) yield* this.#claimSid(c.series_id);
    }
    // the rows of an insert of this PID in the same change are not written yet
    if (!w.access.has(pid)) yield* changesOf(q`DELETE FROM mk_access WHERE pid = ${pid}`);
    w.access.set(pid, readers(sysmeta));
    w.ranks.push({ date: stored.dateModified, key: pid, n: -1, pub: -stored.isPublic }, { date: c.date_modified, key: pid, n: 1, pub: c.is_public });
    return stamped;
  }

  *#remove(pid: string, w: WriteBatch): Routine<void> {
    const stored = yield* this.#lock(pid);
    if (stored === undefined) throw new AdapterError('not-found', `no object ${pid}`);
    yield* changesOf(q`DELETE FROM mk_objects WHERE pid = ${pid}`);
    yield* changesOf(q`DELETE FROM mk_identifiers WHERE id = ${pid} AND kind = 'pid'`);
    if (stored.seriesId !== null) yield* this.#releaseSid(stored.seriesId);
    yield* changesOf(q`DELETE FROM mk_access WHERE pid = ${pid}`);
    w.objects--;
    w.ranks.push({ date: stored.dateModified, key: pid, n: -1, pub: -stored.isPublic });
  }

  /** What the stored row of `pid` says about its place (version, series, listing position), row-locked until commit. */
  *#lock(pid: string): Routine<{ serialVersion: number; seriesId: string | null; dateModified: number; isPublic: number } | undefined> {
    const row = yield* rowOf<{ serial_version: unknown; series_id: unknown; date_modified: unknown; is_public: unknown }>(q`SELECT
        serial_version, series_id, date_modified, is_public FROM mk_objects WHERE pid = ${pid} ${FOR_UPDATE}`);
    return row === undefined
      ? undefined
      : { serialVersion: num(row.serial_version), seriesId: textOrNull(row.series_id), dateModified: num(row.date_modified), isPublic: num(row.is_public) };
  }

  /**
   * Records one more object carrying SID `sid`. The upsert locks the identifier row; if that
   * row is a PID the change fails with 'already-exists' (and rolls back).
   */
  *#claimSid(sid: string): Routine<void> {
    try {
      yield* changesOf(q`INSERT INTO mk_identifiers (id, kind, refs) VALUES (${sid}, 'sid', 1) ${ONE_MORE_REF}`);
    } catch (e) {
      if (isUniqueViolation(e)) throw new AdapterError('already-exists', `seriesId ${sid} is already in use`, { cause: e });
      throw e;
    }
    const row = yield* rowOf<{ kind: unknown }>(q`SELECT kind FROM mk_identifiers WHERE id = ${sid}`);
    if (row !== undefined && text(row.kind) === 'pid') {
      throw new AdapterError('already-exists', `seriesId ${sid} is already in use as a PID`);
    }
  }

  *#releaseSid(sid: string): Routine<void> {
    yield* changesOf(q`DELETE FROM mk_identifiers WHERE id = ${sid} AND kind = 'sid' AND refs <= 1`);
    yield* changesOf(q`UPDATE mk_identifiers SET refs = refs - 1 WHERE id = ${sid} AND kind = 'sid'`);
  }
}

/** The upsert of a SID's identifier row: one more object carries it. */
const ONE_MORE_REF = new DialectText((d) => dialectSql(d).upsert(['id'], { refs: 'mk_identifiers.refs + 1' }));

/** Rows per multi-row INSERT of #insertMany (15 parameters each: under every database's limit). */
const INSERT_CHUNK = 50;
/** Rows a write-behind group holds before writing them (each of up to 15 parameters). */
const BEHIND_ROWS = 1000;

/** What the records of one change add up to, written once per transaction. */
interface WriteBatch {
  ranks: PositionDelta[];
  /** The access rows (readers) of each inserted or replaced PID, written by `writeAccess`. */
  access: Map<string, Set<string>>;
  /** Objects added minus objects removed. */
  objects: number;
}

/** The access rows of `access` in multi-row INSERTs (then clears it). */
function* writeAccess(access: Map<string, Set<string>>): Routine<void> {
  const rows = [...access].flatMap(([pid, subjects]) => [...subjects].map((s) => [pid, s]));
  access.clear();
  yield* insertAccessRows(rows);
}

/**
 * A new record of a multi-row insert, checked and stamped with the transaction's clock, and
 * counted in `w` (listing position, object count): its PID, stored date and object row in
 * insertObjectRows' column order.
 */
function newObjectRow(record: ObjectRecord, w: WriteBatch, tick: ClockTick): { pid: string; stamped: Date; row: unknown[] } {
  const pid = record.sysmeta?.identifier;
  if (typeof pid !== 'string' || pid === '') throw new AdapterError('invalid', 'sysmeta.identifier must be a non-empty string');
  if (typeof record.storageKey !== 'string') throw new AdapterError('invalid', `storageKey of ${pid} must be a string`);
  const stamped = new Date(tick.stamp(epochMs(record.sysmeta.dateSysMetadataModified, 'dateSysMetadataModified')));
  const c = columns({ ...record.sysmeta, dateSysMetadataModified: stamped });
  w.objects++;
  w.ranks.push({ date: c.date_modified, key: pid, n: 1, pub: c.is_public });
  const row = [pid, c.series_id, c.format_id, c.date_modified, c.date_uploaded, c.serial_version, record.isReplica ? 1 : 0, c.obsoletes, c.obsoleted_by,
    record.storageKey, c.sysmeta, c.is_public, c.size, c.checksum_algorithm, c.checksum_value];
  return { pid, stamped, row };
}

/** New identifier rows (id, kind, refs), INSERT_CHUNK per statement. */
function* insertIdentifierRows(rows: readonly unknown[][]): Routine<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) yield* changesOf(q`INSERT INTO mk_identifiers (id, kind, refs) VALUES ${new Rows(rows.slice(i, i + INSERT_CHUNK))}`);
}

/** New object rows in the column order below, INSERT_CHUNK per statement. */
function* insertObjectRows(rows: readonly unknown[][]): Routine<void> {
  for (let i = 0; i < rows.length; i += INSERT_CHUNK) {
    yield* changesOf(q`INSERT INTO mk_objects (pid, series_id, format_id, date_modified, date_uploaded, serial_version, is_replica,
        obsoletes, obsoleted_by, storage_key, sysmeta, is_public, size, checksum_algorithm, checksum_value)
      VALUES ${new Rows(rows.slice(i, i + INSERT_CHUNK))}`);
  }
}

/** Access rows (pid, subject), 300 per statement. */
function* insertAccessRows(rows: readonly unknown[][]): Routine<void> {
  for (let i = 0; i < rows.length; i += 300) yield* changesOf(q`INSERT INTO mk_access (pid, subject) VALUES ${new Rows(rows.slice(i, i + 300))}`);
}

function columns(sysmeta: StoredSystemMetadata) {
  if (typeof sysmeta.formatId !== 'string') throw new AdapterError('invalid', 'formatId must be a string');
  if (!Number.isSafeInteger(sysmeta.serialVersion)) throw new AdapterError('invalid', 'serialVersion must be an integer');
  return {
    series_id: sysmeta.seriesId ?? null,
    format_id: sysmeta.formatId,
    date_modified: epochMs(sysmeta.dateSysMetadataModified, 'dateSysMetadataModified'),
    date_uploaded: epochMs(sysmeta.dateUploaded, 'dateUploaded'),
    serial_version: sysmeta.serialVersion,
    obsoletes: sysmeta.obsoletes ?? null,
    obsoleted_by: sysmeta.obsoletedBy ?? null,
    sysmeta: serializeSysmeta(sysmeta),
    is_public: readers(sysmeta).has('public') ? 1 : 0,
    size: sysmeta.size,
    checksum_algorithm: sysmeta.checksum?.algorithm,
    checksum_value: sysmeta.checksum?.value,
  };
}

function toRecord(row: RecordRow): ObjectRecord {
  return { sysmeta: reviveSysmeta(text(row.sysmeta)), storageKey: text(row.storage_key), isReplica: num(row.is_replica) === 1 };
}

function objectConditions(query: ObjectQuery): RawBuilder<unknown>[] {
  const conditions: RawBuilder<unknown>[] = [];
  if (query.fromDate !== undefined) conditions.push(sql`o.date_modified >= ${epochMs(query.fromDate, 'fromDate')}`);
  if (query.toDate !== undefined) conditions.push(sql`o.date_modified < ${epochMs(query.toDate, 'toDate')}`);
  if (query.formatId !== undefined) conditions.push(sql`o.format_id = ${query.formatId}`);
  if (query.identifier !== undefined) conditions.push(sql`(o.pid = ${query.identifier} OR o.series_id = ${query.identifier})`);
  if (query.replicas === false) conditions.push(sql`o.is_replica = 0`);
  return conditions;
}
