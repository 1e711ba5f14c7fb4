import {
  checkSlice,
  epochMs,
  readers,
  reviveSysmeta,
  serializeSysmeta,
  AdapterError,
  applyRankDeltas,
  MERGE_LIMIT,
  SUMMARY_COLUMNS,
  summaryOf,
  mergedPublicPage,
  objectSlice,
  rankedPage,
  type RankDelta,
  type CatalogueChange,
  type MetadataAdapter,
  type MetadataCapabilities,
  type ObjectPage,
  type ObjectQuery,
  type ObjectRecord,
  type ObjectSummary,
  type SeriesMember,
  type StoredSystemMetadata,
} from '@memberkit/types';
import { isIdentifierCollision } from './errors.js';
import { READABLE_BY, readableByClause, type SqlFilter } from './sql-filter.js';
import { OBJECT_RANKS } from './migrations.js';
import { PageCache, pagedQuery, type PagedTable } from './page-cache.js';
import type { SqliteStore } from './sqlite-store.js';

interface RecordRow {
  sysmeta: string;
  storage_key: string;
  is_replica: number;
}

interface MemberRow {
  pid: string;
  obsoletes: string | null;
  obsoleted_by: string | null;
  date_uploaded: number;
}

const INSERT_OBJECT = `INSERT INTO objects (pid, series_id, format_id, size, checksum_algorithm, checksum_value,
  date_modified, date_uploaded, serial_version, archived, obsoletes, obsoleted_by, is_replica, storage_key,
  rights_holder, sysmeta, is_public)
  VALUES (@pid, @series_id, @format_id, @size, @checksum_algorithm, @checksum_value, @date_modified,
  @date_uploaded, @serial_version, @archived, @obsoletes, @obsoleted_by, @is_replica, @storage_key,
  @rights_holder, @sysmeta, @is_public)`;

const REPLACE_OBJECT = `UPDATE objects SET series_id = @series_id, format_id = @format_id, size = @size,
  checksum_algorithm = @checksum_algorithm, checksum_value = @checksum_value, date_modified = @date_modified,
  date_uploaded = @date_uploaded, serial_version = @serial_version, archived = @archived,
  obsoletes = @obsoletes, obsoleted_by = @obsoleted_by, is_replica = coalesce(@is_replica, is_replica),
  rights_holder = @rights_holder, sysmeta = @sysmeta, is_public = @is_public
  WHERE pid = @pid AND serial_version = @expected_serial_version`;

/** What a stored row says about its place in the listing (read before it moves or goes). */
const PLACE = 'SELECT serial_version AS v, date_modified AS d, is_public AS p FROM objects WHERE pid = ?';

const RECORD_COLUMNS = 'r.sysmeta, r.storage_key, r.is_replica';
const OBJECTS_PAGING: PagedTable = {
  table: 'objects', alias: 'o', orderColumn: 'date_modified', idColumn: 'pid', pidColumn: 'o.pid',
  select: RECORD_COLUMNS, what: 'list objects',
};

/**
 * The catalogue on SQLite (MetadataAdapter with the write side). Obtain it from
 * `openSqliteStore(...).catalogue`; its open/close open and close the shared store.
 *
 * Semantics worth knowing:
 * - `apply` runs in one BEGIN IMMEDIATE transaction and applies `insert`, then `replace`,
 *   then `remove`, each in array order; the first failure rolls everything back.
 * - PID/SID rules are enforced by the `identifiers` table's primary key and triggers (not by
 *   reads in memory), so they hold across processes: a PID is never equal to another PID or
 *   any SID; a seriesId is never equal to any PID (including the record's own PID).
 *   Identifiers of removed objects are free again (`identifierUse` reflects current objects).
 * - `replace` keeps the storage key, and keeps isReplica when it is undefined; the PID
 *   (`sysmeta.identifier`) MUST equal `pid` ('invalid' otherwise).
 * - readableBy matches the rightsHolder and every subject of an allow rule with at least one
 *   permission, compared literally (the caller expands its subjects: `public`,
 *   `authenticatedUser`, groups, equivalent identities).
 */
export class SqliteCatalogue implements MetadataAdapter {
  readonly capabilities: MetadataCapabilities = { write: true };

  readonly #pages = new PageCache();

  constructor(readonly store: SqliteStore) {}

  async open(): Promise<void> {
    await this.store.open();
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  async get(pid: string): Promise<ObjectRecord | undefined> {
    return this.store.read('get object', () => {
      const row = this.store.statement<RecordRow>('SELECT sysmeta, storage_key, is_replica FROM objects WHERE pid = ?').get(pid);
      return row === undefined ? undefined : toRecord(row);
    });
  }

  /** Every object whose seriesId is `sid`, ordered by dateUploaded then PID. */
  async seriesMembers(sid: string): Promise<SeriesMember[]> {
    const sql = 'SELECT pid, obsoletes, obsoleted_by, date_uploaded FROM objects WHERE series_id = ? ORDER BY date_uploaded, pid';
    const rows = this.store.read('list series members', () => this.store.statement<MemberRow>(sql).all(sid));
    return rows.map((row) => {
      const member: SeriesMember = { pid: row.pid, dateUploaded: new Date(row.date_uploaded) };
      if (row.obsoletes !== null) member.obsoletes = row.obsoletes;
      if (row.obsoleted_by !== null) member.obsoletedBy = row.obsoleted_by;
      return member;
    });
  }

  async identifierUse(id: string): Promise<'pid' | 'sid' | undefined> {
    const sql = 'SELECT kind FROM identifiers WHERE id = ?';
    return this.store.read('identifierUse', () => this.store.statement<{ kind: 'pid' | 'sid' }>(sql).get(id)?.kind);
  }

  /**
   * Listing order dateSysMetadataModified then PID; total and items from one read snapshot.
   * Every object, the public ones, and public plus a caller's few restricted ones (between
   * optional dates) come from the position index at any offset; other filters use
   * `pagedQuery` (deferred join over a covering index, remembered totals, keyset continuation).
   */
  async list(query: ObjectQuery): Promise<ObjectPage> {
    const { total, rows } = this.#page<RecordRow>(query, RECORD_COLUMNS);
    return { total, items: rows.map(toRecord) };
  }

  /** The page `list` returns, read from the summary columns (no system metadata JSON decoded). */
  async listSummaries(query: ObjectQuery): Promise<{ total: number; items: ObjectSummary[] }> {
    const { total, rows } = this.#page<Record<string, unknown> | unknown[]>(query, SUMMARY_COLUMNS, true);
    return { total, items: rows.map((row) => summaryOf(row)) };
  }

  /** `arrays`: the position index may return rows as arrays of values (SUMMARY_COLUMNS order). */
  #page<Row>(query: ObjectQuery, columns: string, arrays = false): { total: number; rows: Row[] } {
    checkSlice(query.start, query.count);
    return this.#ranked<Row>(query, columns, arrays) ?? pagedQuery<Row>(this.store, this.#pages, { ...OBJECTS_PAGING, select: columns }, objectFilter(query), query.start, query.count);
  }


  /**
   * The listings the position index answers at any offset: every object or the public ones
   * (anonymous callers), between optional dates, and public plus the few restricted objects
   * an authenticated caller may read. Undefined for other filters (pagedQuery walks).
   */
  #ranked<Row>(query: ObjectQuery, columns: string, arrays: boolean): { total: number; rows: Row[] } | undefined {
    const ranked = objectSlice(query);
    if (ranked === undefined) return undefined;
    const { slice, others } = ranked;
    const page = { start: query.start, count: query.count, columns };
    return this.store.transaction('deferred', 'list objects', () => {
      if (others.length === 0) return this.store.steps(rankedPage<Row>('sqlite', OBJECT_RANKS, slice, { ...page, arrays }));
      const dates = `${slice.from !== undefined ? ' AND o.date_modified >= ?' : ''}${slice.to !== undefined ? ' AND o.date_modified < ?' : ''}`;
      const own = {
        sql: `SELECT o.date_modified AS d, o.pid AS k FROM objects o WHERE o.is_public = 0 AND ${readableByClause('o.pid', 'in')}${dates}
          ORDER BY o.date_modified, o.pid LIMIT ${MERGE_LIMIT + 1}`,
        params: [JSON.stringify(others), ...(slice.from !== undefined ? [slice.from] : []), ...(slice.to !== undefined ? [slice.to] : [])],
      };
      const byKeys = (pids: string[]) => ({
        sql: `SELECT ${columns}, r.pid AS k FROM objects r WHERE r.pid IN (SELECT value FROM json_each(?))`,
        params: [JSON.stringify(pids)],
      });
      return this.store.steps(mergedPublicPage<Row>('sqlite', OBJECT_RANKS, slice, page, own, byKeys));
    });
  }

  async apply(change: CatalogueChange): Promise<void> {
    this.store.transaction('immediate', 'apply catalogue change', () => {
      const ranks: RankDelta[] = [];
      for (const record of change.insert ?? []) this.#insert(record, ranks);
      for (const replacement of change.replace ?? []) this.#replace(replacement, ranks);
      for (const { pid } of change.remove ?? []) this.#remove(pid, ranks);
      this.store.steps(applyRankDeltas('sqlite', OBJECT_RANKS, ranks, this.store.rankBucketRows));
    });
  }

  #insert(record: ObjectRecord, ranks: RankDelta[]): void {
    const pid = record.sysmeta?.identifier;
    if (typeof pid !== 'string' || pid === '') throw new AdapterError('invalid', 'sysmeta.identifier must be a non-empty string');
    if (typeof record.storageKey !== 'string') throw new AdapterError('invalid', `storageKey of ${pid} must be a string`);
    const params = { ...columns(record.sysmeta), is_replica: record.isReplica ? 1 : 0, storage_key: record.storageKey };
    try {
      this.store.statement(INSERT_OBJECT).run(params);
    } catch (e) {
      if (isIdentifierCollision(e)) {
        throw new AdapterError('already-exists', `identifier ${pid} or its seriesId is already in use`, { cause: e });
      }
      throw e;
    }
    this.#writeAccess(pid, record.sysmeta);
    ranks.push({ date: params.date_modified, key: pid, n: 1, pub: params.is_public });
  }

  #replace(replacement: NonNullable<CatalogueChange['replace']>[number], ranks: RankDelta[]): void {
    const { pid, expectedSerialVersion, sysmeta, isReplica } = replacement;
    if (sysmeta?.identifier !== pid) throw new AdapterError('invalid', `replacement sysmeta.identifier must equal ${pid}`);
    const params = {
      ...columns(sysmeta),
      is_replica: isReplica === undefined ? null : isReplica ? 1 : 0,
      expected_serial_version: expectedSerialVersion,
    };
    const stored = this.store.statement<{ v: number; d: number; p: number }>(PLACE).get(pid);
    if (stored === undefined) throw new AdapterError('not-found', `no object ${pid}`);
    if (stored.v !== expectedSerialVersion) throw new AdapterError('conflict', `serialVersion of ${pid} is ${stored.v}, expected ${expectedSerialVersion}`);
    let changes: number;
    try {
      changes = this.store.statement(REPLACE_OBJECT).run(params).changes;
    } catch (e) {
      if (isIdentifierCollision(e)) {
        throw new AdapterError('already-exists', `seriesId ${String(sysmeta.seriesId)} is already in use as a PID`, { cause: e });
      }
      throw e;
    }
    if (changes === 0) throw new AdapterError('conflict', `serialVersion of ${pid} changed`);
    this.store.statement('DELETE FROM access WHERE pid = ?').run(pid);
    this.#writeAccess(pid, sysmeta);
    ranks.push({ date: stored.d, key: pid, n: -1, pub: -stored.p }, { date: params.date_modified, key: pid, n: 1, pub: params.is_public });
  }

  #remove(pid: string, ranks: RankDelta[]): void {
    const stored = this.store.statement<{ v: number; d: number; p: number }>(PLACE).get(pid);
    if (stored === undefined) throw new AdapterError('not-found', `no object ${pid}`);
    // access rows go with ON DELETE CASCADE, identifiers with the delete trigger.
    this.store.statement('DELETE FROM objects WHERE pid = ?').run(pid);
    ranks.push({ date: stored.d, key: pid, n: -1, pub: -stored.p });
  }

  #writeAccess(pid: string, sysmeta: StoredSystemMetadata): void {
    const insert = this.store.statement('INSERT OR IGNORE INTO access (pid, subject) VALUES (?, ?)');
    for (const subject of readers(sysmeta)) insert.run(pid, subject);
  }
}

function columns(sysmeta: StoredSystemMetadata) {
  return {
    pid: sysmeta.identifier,
    series_id: sysmeta.seriesId ?? null,
    format_id: sysmeta.formatId,
    size: sysmeta.size,
    checksum_algorithm: sysmeta.checksum?.algorithm,
    checksum_value: sysmeta.checksum?.value,
    date_modified: epochMs(sysmeta.dateSysMetadataModified, 'dateSysMetadataModified'),
    date_uploaded: epochMs(sysmeta.dateUploaded, 'dateUploaded'),
    serial_version: sysmeta.serialVersion,
    archived: sysmeta.archived ? 1 : 0,
    obsoletes: sysmeta.obsoletes ?? null,
    obsoleted_by: sysmeta.obsoletedBy ?? null,
    rights_holder: sysmeta.rightsHolder,
    sysmeta: serializeSysmeta(sysmeta),
    is_public: readers(sysmeta).has('public') ? 1 : 0,
  };
}

function toRecord(row: RecordRow): ObjectRecord {
  return { sysmeta: reviveSysmeta(row.sysmeta), storageKey: row.storage_key, isReplica: row.is_replica === 1 };
}

function objectFilter(query: ObjectQuery): SqlFilter {
  const conditions: string[] = [];
  const params: unknown[] = [];
  if (query.fromDate !== undefined) {
    conditions.push('o.date_modified >= ?');
    params.push(epochMs(query.fromDate, 'fromDate'));
  }
  if (query.toDate !== undefined) {
    conditions.push('o.date_modified < ?');
    params.push(epochMs(query.toDate, 'toDate'));
  }
  if (query.formatId !== undefined) {
    conditions.push('o.format_id = ?');
    params.push(query.formatId);
  }
  if (query.identifier !== undefined) {
    // Written as IN over two index lookups so the planner never walks the listing index.
    conditions.push('o.pid IN (SELECT pid FROM objects WHERE pid = ? UNION ALL SELECT pid FROM objects WHERE series_id = ?)');
    params.push(query.identifier, query.identifier);
  }
  if (query.replicas === false) conditions.push('o.is_replica = 0');
  if (query.readableBy !== undefined) {
    conditions.push(READABLE_BY);
    params.push(JSON.stringify(query.readableBy));
  }
  return { conditions, params };
}
