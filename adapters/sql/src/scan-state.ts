import { createHash } from 'node:crypto';
import type { DatasetMapRow, ScanStateRow, ScanStateStore } from '@memberkit/types';
import { sql, type Kysely } from 'kysely';
import { dialectSql, inList, num, text, textOrNull } from './dialect.js';
import { changesOf, DialectText, q, rowsOf, Rows } from './executor.js';
import type { SqlStore } from './sql-store.js';

/** The id of a wrapped root in the tables (its name can be longer than an index allows). */
function rootId(root: string): string {
  return createHash('sha256').update(root, 'utf8').digest('hex');
}

interface EntryRow {
  entry_key: unknown; pid: unknown; size: unknown; version: unknown; algorithm: unknown; checksum: unknown; format: unknown; scan: unknown;
}

const ENTRY_COLUMNS = sql.raw('entry_key, pid, size, version, algorithm, checksum, format, scan');

function toRow(r: EntryRow): ScanStateRow {
  return {
    key: text(r.entry_key), pid: text(r.pid), size: num(r.size), version: text(r.version), algorithm: text(r.algorithm),
    checksum: text(r.checksum), format: textOrNull(r.format), scan: num(r.scan),
  };
}

/** A scanned entry recorded again: its values replaced, its scan number never moved back. */
const UPSERT_ENTRY = new DialectText((name) => {
  const d = dialectSql(name);
  const set: Record<string, string> = Object.fromEntries(['pid', 'size', 'version', 'algorithm', 'checksum', 'format'].map((c) => [c, d.excluded(c)]));
  set.scan = d.greatest('mk_scan_entries.scan', d.excluded('scan'));
  return d.upsert(['root_id', 'entry_key'], set);
});

/** Statements per write transaction (bounded: SQLite's and PostgreSQL's parameter limits). */
const CHUNK = 200;

function chunks<T>(items: readonly T[]): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += CHUNK) out.push(items.slice(i, i + CHUNK));
  return out;
}

/**
 * Scan state of wrapped roots on the SqlStore (PostgreSQL, MySQL/MariaDB, SQLite), shared by
 * every process using the catalogue: `mk_scan_entries`, the lease in `mk_scan_roots`, generated
 * dataset maps in `mk_dataset_maps` (migration 4).
 *
 * A SQLite data folder written before (tables `wrap_files`, `s3_wrap_keys`, `wrap_dataset_maps`
 * of the tree and bucket scanners) is adopted on the first use of a root: the rows move into
 * these tables so an existing wrapped node does not hash its archive again.
 */
export class SqlScanState implements ScanStateStore {
  private readonly adopted = new Set<string>();

  constructor(readonly store: SqlStore, private readonly now: () => number = Date.now) {}

  async open(): Promise<void> {
    await this.store.open();
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  async lastScan(root: string): Promise<number> {
    await this.adoptLegacy(root);
    return this.store.read('scan state', async (trx) => {
      const { rows } = await sql<{ s: unknown }>`SELECT max(scan) AS s FROM mk_scan_entries WHERE root_id = ${rootId(root)}`.execute(trx);
      return rows[0]?.s === null || rows[0]?.s === undefined ? 0 : num(rows[0].s);
    });
  }

  async hasEntries(root: string): Promise<boolean> {
    return this.store.read('scan state', async (trx) => {
      const { rows } = await sql`SELECT 1 AS one FROM mk_scan_entries WHERE root_id = ${rootId(root)} LIMIT 1`.execute(trx);
      return rows.length > 0;
    });
  }

  // getMany, put and touch run for every page of a scan: routines of `q` statements (compiled
  // once per shape, prepared once on SQLite), not kysely queries built per call.
  async getMany(root: string, keys: readonly string[]): Promise<Map<string, ScanStateRow>> {
    const found = new Map<string, ScanStateRow>();
    if (keys.length === 0) return found;
    const id = rootId(root);
    await this.store.reading('scan state', function* () {
      for (const part of chunks(keys)) {
        const rows = yield* rowsOf<EntryRow>(q`SELECT entry_key, pid, size, version, algorithm, checksum, format, scan
          FROM mk_scan_entries WHERE root_id = ${id} AND entry_key IN ${new Rows([part])}`);
        for (const r of rows) {
          const row = toRow(r);
          found.set(row.key, row);
        }
      }
    });
    return found;
  }

  async put(root: string, rows: readonly ScanStateRow[]): Promise<void> {
    if (rows.length === 0) return;
    const id = rootId(root);
    await this.store.writing('record scan state', function* () {
      for (const part of chunks(rows)) {
        const values = part.map((r) => [id, r.key, r.pid, r.size, r.version, r.algorithm, r.checksum, r.format, r.scan]);
        yield* changesOf(q`INSERT INTO mk_scan_entries (root_id, entry_key, pid, size, version, algorithm, checksum, format, scan)
          VALUES ${new Rows(values)} ${UPSERT_ENTRY}`);
      }
    });
  }

  async touch(root: string, keys: readonly string[], scan: number): Promise<void> {
    if (keys.length === 0) return;
    const id = rootId(root);
    await this.store.writing('record scan state', function* () {
      for (const part of chunks(keys)) {
        yield* changesOf(q`UPDATE mk_scan_entries SET scan = ${scan} WHERE root_id = ${id} AND scan < ${scan} AND entry_key IN ${new Rows([part])}`);
      }
    });
  }

  async unseen(root: string, scan: number, after: string, limit: number): Promise<ScanStateRow[]> {
    return this.store.read('scan state', async (trx) => {
      const { rows } = await sql<EntryRow>`SELECT ${ENTRY_COLUMNS} FROM mk_scan_entries
        WHERE root_id = ${rootId(root)} AND scan < ${scan} AND entry_key > ${after} ORDER BY entry_key LIMIT ${limit}`.execute(trx);
      return rows.map(toRow);
    });
  }

  async forget(root: string, keys: readonly string[], scan: number): Promise<void> {
    if (keys.length === 0) return;
    const id = rootId(root);
    await this.store.write('record scan state', async (trx) => {
      for (const part of chunks(keys)) {
        await sql`DELETE FROM mk_scan_entries WHERE root_id = ${id} AND scan < ${scan} AND ${inList(sql`entry_key`, part)}`.execute(trx);
      }
    });
  }

  async page(root: string, after: string, limit: number): Promise<ScanStateRow[]> {
    return this.store.read('scan state', async (trx) => {
      const { rows } = await sql<EntryRow>`SELECT ${ENTRY_COLUMNS} FROM mk_scan_entries
        WHERE root_id = ${rootId(root)} AND entry_key > ${after} ORDER BY entry_key LIMIT ${limit}`.execute(trx);
      return rows.map(toRow);
    });
  }

  async tryAcquire(root: string, holder: string, ttlMs: number): Promise<boolean> {
    const id = rootId(root);
    const d = this.store.dialect;
    const keep = sql.raw(d.upsert(['root_id'], { root_id: d.name === 'mysql' ? 'root_id' : d.excluded('root_id') }));
    return this.store.write('take the scan lease', async (trx) => {
      const now = this.now();
      // The root's row first, free, when it is new: processes taking a new root at once then
      // queue on that row's lock instead of racing to insert it (the loser would fail).
      await sql`INSERT INTO mk_scan_roots (root_id, root, holder, lease_until) VALUES (${id}, ${root}, NULL, 0) ${keep}`.execute(trx);
      const { rows } = await sql<{ holder: unknown; lease_until: unknown }>`SELECT holder, lease_until FROM mk_scan_roots WHERE root_id = ${id} ${this.forUpdate()}`.execute(trx);
      const current = rows[0]!;
      const free = current.holder === null || textOrNull(current.holder) === holder || num(current.lease_until) <= now;
      if (!free) return false;
      await sql`UPDATE mk_scan_roots SET holder = ${holder}, lease_until = ${now + ttlMs} WHERE root_id = ${id}`.execute(trx);
      return true;
    });
  }

  async renew(root: string, holder: string, ttlMs: number): Promise<boolean> {
    return this.store.write('renew the scan lease', async (trx) => {
      const r = await sql`UPDATE mk_scan_roots SET lease_until = ${this.now() + ttlMs} WHERE root_id = ${rootId(root)} AND holder = ${holder}`.execute(trx);
      return Number(r.numAffectedRows ?? 0n) > 0;
    });
  }

  async release(root: string, holder: string): Promise<void> {
    await this.store.write('release the scan lease', async (trx) => {
      await sql`UPDATE mk_scan_roots SET holder = NULL, lease_until = 0 WHERE root_id = ${rootId(root)} AND holder = ${holder}`.execute(trx);
    });
  }

  async putDatasetMap(root: string, row: DatasetMapRow): Promise<void> {
    const d = this.store.dialect;
    // Bytes never change for a key: a second insert of the same key changes nothing.
    const ignore = sql.raw(d.upsert(['map_key'], { map_key: d.name === 'mysql' ? 'map_key' : d.excluded('map_key') }));
    await this.store.write('store a dataset map', async (trx) => {
      await sql`INSERT INTO mk_dataset_maps (map_key, root_id, pid, folder, members, bytes, created)
        VALUES (${row.key}, ${rootId(root)}, ${row.pid}, ${row.folder}, ${row.members}, ${Buffer.from(row.bytes)}, ${row.created}) ${ignore}`.execute(trx);
    });
  }

  async datasetMap(key: string): Promise<DatasetMapRow | undefined> {
    return this.store.read('read a dataset map', async (trx) => {
      const { rows } = await sql<{ map_key: unknown; pid: unknown; folder: unknown; members: unknown; bytes: unknown; created: unknown }>`
        SELECT map_key, pid, folder, members, bytes, created FROM mk_dataset_maps WHERE map_key = ${key}`.execute(trx);
      const r = rows[0];
      if (r === undefined) return undefined;
      return { key: text(r.map_key), pid: text(r.pid), folder: text(r.folder), members: text(r.members), bytes: new Uint8Array(r.bytes as Buffer), created: num(r.created) };
    });
  }

  async datasetFolders(root: string): Promise<string[]> {
    return this.store.read('dataset maps', async (trx) => {
      const { rows } = await sql<{ folder: unknown }>`SELECT DISTINCT folder FROM mk_dataset_maps WHERE root_id = ${rootId(root)}`.execute(trx);
      return rows.map((r) => text(r.folder));
    });
  }

  async deleteDatasetMap(key: string): Promise<void> {
    await this.store.write('remove a dataset map', async (trx) => {
      await sql`DELETE FROM mk_dataset_maps WHERE map_key = ${key}`.execute(trx);
    });
  }

  private forUpdate() {
    return sql.raw(this.store.dialect.name === 'sqlite' ? '' : 'FOR UPDATE');
  }

  /**
   * Moves the rows a previous memberkit kept for `root` in its scanner tables (SQLite only)
   * into the shared tables, once: `wrap_files` (one tree per database, so it belongs to the
   * first tree root asking) and `s3_wrap_keys` (by source `s3://bucket/prefix`); the versions
   * are the mtimes and ETags those scanners compared, so unchanged files are not hashed again.
   */
  private async adoptLegacy(root: string): Promise<void> {
    if (this.adopted.has(root) || this.store.dialect.name !== 'sqlite') return;
    const id = rootId(root);
    await this.store.write('adopt legacy scan state', async (trx) => {
      const tables = new Set((await sql<{ name: unknown }>`SELECT name FROM sqlite_master WHERE type = 'table' AND name IN ('wrap_files', 's3_wrap_keys', 'wrap_dataset_maps')`.execute(trx)).rows.map((r) => text(r.name)));
      if (tables.size === 0) return;
      const isBucket = root.startsWith('s3://');
      const columns = async (table: string) => new Set((await sql<{ name: unknown }>`SELECT name FROM pragma_table_info(${table})`.execute(trx)).rows.map((r) => text(r.name)));
      let moved = 0;
      if (!isBucket && tables.has('wrap_files')) {
        const format = (await columns('wrap_files')).has('format') ? sql.raw('format') : sql.raw('NULL');
        const { rows } = await sql<{ path: string; pid: string; size: number; mtime_ms: number; algorithm: string; checksum: string; format: string | null; scan: number }>`
          SELECT path, pid, size, mtime_ms, algorithm, checksum, ${format} AS format, scan FROM wrap_files`.execute(trx);
        // String(mtimeMs) in JavaScript: the version the tree storage lists.
        await this.insertLegacy(trx, id, rows.map((r) => ({ key: r.path, pid: r.pid, size: r.size, version: String(r.mtime_ms), algorithm: r.algorithm, checksum: r.checksum, format: r.format, scan: r.scan })));
        moved += rows.length;
        await sql`ALTER TABLE wrap_files RENAME TO legacy_wrap_files`.execute(trx);
      }
      if (isBucket && tables.has('s3_wrap_keys')) {
        const format = (await columns('s3_wrap_keys')).has('format') ? sql.raw('format') : sql.raw('NULL');
        const { rows } = await sql<{ key: string; pid: string; size: number; etag: string; algorithm: string; checksum: string; format: string | null; scan: number }>`
          SELECT key, pid, size, etag, algorithm, checksum, ${format} AS format, scan FROM s3_wrap_keys WHERE source = ${root}`.execute(trx);
        await this.insertLegacy(trx, id, rows.map((r) => ({ key: r.key, pid: r.pid, size: r.size, version: r.etag, algorithm: r.algorithm, checksum: r.checksum, format: r.format, scan: r.scan })));
        moved += rows.length;
        await sql`DELETE FROM s3_wrap_keys WHERE source = ${root}`.execute(trx);
      }
      if (moved > 0 && tables.has('wrap_dataset_maps')) {
        await sql`INSERT INTO mk_dataset_maps (map_key, root_id, pid, folder, members, bytes, created)
          SELECT key, ${id}, pid, folder, members, bytes, created FROM wrap_dataset_maps WHERE key NOT IN (SELECT map_key FROM mk_dataset_maps)`.execute(trx);
        await sql`ALTER TABLE wrap_dataset_maps RENAME TO legacy_wrap_dataset_maps`.execute(trx);
      }
    });
    this.adopted.add(root);
  }

  private async insertLegacy(trx: Kysely<any>, id: string, rows: ScanStateRow[]): Promise<void> {
    for (const part of chunks(rows)) {
      const values = part.map((r) => sql`(${id}, ${r.key}, ${r.pid}, ${r.size}, ${r.version}, ${r.algorithm}, ${r.checksum}, ${r.format}, ${r.scan})`);
      await sql`INSERT OR IGNORE INTO mk_scan_entries (root_id, entry_key, pid, size, version, algorithm, checksum, format, scan) VALUES ${sql.join(values)}`.execute(trx);
    }
  }
}
