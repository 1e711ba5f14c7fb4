import { AdapterError } from '@memberkit/types';
import { sql, type Kysely } from 'kysely';
import { beginImmediate, type DialectSql } from './dialect.js';
import { EVENT_POSITIONS, hasPositions, OBJECT_POSITIONS, rebuildPositions, runSteps } from './position-index.js';

/** Number of rows per sharded counter (spreads concurrent appends over several rows). */
export const COUNTER_SLOTS = 8;

/**
 * The schema of memberkit's own tables (all named `mk_*`, so they can live beside a legacy
 * schema), as an ordered list of migrations, each a list of statements rendered for one
 * dialect. Migration `i` (zero-based) is recorded as version `i + 1` in `mk_migrations`.
 * Append new entries; never edit a released one.
 */
export function migrations(d: DialectSql): string[][] {
  const id = d.identifierType;
  const subject = d.subjectType;
  const short = d.shortType;
  const long = d.longTextType;
  const t = d.tableSuffix;
  return [
    // 1: catalogue, identifiers, access, event log, counters, jobs, mapping overlay.
    [
      // One row per object: the columns listing filters and sorts on (dates as epoch ms, so
      // every dialect orders them identically) and the complete system metadata as JSON.
      `CREATE TABLE mk_objects (
        pid            ${id} NOT NULL PRIMARY KEY,
        series_id      ${id},
        format_id      ${short} NOT NULL,
        date_modified  BIGINT NOT NULL,
        date_uploaded  BIGINT NOT NULL,
        serial_version BIGINT NOT NULL,
        is_replica     SMALLINT NOT NULL,
        obsoletes      ${id},
        obsoleted_by   ${id},
        storage_key    ${long} NOT NULL,
        sysmeta        ${long} NOT NULL
      )${t}`,
      // Listing order (keyset-friendly, covering the replica filter) and the formatId filter.
      'CREATE INDEX mk_objects_list ON mk_objects (date_modified, pid, is_replica)',
      'CREATE INDEX mk_objects_format ON mk_objects (format_id, date_modified, pid)',
      'CREATE INDEX mk_objects_series ON mk_objects (series_id)',
      // Every identifier in use as a PID or a SID (refs: objects carrying the SID). Its
      // primary key keeps PIDs and SIDs apart under concurrent writers and processes.
      `CREATE TABLE mk_identifiers (
        id   ${id} NOT NULL PRIMARY KEY,
        kind VARCHAR(3) NOT NULL,
        refs BIGINT NOT NULL
      )${t}`,
      // Subjects that may read each object: rightsHolder and every subject with a permission.
      `CREATE TABLE mk_access (
        pid     ${id} NOT NULL,
        subject ${subject} NOT NULL,
        PRIMARY KEY (pid, subject)
      )${t}`,
      'CREATE INDEX mk_access_subject ON mk_access (subject, pid)',
      `CREATE TABLE mk_events (
        entry_id        ${d.serialPk},
        identifier      ${id} NOT NULL,
        ip_address      ${long} NOT NULL,
        user_agent      ${long} NOT NULL,
        subject         ${long} NOT NULL,
        event           ${short} NOT NULL,
        date_logged     BIGINT NOT NULL,
        node_identifier ${long} NOT NULL
      )${t}`,
      'CREATE INDEX mk_events_order ON mk_events (date_logged, entry_id)',
      'CREATE INDEX mk_events_identifier ON mk_events (identifier)',
      'CREATE INDEX mk_events_event ON mk_events (event, date_logged, entry_id)',
      // Exact row counts of mk_objects and mk_events (sum over slots), kept in the writing
      // transaction, so that an unfiltered total never counts a million rows.
      `CREATE TABLE mk_counters (
        name VARCHAR(32) NOT NULL,
        slot INTEGER NOT NULL,
        n    BIGINT NOT NULL,
        PRIMARY KEY (name, slot)
      )${t}`,
      `INSERT INTO mk_counters (name, slot, n) VALUES ${['objects', 'events']
        .flatMap((name) => Array.from({ length: COUNTER_SLOTS }, (_, slot) => `('${name}', ${slot}, 0)`))
        .join(', ')}`,
      // Background jobs (replication, sysmeta refresh): claimable by one worker at a time.
      `CREATE TABLE mk_jobs (
        id           VARCHAR(64) NOT NULL PRIMARY KEY,
        kind         VARCHAR(128) NOT NULL,
        payload      ${long} NOT NULL,
        state        VARCHAR(16) NOT NULL,
        attempts     INTEGER NOT NULL,
        run_after    BIGINT NOT NULL,
        locked_by    VARCHAR(128),
        locked_until BIGINT,
        last_error   ${long},
        dedupe_active VARCHAR(255),
        created      BIGINT NOT NULL,
        updated      BIGINT NOT NULL
      )${t}`,
      // Claims walk these in order, so SKIP LOCKED locks only the rows it returns (a filesort
      // would lock every candidate in InnoDB and leave concurrent claimers empty-handed).
      'CREATE INDEX mk_jobs_due ON mk_jobs (state, run_after, id)',
      'CREATE INDEX mk_jobs_lease ON mk_jobs (state, locked_until, id)',
      // The dedupe key of a queued or running job (NULL once done or failed): at most one each.
      'CREATE UNIQUE INDEX mk_jobs_dedupe ON mk_jobs (dedupe_active)',
      // Mapping mode: what memberkit keeps for objects of a legacy catalogue (fields the
      // archive lacks, changes made through the node, checksums computed from the bytes).
      `CREATE TABLE mk_overlay (
        pid               ${id} NOT NULL PRIMARY KEY,
        serial_version    BIGINT,
        date_modified     BIGINT,
        patch             ${long},
        has_access        SMALLINT NOT NULL,
        checksum_algorithm VARCHAR(16),
        checksum_value    VARCHAR(128),
        checksum_size     BIGINT,
        checksum_source   BIGINT
      )${t}`,
      'CREATE INDEX mk_overlay_modified ON mk_overlay (date_modified)',
      `CREATE TABLE mk_overlay_access (
        pid     ${id} NOT NULL,
        subject ${subject} NOT NULL,
        PRIMARY KEY (pid, subject)
      )${t}`,
    ],
    // 2: the position index of the listings (see position-index.ts) and the public flag it counts.
    [
      `CREATE TABLE mk_ranks (
        list     VARCHAR(16) NOT NULL,
        lo_date  BIGINT NOT NULL,
        lo_key   ${id} NOT NULL,
        n        BIGINT NOT NULL,
        n_public BIGINT NOT NULL,
        PRIMARY KEY (list, lo_date, lo_key)
      )${t}`,
      // 1 when `public` may read the object: anonymous listings become an index range.
      'ALTER TABLE mk_objects ADD COLUMN is_public SMALLINT NOT NULL DEFAULT 0',
      "UPDATE mk_objects SET is_public = 1 WHERE pid IN (SELECT pid FROM mk_access WHERE subject = 'public')",
      'CREATE INDEX mk_objects_public ON mk_objects (is_public, date_modified, pid)',
      // The listing index covers the flag too: a caller's `public OR mine` filter walks it alone.
      d.name === 'mysql' ? 'DROP INDEX mk_objects_list ON mk_objects' : 'DROP INDEX mk_objects_list',
      'CREATE INDEX mk_objects_list ON mk_objects (date_modified, pid, is_replica, is_public)',
    ],
    // 3: what listObjects shows (Types.ObjectInfo) as columns, so listings decode no JSON.
    [
      'ALTER TABLE mk_objects ADD COLUMN size BIGINT',
      `ALTER TABLE mk_objects ADD COLUMN checksum_algorithm ${short}`,
      `ALTER TABLE mk_objects ADD COLUMN checksum_value ${short}`,
      `UPDATE mk_objects SET size = ${d.jsonNumber('sysmeta', '$.size')},
        checksum_algorithm = ${d.jsonText('sysmeta', '$.checksum.algorithm')}, checksum_value = ${d.jsonText('sysmeta', '$.checksum.value')}`,
    ],
    // Wrap scans (see scan-state.ts): what the scanner recorded per wrapped root (root_id: SHA-256
    // of the root's name, so keys fit MySQL's index limit), the scan lease, generated dataset maps.
    [
      `CREATE TABLE mk_scan_roots (
        root_id     VARCHAR(64) NOT NULL PRIMARY KEY,
        root        ${long} NOT NULL,
        holder      VARCHAR(255),
        lease_until BIGINT NOT NULL
      )${t}`,
      `CREATE TABLE mk_scan_entries (
        root_id   VARCHAR(64) NOT NULL,
        entry_key ${id} NOT NULL,
        pid       ${id} NOT NULL,
        size      BIGINT NOT NULL,
        version   ${short} NOT NULL,
        algorithm VARCHAR(16) NOT NULL,
        checksum  VARCHAR(128) NOT NULL,
        format    ${short},
        scan      BIGINT NOT NULL,
        PRIMARY KEY (root_id, entry_key)
      )${t}`,
      'CREATE INDEX mk_scan_entries_scan ON mk_scan_entries (root_id, scan, entry_key)',
      `CREATE TABLE mk_dataset_maps (
        map_key ${id} NOT NULL PRIMARY KEY,
        root_id VARCHAR(64) NOT NULL,
        pid     ${id} NOT NULL,
        folder  ${long} NOT NULL,
        members ${long} NOT NULL,
        bytes   ${d.name === 'postgres' ? 'BYTEA' : d.name === 'mysql' ? 'LONGBLOB' : 'BLOB'} NOT NULL,
        created BIGINT NOT NULL
      )${t}`,
      'CREATE INDEX mk_dataset_maps_root ON mk_dataset_maps (root_id)',
    ],
    // One clock per catalogue (see clock.ts): the row every catalogue change locks; it gives
    // dateSysMetadataModified stamps and change-feed positions in commit order. The feed
    // itself (change-feed.ts), and write intents of bytes not yet catalogued (the sweep's).
    [
      `CREATE TABLE mk_clock (
        id      SMALLINT NOT NULL PRIMARY KEY,
        last_ms BIGINT NOT NULL,
        seq     BIGINT NOT NULL
      )${t}`,
      `INSERT INTO mk_clock (id, last_ms, seq) SELECT 1, ${d.name === 'sqlite' ? 'max' : 'GREATEST'}(
        COALESCE((SELECT max(date_modified) FROM mk_objects), 0), COALESCE((SELECT max(date_modified) FROM mk_overlay), 0)), 0`,
      `CREATE TABLE mk_changes (
        seq  BIGINT NOT NULL PRIMARY KEY,
        pid  ${id} NOT NULL,
        kind VARCHAR(8) NOT NULL,
        at   BIGINT NOT NULL
      )${t}`,
      `CREATE TABLE mk_intents (
        id      VARCHAR(64) NOT NULL PRIMARY KEY,
        name    ${long} NOT NULL,
        created BIGINT NOT NULL
      )${t}`,
      'CREATE INDEX mk_intents_created ON mk_intents (created, id)',
    ],
    // 6: SQLite: the two listing indexes also hold what listObjects shows (SUMMARY_COLUMNS), so
    // a page is one range of an index and reads no row (a row holds the system metadata JSON).
    // Servers keep the narrow indexes and the deferred join: on PostgreSQL the wide index made
    // deep pages slower (an OFFSET walk over it visits the rows it skips, unless vacuumed), and
    // MySQL limits index keys to 3072 bytes, which a long PID with its checksum could pass.
    d.name === 'sqlite'
      ? [
          'DROP INDEX mk_objects_list',
          `CREATE INDEX mk_objects_list ON mk_objects (${LIST_INDEX_KEY}, ${SUMMARY_INDEXED})`,
          'DROP INDEX mk_objects_public',
          `CREATE INDEX mk_objects_public ON mk_objects (${PUBLIC_INDEX_KEY}, ${SUMMARY_INDEXED})`,
        ]
      : [],
  ];
}

/** SQLite's listing indexes (migration 6): order and filter flags, then the summary columns. */
const LIST_INDEX_KEY = 'date_modified, pid, is_replica, is_public';
const PUBLIC_INDEX_KEY = 'is_public, date_modified, pid';
const SUMMARY_INDEXED = 'format_id, size, checksum_algorithm, checksum_value';

/** Whether the listing indexes of dialect `d` hold every summary column (SUMMARY_COLUMNS). */
export function listingIndexesCoverSummaries(d: DialectSql): boolean {
  return d.name === 'sqlite';
}

/**
 * Brings the database to the newest schema version, exactly once even when several processes
 * open it at the same moment: under `pg_advisory_xact_lock` in one transaction (PostgreSQL
 * DDL is transactional), `GET_LOCK` (MySQL/MariaDB) or `BEGIN IMMEDIATE` (SQLite).
 * Throws kind 'internal' when the database is newer than this code.
 */
export async function migrate(db: Kysely<any>, d: DialectSql, busyTimeoutMs = 5000): Promise<void> {
  const all = migrations(d);
  await underMigrationLock(db, d, { key: 724300117, name: 'memberkit_migrate', busyTimeoutMs }, async (conn, run) => {
    await run(`CREATE TABLE IF NOT EXISTS mk_migrations (version INTEGER NOT NULL PRIMARY KEY, applied BIGINT NOT NULL)${d.tableSuffix}`);
    const { rows } = await sql<{ v: unknown }>`SELECT max(version) AS v FROM mk_migrations`.execute(conn);
    const current = rows[0]?.v === null || rows[0]?.v === undefined ? 0 : Number(rows[0].v);
    if (current > all.length) throw new AdapterError('internal', `schema version ${current} is newer than this memberkit supports (${all.length})`);
    for (let v = current; v < all.length; v++) {
      for (const statement of all[v]!) await run(statement);
      await sql`INSERT INTO mk_migrations (version, applied) VALUES (${v + 1}, ${Date.now()})`.execute(conn);
    }
    // Still under the migration lock: build the position index where it is missing.
    for (const t of [OBJECT_POSITIONS, EVENT_POSITIONS]) {
      if (await runSteps(conn, d, hasPositions(t))) continue;
      if (d.name === 'mysql') await run('SET TRANSACTION ISOLATION LEVEL READ COMMITTED').then(() => run('START TRANSACTION'));
      await runSteps(conn, d, rebuildPositions(t));
      if (d.name === 'mysql') await run('COMMIT');
    }
  });
}

/** A migration lock: a PostgreSQL advisory-lock key and a MySQL lock name, distinct per schema. */
export interface MigrationLock {
  key: number;
  name: string;
  busyTimeoutMs?: number;
}

/**
 * Runs `fn` on one connection under a migration lock, so that processes opening the database at
 * the same moment migrate it once: `pg_advisory_xact_lock` in one transaction (PostgreSQL DDL is
 * transactional, committed or rolled back with `fn`), `GET_LOCK` (MySQL/MariaDB, whose DDL
 * commits itself) or `BEGIN IMMEDIATE` (SQLite).
 */
export async function underMigrationLock(
  db: Kysely<any>,
  d: DialectSql,
  lock: MigrationLock,
  fn: (conn: Kysely<any>, run: (statement: string) => Promise<unknown>) => Promise<void>,
): Promise<void> {
  await db.connection().execute(async (conn) => {
    const run = (statement: string) => sql.raw(statement).execute(conn);
    let release: (() => Promise<unknown>) | undefined;
    if (d.name === 'postgres') {
      await run('BEGIN');
      await run(`SELECT pg_advisory_xact_lock(${Math.trunc(lock.key)})`);
    } else if (d.name === 'mysql') {
      const name = lock.name.replace(/[^A-Za-z0-9_]/g, '_');
      await run(`SELECT GET_LOCK('${name}', 120)`);
      release = () => run(`SELECT RELEASE_LOCK('${name}')`);
    } else {
      await beginImmediate(conn, lock.busyTimeoutMs);
    }
    try {
      await fn(conn, run);
      if (d.name !== 'mysql') await run('COMMIT');
    } catch (e) {
      if (d.name !== 'mysql') await run('ROLLBACK').catch(() => undefined);
      throw e;
    } finally {
      await release?.();
    }
  });
}
