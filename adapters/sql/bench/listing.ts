// Listing benchmark: loads N objects and N log entries (default 1,000,000) into each dialect
// and measures the median latency of listObjects (catalogue.list) and getLogRecords
// (eventLog.query) pages at several offsets, through the adapter API. Not part of `npm test`.
//
//   TSX_TSCONFIG_PATH=tsconfig.dev.json node --conditions=@memberkit/source --import tsx \
//     adapters/sql/bench/listing.ts [--dialects postgres,mysql,sqlite] [--rows 1000000] [--count 1000] [--runs 15]
//
// Rows are generated inside the database (generate_series on PostgreSQL, the SEQUENCE engine's
// seq_1_to_N on MariaDB, a recursive CTE on SQLite): one INSERT ... SELECT per table, the
// fastest load there is short of COPY from a file. Each dialect gets a fresh schema/database
// (PostgreSQL schema / MariaDB database mk_bench_*, SQLite temp file), dropped at the end.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sql, type Kysely } from 'kysely';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { buildMinimalSystemMetadata } from '@memberkit/testkit';
import { createSqlCatalogue, type SqlConnection, type SqlDialectName, type SqlStore } from '../src/index.js';

const { values: args } = parseArgs({
  options: {
    dialects: { type: 'string', default: 'postgres,mysql,sqlite' },
    rows: { type: 'string', default: '1000000' },
    count: { type: 'string', default: '1000' },
    runs: { type: 'string', default: '15' },
  },
});
const N = Number(args.rows);
const COUNT = Number(args.count);
const RUNS = Number(args.runs);
const PG_URL = process.env.MEMBERKIT_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';
const MYSQL_URL = process.env.MEMBERKIT_TEST_MYSQL ?? 'mysql://root@127.0.0.1:3306/test';
const BASE = Date.UTC(2020, 0, 1);

/** A sysmeta JSON with `__PID__`, `__MOD__` placeholders (replaced in SQL per row). */
const TEMPLATE = JSON.stringify({
  ...buildMinimalSystemMetadata('__PID__', { formatId: 'text/csv', size: 1234, rightsHolder: 'CN=bench', accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] } }),
  dateSysMetadataModified: '__MOD__',
});

interface Fresh {
  connection: SqlConnection;
  drop(): Promise<void>;
}

async function fresh(dialect: SqlDialectName): Promise<Fresh> {
  const name = `mk_bench_${randomBytes(4).toString('hex')}`;
  if (dialect === 'postgres') {
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${name}`);
    return { connection: { connectionString: PG_URL, options: `-c search_path=${name}` }, drop: async () => { await admin.query(`DROP SCHEMA ${name} CASCADE`); await admin.end(); } };
  }
  if (dialect === 'mysql') {
    const admin = await mysql.createConnection({ uri: MYSQL_URL });
    await admin.query(`CREATE DATABASE ${name} CHARACTER SET utf8mb4`);
    const url = new URL(MYSQL_URL);
    url.pathname = `/${name}`;
    return { connection: url.toString(), drop: async () => { await admin.query(`DROP DATABASE ${name}`); await admin.end(); } };
  }
  const dir = await mkdtemp(join(tmpdir(), 'memberkit-bench-'));
  return { connection: join(dir, 'bench.sqlite'), drop: () => rm(dir, { recursive: true, force: true }) };
}

/** Loads N objects (with identifiers and a public access row) and N events, in the database. */
async function load(store: SqlStore, dialect: SqlDialectName): Promise<void> {
  const db = store.db;
  const seq =
    dialect === 'postgres' ? `generate_series(1, ${N}) AS g(i)`
      : dialect === 'mysql' ? `(SELECT seq AS i FROM seq_1_to_${N}) g`
      : `(WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c LIMIT ${N}) SELECT i FROM c) g`;
  const concat = (...parts: string[]) => (dialect === 'mysql' ? `CONCAT(${parts.join(', ')})` : parts.join(' || '));
  const pad = dialect === 'sqlite' ? `substr('0000000' || i, -7)` : `LPAD(CAST(i AS ${dialect === 'mysql' ? 'CHAR' : 'TEXT'}), 7, '0')`;
  const pid = concat(`'bench-'`, pad);
  // dates spread so that date order differs from PID order (i * 7919 mod N is a permutation)
  const mod = `(${BASE} + ((CAST(i AS ${dialect === 'mysql' ? 'SIGNED' : 'BIGINT'}) * 7919) % ${N}) * 1000)`;
  const iso = dialect === 'postgres' ? `to_char(to_timestamp(${mod} / 1000.0) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`
    : dialect === 'mysql' ? `DATE_FORMAT(FROM_UNIXTIME(${mod} / 1000), '%Y-%m-%dT%H:%i:%s.000Z')`
    : `strftime('%Y-%m-%dT%H:%M:%fZ', ${mod} / 1000.0, 'unixepoch')`;
  const json = `REPLACE(REPLACE(${sqlString(TEMPLATE)}, '__PID__', ${pid}), '__MOD__', ${iso})`;
  const run = (statement: string) => sql.raw(statement).execute(db);
  if (dialect === 'sqlite') await run('PRAGMA synchronous = OFF');
  await run(`INSERT INTO mk_objects (pid, series_id, format_id, date_modified, date_uploaded, serial_version, is_replica, obsoletes, obsoleted_by, storage_key, sysmeta, is_public)
    SELECT ${pid}, NULL, 'text/csv', ${mod}, ${BASE}, 1, 0, NULL, NULL, ${concat(`'objects/'`, pad)}, ${json}, 1 FROM ${seq}`);
  await run(`INSERT INTO mk_identifiers (id, kind, refs) SELECT ${pid}, 'pid', 1 FROM ${seq}`);
  await run(`INSERT INTO mk_access (pid, subject) SELECT ${pid}, 'public' FROM ${seq}`);
  await run(`INSERT INTO mk_events (identifier, ip_address, user_agent, subject, event, date_logged, node_identifier)
    SELECT ${pid}, '192.0.2.1', 'bench', 'public', 'read', ${BASE} + (i / 2) * 1000, 'urn:node:BENCH' FROM ${seq}`);
  if (dialect === 'postgres') await run('VACUUM ANALYZE');
  else if (dialect === 'mysql') await run('ANALYZE TABLE mk_objects, mk_events, mk_access');
  else await run('ANALYZE');
  await store.reindex();
}

function sqlString(s: string): string {
  return `'${s.replace(/'/g, "''").replace(/\\/g, '\\\\')}'`;
}

async function median(fn: () => Promise<unknown>): Promise<number> {
  await fn(); // warm
  const times: number[] = [];
  for (let i = 0; i < RUNS; i++) {
    const t = process.hrtime.bigint();
    await fn();
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)]!;
}

const results: Array<Record<string, string>> = [];
for (const dialect of (args.dialects ?? '').split(',').filter(Boolean) as SqlDialectName[]) {
  const target = await fresh(dialect);
  const store = createSqlCatalogue({ dialect, connection: dialect === 'sqlite' ? String(target.connection) : target.connection });
  try {
    await store.open();
    const t0 = Date.now();
    await load(store.store, dialect);
    const loadSeconds = ((Date.now() - t0) / 1000).toFixed(1);
    // sanity: the adapter sees every row
    const total = (await store.catalogue.list({ start: 0, count: 0 })).total;
    if (total !== N) throw new Error(`${dialect}: expected ${N} objects, adapter sees ${total}`);
    const offsets = [0, 1_000, 100_000, 500_000, 990_000].filter((o) => o < N);
    for (const [what, page] of [
      ['listObjects', (start: number, count: number) => store.catalogue.list({ start, count })],
      ['getLogRecords', (start: number, count: number) => store.eventLog.query({ start, count })],
      ['listObjects readableBy=public', (start: number, count: number) => store.catalogue.list({ start, count, readableBy: ['public'] })],
      ['listObjects readableBy=public+user', (start: number, count: number) => store.catalogue.list({ start, count, readableBy: ['public', 'CN=someone', 'authenticatedUser'] })],
      ['listObjects fromDate (last 10%)', (start: number, count: number) => store.catalogue.list({ start, count, fromDate: new Date(BASE + N * 900) })],
    ] as const) {
      const row: Record<string, string> = { dialect, operation: what, load_s: loadSeconds };
      row['count=0'] = (await median(() => page(0, 0))).toFixed(1);
      const ofs = what.includes('fromDate') ? [0, 1_000, 50_000, 99_000].filter((o) => o < N) : offsets;
      for (const o of ofs) row[`@${o}`] = (await median(() => page(o, COUNT))).toFixed(1);
      results.push(row);
      console.error(JSON.stringify(row));
    }
  } finally {
    await store.close();
    await target.drop();
  }
}

console.log(`\nmedian ms over ${RUNS} runs, ${N.toLocaleString('en')} objects + ${N.toLocaleString('en')} log entries, pages of ${COUNT}`);
console.table(results);
