import { AdapterError, createChecksumHash, normalizeChecksumAlgorithm } from '@memberkit/types';
import type { CatalogueAdapter, CatalogueCapabilities, CatalogueChange, ChecksumAlgorithmName, ObjectPage, ObjectQuery, ObjectRecord, SeriesMember, StorageAdapter, StoredSystemMetadata } from '@memberkit/types';
import { sql, type Kysely, type RawBuilder } from 'kysely';
import { inList, num, text, textOrNull } from './dialect.js';
import { SqlEventLog } from './event-log.js';
import { SqlJobQueue } from './jobs.js';
import { compileSource, FormatTranslation, validateMapping, type MappedRow, type SqlMapping } from './mapping.js';
import { SHALLOW_OFFSET } from './paging.js';
import { SqlStore, type SqlStoreOptions } from './sql-store.js';
import type { SqlCatalogueParts } from './sql-catalogue.js';
import type { AppliedChange } from '@memberkit/types';
import { recordChanges } from './change-feed.js';
import { lockClock, saveClock } from './clock.js';
import { checkSlice, epochMs, OVERLAY_FIELDS, type OverlayField } from '@memberkit/types';
import { readers } from './object-row.js';

export interface MappedCatalogueOptions extends SqlStoreOptions {
  /** The mapping from the legacy source to system metadata. */
  mapping: SqlMapping;
  /**
   * Where the bytes are (tree storage over the files root, S3 storage, ...). Required when the
   * mapping has no checksum or no size: they are then read from it once and cached.
   */
  storage?: StorageAdapter;
  /**
   * Where memberkit keeps what the archive lacks. Only 'same-database' is supported: the
   * `mk_*` tables are created (migrated) in the database of `connection`, beside the legacy
   * tables, which are never written.
   */
  overlay?: 'same-database';
}

/**
 * System metadata fields a `replace` may change in mapping mode (stored in the overlay): the
 * contract's list for capabilities.overlay. serialVersion and dateSysMetadataModified change
 * with every replace.
 */
export { OVERLAY_FIELDS };

type ArchiveField = Exclude<keyof StoredSystemMetadata, OverlayField | 'serialVersion' | 'dateSysMetadataModified'>;
/** Every field that is not an overlay field (a missing or extra one is a compile error). */
const ARCHIVE: Record<ArchiveField, true> = {
  identifier: true, formatId: true, size: true, checksum: true, seriesId: true, obsoletes: true, obsoletedBy: true, dateUploaded: true, submitter: true,
};

/** Fields that come from the archive only: a replace that changes one is 'unsupported'. */
export const ARCHIVE_FIELDS = Object.keys(ARCHIVE) as ArchiveField[];

interface OverlayColumns {
  ov_serial: unknown;
  ov_modified: unknown;
  ov_patch: unknown;
  ov_has_access: unknown;
  ov_algorithm: unknown;
  ov_checksum: unknown;
  ov_size: unknown;
  ov_source: unknown;
}

type Row = MappedRow & OverlayColumns & { mk_obsoletes: unknown; mk_obsoleted_by: unknown; mk_effective: unknown };

/**
 * A mapped (legacy) catalogue (read-only; overlay fields writable through capabilities.overlay)
 * with its overlay, event log and jobs in the same database.
 */
export type MappedCatalogue = SqlCatalogueParts<SqlMappedCatalogue>;

/**
 * Creates a mapped catalogue: the legacy table, view or query declared by `mapping`, read
 * with SELECTs only, with memberkit's overlay (`mk_overlay*`) and event log (`mk_events`)
 * migrated into the same database. No I/O until `open()`.
 */
export function createMappedCatalogue(options: MappedCatalogueOptions): MappedCatalogue {
  validateMapping(options.mapping);
  if (options.overlay !== undefined && options.overlay !== 'same-database') {
    throw new AdapterError('invalid', "overlay: only 'same-database' is supported");
  }
  const store = new SqlStore(options);
  const catalogue = new SqlMappedCatalogue(store, options.mapping, options.storage);
  const eventLog = new SqlEventLog(store, (column, subjects, form) => catalogue.readableIdentifiers(column, subjects, form));
  return {
    catalogue,
    eventLog,
    jobs: new SqlJobQueue(store),
    store,
    async open() {
      await store.open();
      try {
        await catalogue.checkIdentifiers();
        await options.storage?.open?.();
      } catch (e) {
        await store.close();
        throw e;
      }
    },
    async close() {
      await options.storage?.close?.();
      await store.close();
    },
  };
}

/**
 * CatalogueAdapter over a legacy catalogue declared by an `SqlMapping`.
 *
 * - Read-only toward the legacy source: `capabilities.write` is false and
 *   `capabilities.overlay` true; `apply` refuses insert and remove with 'unsupported'. It
 *   implements `replace` for the OVERLAY_FIELDS
 *   (access policy, replication policy, archived, replicas, rightsHolder, mediaType,
 *   fileName, origin/authoritative node), with compare-and-set on serialVersion ('conflict'),
 *   'not-found' for unknown PIDs, and 'unsupported' when an ARCHIVE_FIELDS value or
 *   isReplica would change. The core allows archive, updateSystemMetadata of overlay fields
 *   and the CN's refresh on it.
 * - serialVersion is 1 until the overlay bumps it. dateSysMetadataModified is the later of
 *   the mapped modified column and the last overlay change.
 * - Listing filters and sorts in SQL on the source (fromDate/toDate on the mapped modified
 *   value, formatId translated back to source values, identifier, readableBy).
 * - Without a mapped checksum (or size) the bytes are read through `storage` once; the result
 *   is cached in the overlay with the modified value it was computed for.
 * - Every mapped object is an original (isReplica false).
 */
export class SqlMappedCatalogue implements CatalogueAdapter {
  /** Read-only toward the archive; replaces of overlay fields are kept in the overlay. */
  readonly capabilities: CatalogueCapabilities = { write: false, overlay: true };
  readonly #format: FormatTranslation;
  readonly #algorithm: ChecksumAlgorithmName;

  constructor(
    readonly store: SqlStore,
    readonly mapping: SqlMapping,
    readonly storage?: StorageAdapter,
  ) {
    this.#format = new FormatTranslation(mapping.formatId);
    this.#algorithm = mapping.checksumAlgorithm ?? 'SHA-256';
    if ((mapping.checksum === undefined || mapping.size === undefined) && storage === undefined) {
      throw new AdapterError('invalid', 'mapping without checksum or size: a storage adapter is required to compute them');
    }
  }

  async open(): Promise<void> {
    await this.store.open();
    try {
      await this.checkIdentifiers();
    } catch (e) {
      await this.store.close();
      throw e;
    }
  }

  /** When the source was last found free of duplicated PIDs (epoch ms). */
  #checkedAt = 0;

  /**
   * Refuses a source that maps several rows to one PID: such an archive would be served with
   * one identifier listed several times, with several checksums, and an object obsoleting
   * itself. Throws `kind` naming the duplicated identifiers (up to 5) and what to fix.
   * Called on open, by `warmChecksums`, and by listings at most once a minute (a legacy
   * table changes behind the node's back; a request then fails as 'internal', logged).
   */
  async checkIdentifiers(kind: 'invalid' | 'internal' = 'invalid'): Promise<void> {
    const dups = await this.store.read('check mapped identifiers', async (db) => {
      const { rows } = await sql<{ pid: unknown; n: unknown }>`SELECT m.mk_pid AS pid, count(*) AS n FROM ${this.#source} m
        GROUP BY m.mk_pid HAVING count(*) > 1 ORDER BY count(*) DESC, m.mk_pid LIMIT 6`.execute(db);
      return rows;
    });
    if (dups.length === 0) {
      this.#checkedAt = Date.now();
      return;
    }
    this.#checkedAt = 0;
    throw new AdapterError(kind, duplicatesMessage(this.mapping, dups.map((r) => ({ pid: textOrNull(r.pid), rows: num(r.n) }))));
  }

  async #recheckIdentifiers(): Promise<void> {
    if (Date.now() - this.#checkedAt >= 60_000) await this.checkIdentifiers('internal');
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  get #source(): RawBuilder<unknown> {
    return compileSource(this.store.dialect.name, this.mapping);
  }

  /** The SELECT list of a full mapped row (`m`, overlay `ov`, chain links). */
  #columns(effective: RawBuilder<unknown>): RawBuilder<unknown> {
    const obs = this.mapping.obsolescence;
    const source = this.#source;
    let links = sql`NULL AS mk_obsoletes, NULL AS mk_obsoleted_by`;
    if (obs !== undefined && 'predecessor' in obs) {
      links = sql`m.mk_predecessor AS mk_obsoletes,
        (SELECT min(n.mk_pid) FROM ${source} n WHERE n.mk_predecessor = m.mk_pid) AS mk_obsoleted_by`;
    } else if (obs !== undefined) {
      links = sql`(SELECT p.mk_pid FROM ${source} p WHERE p.mk_series = m.mk_series AND p.mk_version < m.mk_version ORDER BY p.mk_version DESC LIMIT 1) AS mk_obsoletes,
        (SELECT n.mk_pid FROM ${source} n WHERE n.mk_series = m.mk_series AND n.mk_version > m.mk_version ORDER BY n.mk_version ASC LIMIT 1) AS mk_obsoleted_by`;
    }
    return sql`m.*, ${links}, ${effective} AS mk_effective, ov.serial_version AS ov_serial, ov.date_modified AS ov_modified,
      ov.patch AS ov_patch, ov.has_access AS ov_has_access, ov.checksum_algorithm AS ov_algorithm, ov.checksum_value AS ov_checksum,
      ov.checksum_size AS ov_size, ov.checksum_source AS ov_source`;
  }

  /** dateSysMetadataModified in SQL: the mapped value, or the later overlay change when any exists. */
  async #effective(db: Kysely<any>): Promise<RawBuilder<unknown>> {
    const { rows } = await sql`SELECT 1 AS x FROM mk_overlay WHERE date_modified IS NOT NULL LIMIT 1`.execute(db);
    return rows.length === 0 ? sql`m.mk_modified` : sql.raw(this.store.dialect.greatest('m.mk_modified', 'COALESCE(ov.date_modified, 0)'));
  }

  async get(pid: string): Promise<ObjectRecord | undefined> {
    const row = await this.store.read('get mapped object', async (db) => {
      const effective = await this.#effective(db);
      const { rows } = await sql<Row>`SELECT ${this.#columns(effective)} FROM ${this.#source} m
        LEFT JOIN mk_overlay ov ON ov.pid = m.mk_pid WHERE m.mk_pid = ${pid} LIMIT 2`.execute(db);
      if (rows.length > 1) throw new AdapterError('internal', duplicatesMessage(this.mapping, [{ pid }]));
      return rows[0];
    });
    return row === undefined ? undefined : this.#record(row);
  }

  async seriesMembers(sid: string): Promise<SeriesMember[]> {
    if (this.mapping.sid === undefined) return [];
    const rows = await this.store.read('list mapped series members', async (db) => {
      const { rows } = await sql<Row>`SELECT ${this.#columns(sql`m.mk_modified`)} FROM ${this.#source} m
        LEFT JOIN mk_overlay ov ON ov.pid = m.mk_pid WHERE m.mk_sid = ${sid}`.execute(db);
      return rows;
    });
    return rows
      .map((row) => {
        const member: SeriesMember = { pid: text(row.mk_pid), dateUploaded: new Date(num(row.mk_uploaded ?? row.mk_modified)) };
        const obsoletes = textOrNull(row.mk_obsoletes);
        const obsoletedBy = textOrNull(row.mk_obsoleted_by);
        if (obsoletes !== null) member.obsoletes = obsoletes;
        if (obsoletedBy !== null) member.obsoletedBy = obsoletedBy;
        return member;
      })
      .sort((a, b) => a.dateUploaded.getTime() - b.dateUploaded.getTime() || (a.pid < b.pid ? -1 : a.pid > b.pid ? 1 : 0));
  }

  async identifierUse(id: string): Promise<'pid' | 'sid' | undefined> {
    return this.store.read('mapped identifierUse', async (db) => {
      const pid = await sql`SELECT 1 AS x FROM ${this.#source} m WHERE m.mk_pid = ${id}`.execute(db);
      if (pid.rows.length > 0) return 'pid';
      if (this.mapping.sid === undefined) return undefined;
      const sid = await sql`SELECT 1 AS x FROM ${this.#source} m WHERE m.mk_sid = ${id}`.execute(db);
      return sid.rows.length > 0 ? 'sid' : undefined;
    });
  }

  /**
   * The readableBy condition on mapped rows `m` joined with overlay `ov`: the overlay's access
   * rows when the overlay holds a policy, else the mapped rightsHolder and public flag.
   */
  #readable(subjects: readonly string[], form: 'exists' | 'in'): RawBuilder<unknown> {
    const overlayReaders = form === 'exists'
      ? sql`EXISTS (SELECT 1 FROM mk_overlay_access a WHERE a.pid = m.mk_pid AND ${inList(sql.ref('a.subject'), subjects)})`
      : sql`m.mk_pid IN (SELECT a.pid FROM mk_overlay_access a WHERE ${inList(sql.ref('a.subject'), subjects)})`;
    const mapped = [inList(sql.ref('m.mk_rights_holder'), subjects)];
    if (subjects.includes('public')) mapped.push(sql`m.mk_public = 1`);
    return sql`((ov.has_access = 1 AND ${overlayReaders}) OR (COALESCE(ov.has_access, 0) = 0 AND (${sql.join(mapped, sql` OR `)})))`;
  }

  /** @internal For the event log: `column IN (PIDs readable by one of subjects)`. */
  readableIdentifiers(column: RawBuilder<unknown>, subjects: readonly string[], _form: 'exists' | 'in'): RawBuilder<unknown> {
    return sql`${column} IN (SELECT m.mk_pid FROM ${this.#source} m LEFT JOIN mk_overlay ov ON ov.pid = m.mk_pid WHERE ${this.#readable(subjects, 'in')})`;
  }

  async list(query: ObjectQuery): Promise<ObjectPage> {
    checkSlice(query.start, query.count);
    if (query.replicas === true || query.replicas === undefined || query.replicas === false) {
      // every mapped object is an original: the replicas filter never removes anything
    }
    if (query.readableBy !== undefined && query.readableBy.length === 0) return { total: 0, items: [] };
    await this.#recheckIdentifiers();
    const rows = await this.store.read('list mapped objects', async (db) => {
      const effective = await this.#effective(db);
      const conditions = (form: 'exists' | 'in'): RawBuilder<unknown>[] => {
        const c: RawBuilder<unknown>[] = [];
        if (query.fromDate !== undefined) c.push(sql`${effective} >= ${epochMs(query.fromDate, 'fromDate')}`);
        if (query.toDate !== undefined) c.push(sql`${effective} < ${epochMs(query.toDate, 'toDate')}`);
        if (query.formatId !== undefined) c.push(this.#format.condition(query.formatId));
        if (query.identifier !== undefined) {
          c.push(this.mapping.sid === undefined ? sql`m.mk_pid = ${query.identifier}` : sql`(m.mk_pid = ${query.identifier} OR m.mk_sid = ${query.identifier})`);
        }
        if (query.readableBy !== undefined) c.push(this.#readable(query.readableBy, form));
        return c;
      };
      const where = (c: RawBuilder<unknown>[]) => (c.length === 0 ? sql`` : sql`WHERE ${sql.join(c, sql` AND `)}`);
      const counted = await sql<{ n: unknown }>`SELECT count(*) AS n FROM ${this.#source} m LEFT JOIN mk_overlay ov ON ov.pid = m.mk_pid
        ${where(conditions('in'))}`.execute(db);
      const total = num(counted.rows[0]?.n ?? 0);
      if (query.count === 0 || query.start >= total) return { total, rows: [] as Row[] };
      const { rows } = await sql<Row>`SELECT ${this.#columns(effective)} FROM ${this.#source} m LEFT JOIN mk_overlay ov ON ov.pid = m.mk_pid
        ${where(conditions(query.start < SHALLOW_OFFSET ? 'exists' : 'in'))}
        ORDER BY ${effective}, m.mk_pid LIMIT ${query.count} OFFSET ${query.start}`.execute(db);
      return { total, rows };
    });
    const items: ObjectRecord[] = [];
    for (const row of rows.rows) items.push(await this.#record(row));
    return { total: rows.total, items };
  }

  /** Only `replace` of overlay fields; insert and remove are 'unsupported' (the archive is read-only). */
  async apply(change: CatalogueChange): Promise<AppliedChange> {
    if ((change.insert?.length ?? 0) > 0 || (change.remove?.length ?? 0) > 0) {
      throw new AdapterError('unsupported', 'a mapped legacy catalogue is read-only: objects cannot be added or removed');
    }
    const planned: Array<{ pid: string; expected: number; sysmeta: StoredSystemMetadata; previous: number }> = [];
    for (const { pid, expectedSerialVersion, sysmeta, isReplica } of change.replace ?? []) {
      if (sysmeta?.identifier !== pid) throw new AdapterError('invalid', `replacement sysmeta.identifier must equal ${pid}`);
      const current = await this.get(pid);
      if (current === undefined) throw new AdapterError('not-found', `no object ${pid}`);
      if (isReplica === true) throw new AdapterError('unsupported', 'objects of a mapped catalogue are never replicas');
      for (const field of ARCHIVE_FIELDS) {
        if (JSON.stringify(current.sysmeta[field] ?? null) !== JSON.stringify(sysmeta[field] ?? null)) {
          throw new AdapterError('unsupported', `${field} comes from the legacy catalogue and cannot be changed through the node`);
        }
      }
      epochMs(sysmeta.dateSysMetadataModified, 'dateSysMetadataModified');
      planned.push({ pid, expected: expectedSerialVersion, sysmeta, previous: current.sysmeta.dateSysMetadataModified.getTime() });
    }
    return this.store.write('apply overlay change', async (trx) => {
      const d = this.store.dialect;
      // The catalogue clock (clock.ts) stamps dateSysMetadataModified and numbers the change feed.
      const tick = await lockClock(trx, this.store);
      const dates = new Map<string, Date>();
      for (const { pid, expected, sysmeta, previous } of planned) {
        const patch: Record<string, unknown> = {};
        for (const field of OVERLAY_FIELDS) patch[field] = sysmeta[field] ?? null;
        const json = JSON.stringify(patch);
        const modified = tick.stamp(sysmeta.dateSysMetadataModified.getTime(), previous);
        dates.set(pid, new Date(modified));
        const updated = await sql`UPDATE mk_overlay SET serial_version = ${sysmeta.serialVersion}, date_modified = ${modified}, patch = ${json}, has_access = 1
          WHERE pid = ${pid} AND COALESCE(serial_version, 1) = ${expected}`.execute(trx);
        if (Number(updated.numAffectedRows ?? 0n) === 0) {
          const { rows } = await sql<{ v: unknown }>`SELECT COALESCE(serial_version, 1) AS v FROM mk_overlay WHERE pid = ${pid}`.execute(trx);
          if (rows.length > 0 || expected !== 1) throw new AdapterError('conflict', `serialVersion of ${pid} is not ${expected}`);
          // First overlay change of this object: the insert is the compare-and-set (a concurrent
          // first change loses on the primary key and reports a conflict).
          try {
            await sql`INSERT INTO mk_overlay (pid, serial_version, date_modified, patch, has_access) VALUES (${pid}, ${sysmeta.serialVersion}, ${modified}, ${json}, 1)`.execute(trx);
          } catch (e) {
            if (AdapterError.is(e)) throw e;
            throw new AdapterError('conflict', `serialVersion of ${pid} changed`, { cause: e });
          }
        }
        await sql`DELETE FROM mk_overlay_access WHERE pid = ${pid}`.execute(trx);
        const subjects = [...readers(sysmeta)];
        if (subjects.length > 0) await sql`INSERT INTO mk_overlay_access (pid, subject) VALUES ${sql.join(subjects.map((s) => sql`(${pid}, ${s})`))}`.execute(trx);
        void d;
      }
      const seq = await recordChanges(trx, tick, planned.map(({ pid }) => ({ pid, kind: 'replace' as const })));
      await saveClock(trx, tick);
      return seq === undefined ? { dates } : { dates, seq };
    });
  }

  /**
   * Computes and caches checksum and size of every mapped object that lacks them, `limit` at a
   * time (default all). Returns the number computed. Run it after loading an archive so that
   * the first listings do not read the bytes.
   */
  async warmChecksums(options: { limit?: number } = {}): Promise<number> {
    await this.checkIdentifiers();
    let done = 0;
    for (let start = 0; ; start += 1000) {
      const page = await this.store.read('scan mapped objects', async (db) => {
        const { rows } = await sql<Row>`SELECT ${this.#columns(sql`m.mk_modified`)} FROM ${this.#source} m LEFT JOIN mk_overlay ov ON ov.pid = m.mk_pid
          ORDER BY m.mk_pid LIMIT 1000 OFFSET ${start}`.execute(db);
        return rows;
      });
      for (const row of page) {
        if (this.mapping.checksum !== undefined && this.mapping.size !== undefined) return done;
        if (num(row.ov_source ?? -1) === num(row.mk_modified) && row.ov_checksum !== null) continue;
        await this.#record(row);
        if (++done >= (options.limit ?? Infinity)) return done;
      }
      if (page.length < 1000) return done;
    }
  }

  #storageKey(row: Row): string {
    const raw = textOrNull(row.mk_location);
    if (raw === null) throw new AdapterError('internal', `object ${text(row.mk_pid)} has no location`);
    return `${this.mapping.location.prefix ?? ''}${raw}`;
  }

  /** Checksum and size from the mapping, the overlay cache, or the bytes (then cached). */
  async #digest(row: Row, key: string): Promise<{ algorithm: ChecksumAlgorithmName; value: string; size: number }> {
    const mappedSize = row.mk_size === null || row.mk_size === undefined ? undefined : num(row.mk_size);
    if (this.mapping.checksum !== undefined && row.mk_checksum !== null) {
      const algorithm = normalizeChecksumAlgorithm(text(row.mk_algorithm));
      if (algorithm === undefined) throw new AdapterError('internal', `unknown checksum algorithm ${text(row.mk_algorithm)} for ${text(row.mk_pid)}`);
      let size = mappedSize;
      if (size === undefined) {
        const stat = await this.storage!.stat(key);
        if (stat === undefined) throw new AdapterError('unavailable', `the bytes of ${text(row.mk_pid)} are missing from storage`);
        size = stat.size;
      }
      return { algorithm, value: text(row.mk_checksum).toLowerCase(), size };
    }
    const modified = num(row.mk_modified);
    if (row.ov_checksum !== null && row.ov_checksum !== undefined && num(row.ov_source) === modified) {
      return { algorithm: text(row.ov_algorithm) as ChecksumAlgorithmName, value: text(row.ov_checksum), size: mappedSize ?? num(row.ov_size) };
    }
    const pid = text(row.mk_pid);
    const read = await this.storage!.read(key);
    if (read === undefined) throw new AdapterError('unavailable', `the bytes of ${pid} are missing from storage (${key})`);
    const hash = createChecksumHash(this.#algorithm);
    let size = 0;
    for await (const chunk of read.stream as AsyncIterable<Buffer>) {
      hash.update(chunk);
      size += chunk.length;
    }
    const value = hash.digest('hex');
    const d = this.store.dialect;
    await this.store.write('cache computed checksum', (trx) =>
      sql`INSERT INTO mk_overlay (pid, has_access, checksum_algorithm, checksum_value, checksum_size, checksum_source)
        VALUES (${pid}, 0, ${this.#algorithm}, ${value}, ${size}, ${modified})
        ${sql.raw(d.upsert(['pid'], Object.fromEntries(['checksum_algorithm', 'checksum_value', 'checksum_size', 'checksum_source'].map((c) => [c, d.excluded(c)]))))}`.execute(trx),
    );
    return { algorithm: this.#algorithm, value, size: mappedSize ?? size };
  }

  async #record(row: Row): Promise<ObjectRecord> {
    const pid = text(row.mk_pid);
    const storageKey = this.#storageKey(row);
    const digest = await this.#digest(row, storageKey);
    const modified = num(row.mk_effective ?? row.mk_modified);
    const rightsHolder = textOrNull(row.mk_rights_holder);
    if (rightsHolder === null) throw new AdapterError('internal', `object ${pid} has no rightsHolder`);
    const sysmeta: StoredSystemMetadata = {
      serialVersion: row.ov_serial === null || row.ov_serial === undefined ? 1 : num(row.ov_serial),
      identifier: pid,
      formatId: this.#format.formatOf(row.mk_format),
      size: digest.size,
      checksum: { algorithm: digest.algorithm, value: digest.value },
      submitter: textOrNull(row.mk_submitter) ?? rightsHolder,
      rightsHolder,
      archived: false,
      dateUploaded: new Date(num(row.mk_uploaded ?? row.mk_modified)),
      dateSysMetadataModified: new Date(Math.max(modified, num(row.ov_modified ?? 0))),
      replica: [],
    };
    if (num(row.mk_public) === 1) sysmeta.accessPolicy = { allow: [{ subject: ['public'], permission: ['read'] }] };
    const sid = textOrNull(row.mk_sid);
    if (sid !== null) sysmeta.seriesId = sid;
    const obsoletes = textOrNull(row.mk_obsoletes);
    if (obsoletes !== null) sysmeta.obsoletes = obsoletes;
    const obsoletedBy = textOrNull(row.mk_obsoleted_by);
    if (obsoletedBy !== null) sysmeta.obsoletedBy = obsoletedBy;
    const fileName = textOrNull(row.mk_file_name);
    if (fileName !== null) sysmeta.fileName = fileName;
    if (this.mapping.nodeIdentifier !== undefined) {
      sysmeta.originMemberNode = this.mapping.nodeIdentifier;
      sysmeta.authoritativeMemberNode = this.mapping.nodeIdentifier;
    }
    const patch = textOrNull(row.ov_patch);
    if (patch !== null) {
      const fields = JSON.parse(patch) as Record<string, unknown>;
      const target = sysmeta as unknown as Record<string, unknown>;
      for (const field of OVERLAY_FIELDS) {
        if (!(field in fields)) continue;
        if (fields[field] === null) delete target[field];
        else target[field] = fields[field];
      }
      for (const replica of sysmeta.replica ?? []) {
        if (typeof replica.replicaVerified === 'string') replica.replicaVerified = new Date(replica.replicaVerified);
      }
      if (sysmeta.archived === undefined) sysmeta.archived = false;
    }
    return { sysmeta, storageKey, isReplica: false };
  }
}

/** One line naming the duplicated identifiers and the mapping setting (or view/table/query) to fix. */
function duplicatesMessage(mapping: SqlMapping, dups: Array<{ pid: string | null; rows?: number }>): string {
  const shown = dups.slice(0, 5).map((d) => `${d.pid === null ? 'NULL' : JSON.stringify(d.pid)} (${d.rows === undefined ? 'several' : d.rows} rows)`);
  const more = dups.length > 5 ? ' and more' : '';
  const src = mapping.source;
  const where = 'table' in src ? `table ${src.table}` : 'view' in src ? `view ${src.view}` : 'source query';
  const pid = typeof mapping.pid === 'string' ? `column ${mapping.pid}` : `expression ${mapping.pid.sql}`;
  return `the legacy catalogue maps several rows to one identifier: ${shown.join(', ')}${more}. `
    + `Each row needs its own PID: fix catalogue.mapping.pid (${pid} of the ${where}) or the ${where} so that it is unique.`;
}
