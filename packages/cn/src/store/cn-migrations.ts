import { sql } from 'kysely';
import { AdapterError } from '@memberkit/types';
import { underMigrationLock, type DialectSql, type SqlStore } from '@memberkit/adapter-sql';

/**
 * A part of the CN's own schema (tables `mk_cn_*` in the catalogue's database), owned by one
 * module: 'core' (formats, reservations), 'identity' (accounts, groups, mappings), 'registry'
 * (nodes). Migration `i` (zero-based) of an area is recorded as version `i + 1` in
 * `mk_cn_migrations`. Append new entries; never edit a released one.
 */
export interface CnSchemaArea {
  name: string;
  migrations(d: DialectSql): string[][];
}

/** An SQL string literal for `d` (statements of a migration are plain text). */
export function sqlLiteral(d: DialectSql, value: string | null | undefined): string {
  if (value === null || value === undefined) return 'NULL';
  // MySQL reads backslashes in literals as escapes unless NO_BACKSLASH_ESCAPES is set.
  const escaped = (d.name === 'mysql' ? value.replaceAll('\\', '\\\\') : value).replaceAll("'", "''");
  return `'${escaped}'`;
}

/**
 * Brings every area to its newest version, exactly once even when several processes open
 * the database at the same moment: under `pg_advisory_xact_lock` (PostgreSQL, one
 * transaction), `GET_LOCK` (MySQL/MariaDB) or `BEGIN IMMEDIATE` (SQLite), as the catalogue's
 * own migrations. Throws kind 'internal' when an area is newer than this code.
 * The store must be open.
 */
export async function migrateCnAreas(store: SqlStore, areas: readonly CnSchemaArea[]): Promise<void> {
  const d = store.dialect;
  await underMigrationLock(store.db, d, { key: 724300118, name: 'memberkit_cn_migrate' }, async (conn, run) => {
    await run(`CREATE TABLE IF NOT EXISTS mk_cn_migrations (
      area    VARCHAR(64) NOT NULL,
      version INTEGER NOT NULL,
      applied BIGINT NOT NULL,
      PRIMARY KEY (area, version)
    )${d.tableSuffix}`);
    for (const area of areas) {
      const all = area.migrations(d);
      const { rows } = await sql<{ v: unknown }>`SELECT max(version) AS v FROM mk_cn_migrations WHERE area = ${area.name}`.execute(conn);
      const current = rows[0]?.v === null || rows[0]?.v === undefined ? 0 : Number(rows[0].v);
      if (current > all.length) throw new AdapterError('internal', `the CN schema area '${area.name}' is at version ${current}, newer than this memberkit supports (${all.length})`);
      for (let v = current; v < all.length; v++) {
        for (const statement of all[v]!) await run(statement);
        await sql`INSERT INTO mk_cn_migrations (area, version, applied) VALUES (${area.name}, ${v + 1}, ${Date.now()})`.execute(conn);
      }
    }
  });
}
