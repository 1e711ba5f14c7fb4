// Isolated databases for tests: a fresh schema per test file on PostgreSQL, a fresh database
// per test file on MariaDB/MySQL, a fresh file on SQLite; all dropped afterwards. The
// servers are the machine's (.ci/run starts them when they are down).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import type { SqlConnection, SqlDialectName } from '../../src/index.js';

export const PG_URL = process.env.MEMBERKIT_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';
export const MYSQL_URL = process.env.MEMBERKIT_TEST_MYSQL ?? 'mysql://root@127.0.0.1:3306/test';

export interface FreshDatabase {
  dialect: SqlDialectName;
  /** Connection for memberkit stores (a new pool may be made from it any number of times). */
  connection: SqlConnection;
  /** Name of the schema (PG), database (MySQL) or file (SQLite). */
  name: string;
  /** Runs raw SQL in the fresh database (setup of legacy tables). */
  exec(statement: string, params?: unknown[]): Promise<unknown[]>;
  drop(): Promise<void>;
}

const suffix = () => `mk_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;

export async function freshDatabase(dialect: SqlDialectName): Promise<FreshDatabase> {
  if (dialect === 'postgres') {
    const schema = suffix();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    await admin.query(`SET search_path = ${schema}`);
    return {
      dialect,
      name: schema,
      connection: { connectionString: PG_URL, options: `-c search_path=${schema}`, max: 10 },
      exec: async (statement, params) => (await admin.query(statement, params as unknown[])).rows,
      async drop() {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.end();
      },
    };
  }
  if (dialect === 'mysql') {
    const database = suffix();
    const admin = await mysql.createConnection({ uri: MYSQL_URL, multipleStatements: true, timezone: 'Z' });
    await admin.query(`CREATE DATABASE ${database} CHARACTER SET utf8mb4`);
    await admin.query(`USE ${database}`);
    await admin.query("SET time_zone = '+00:00'");
    const url = new URL(MYSQL_URL);
    url.pathname = `/${database}`;
    return {
      dialect,
      name: database,
      connection: url.toString(),
      exec: async (statement, params) => {
        const [rows] = await admin.query(statement, params);
        return Array.isArray(rows) ? rows : [];
      },
      async drop() {
        await admin.query(`DROP DATABASE IF EXISTS ${database}`);
        await admin.end();
      },
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'memberkit-sql-'));
  const file = join(dir, 'catalogue.sqlite');
  const { default: Database } = await import('better-sqlite3');
  const admin = new Database(file);
  admin.pragma('journal_mode = WAL');
  return {
    dialect,
    name: file,
    connection: file,
    exec: async (statement, params) => {
      const st = admin.prepare(statement);
      return st.reader ? st.all(...((params ?? []) as unknown[])) : (st.run(...((params ?? []) as unknown[])), []);
    },
    async drop() {
      admin.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** Empties memberkit's tables (between tests sharing one fresh database). */
export const MK_TABLES = ['mk_objects', 'mk_identifiers', 'mk_access', 'mk_events', 'mk_jobs', 'mk_overlay', 'mk_overlay_access'];
