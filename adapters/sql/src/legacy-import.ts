import { sql, type Kysely } from 'kysely';
import { beginImmediate, num, type DialectSql } from './dialect.js';
import { recount } from './position-index.js';

/**
 * The data folders of the embedded default before the one SQL store: its SQLite file held the
 * catalogue, event log and jobs in tables without a prefix (objects, identifiers, access,
 * events, jobs; `PRAGMA user_version` 1 to 3). Their rows are the rows of the mk_* tables
 * under other names, with the same meaning (system metadata JSON, epoch ms dates, the same
 * readers in access), so they are copied as they are.
 */
const LEGACY_TABLES = ['objects', 'identifiers', 'access', 'events', 'jobs', 'ranks'] as const;

/** What a table is renamed to once its rows are copied: kept, never read again. */
export const legacyName = (table: string): string => `legacy_${table}`;

async function tables(conn: Kysely<any>): Promise<Set<string>> {
  const { rows } = await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'table'`.execute(conn);
  return new Set(rows.map((r) => r.name));
}

/**
 * Copies the rows of the old embedded tables into the mk_* tables, when the old `objects`
 * table exists and mk_objects is empty, in one BEGIN IMMEDIATE transaction (so that of
 * several processes opening the file at once exactly one copies), then rebuilds the row
 * counters and the position index and renames the old tables to `legacy_*` (their triggers
 * dropped), so it runs once. The scanner's old tables (wrap_files, s3_wrap_keys,
 * wrap_dataset_maps) are left alone. Returns how many objects and events were copied
 * (undefined when there was nothing to do). Run after `migrate`, on SQLite only.
 */
export async function importLegacyTables(db: Kysely<any>, d: DialectSql, options: { busyTimeoutMs?: number; bucketRows?: number } = {}): Promise<{ objects: number; events: number } | undefined> {
  if (d.name !== 'sqlite') return undefined;
  if (!(await tables(db)).has('objects')) return undefined;
  return db.connection().execute(async (conn) => {
    await beginImmediate(conn, options.busyTimeoutMs);
    try {
      const result = await copy(conn, d, options.bucketRows);
      await sql`COMMIT`.execute(conn);
      return result;
    } catch (e) {
      await sql`ROLLBACK`.execute(conn).catch(() => undefined);
      throw e;
    }
  });
}

async function copy(conn: Kysely<any>, d: DialectSql, bucketRows: number | undefined): Promise<{ objects: number; events: number } | undefined> {
  const present = await tables(conn);
  // Checked again under the write lock: another process may have copied meanwhile.
  if (!present.has('objects')) return undefined;
  const { rows: existing } = await sql<{ one: unknown }>`SELECT 1 AS one FROM mk_objects LIMIT 1`.execute(conn);
  if (existing.length > 0) return undefined;
  const run = (statement: string) => sql.raw(statement).execute(conn);
  await run(`INSERT INTO mk_objects (pid, series_id, format_id, date_modified, date_uploaded, serial_version, is_replica,
      obsoletes, obsoleted_by, storage_key, sysmeta, is_public, size, checksum_algorithm, checksum_value)
    SELECT pid, series_id, format_id, date_modified, date_uploaded, serial_version, is_replica,
      obsoletes, obsoleted_by, storage_key, sysmeta, is_public, size, checksum_algorithm, checksum_value FROM objects`);
  if (present.has('identifiers')) await run('INSERT INTO mk_identifiers (id, kind, refs) SELECT id, kind, refs FROM identifiers');
  if (present.has('access')) await run('INSERT INTO mk_access (pid, subject) SELECT pid, subject FROM access');
  if (present.has('events')) {
    // Entry ids kept: a harvester's log positions stay valid; AUTOINCREMENT continues after them.
    await run(`INSERT INTO mk_events (entry_id, identifier, ip_address, user_agent, subject, event, date_logged, node_identifier)
      SELECT entry_id, identifier, ip_address, user_agent, subject, event, date_logged, node_identifier FROM events`);
  }
  if (present.has('jobs')) {
    // Ids in the new form (creation time, then the old id: claim order is kept); the dedupe
    // key counts only while the job is queued or running, as in mk_jobs.
    await run(`INSERT INTO mk_jobs (id, kind, payload, state, attempts, run_after, locked_by, locked_until, last_error, dedupe_active, created, updated)
      SELECT printf('%012x-%08x-000000000000', created, id), kind, payload, state, attempts, run_after, locked_by, locked_until, last_error,
        CASE WHEN state IN ('queued', 'running') THEN dedupe_key END, created, created FROM jobs`);
  }
  await recount(conn, d, bucketRows);
  // A catalogue clock (when the schema has one) never gives a date before the copied ones.
  if ((await tables(conn)).has('mk_clock')) await run('UPDATE mk_clock SET last_ms = max(last_ms, COALESCE((SELECT max(date_modified) FROM mk_objects), 0))');
  const { rows: triggers } = await sql<{ name: string }>`SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name IN ('objects', 'identifiers', 'access', 'events', 'jobs')`.execute(conn);
  for (const { name } of triggers) await run(`DROP TRIGGER "${name.replace(/"/g, '""')}"`);
  for (const table of LEGACY_TABLES) if (present.has(table)) await run(`ALTER TABLE ${table} RENAME TO ${legacyName(table)}`);
  const count = async (table: string) => num((await sql<{ n: unknown }>`SELECT count(*) AS n FROM ${sql.table(table)}`.execute(conn)).rows[0]?.n ?? 0);
  return { objects: await count('mk_objects'), events: await count('mk_events') };
}
