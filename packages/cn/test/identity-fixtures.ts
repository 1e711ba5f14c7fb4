// Real databases for the identity store tests: a fresh schema per suite on PostgreSQL, a fresh
// database on MariaDB, a fresh file on SQLite, each dropped afterwards (the machine's servers,
// as .ci/run starts them).
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import mysql from 'mysql2/promise';
import pg from 'pg';
import { SqlStore, type SqlConnection, type SqlDialectName } from '@memberkit/adapter-sql';
import { migrateCnAreas } from '../src/store/cn-migrations.js';
import { identityArea } from '../src/identity/schema.js';
import { IdentityStore } from '../src/identity/identity-store.js';
import { SqlSubjectDirectory } from '../src/identity/subject-directory.js';
import { IdentityService, type IdentityServiceOptions } from '../src/identity/identity-service.js';

export const PG_URL = process.env.MEMBERKIT_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';
export const MYSQL_URL = process.env.MEMBERKIT_TEST_MYSQL ?? 'mysql://root@127.0.0.1:3306/test';

export interface IdentityFixture {
  store: SqlStore;
  identities: IdentityStore;
  directory: SqlSubjectDirectory;
  service(options?: Partial<IdentityServiceOptions>): IdentityService;
  close(): Promise<void>;
}

const suffix = () => `mk_h3_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;

async function freshConnection(dialect: SqlDialectName): Promise<{ connection: SqlConnection; drop(): Promise<void> }> {
  if (dialect === 'postgres') {
    const schema = suffix();
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA ${schema}`);
    return {
      connection: { connectionString: PG_URL, options: `-c search_path=${schema}`, max: 5 },
      async drop() {
        await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
        await admin.end();
      },
    };
  }
  if (dialect === 'mysql') {
    const database = suffix();
    const admin = await mysql.createConnection({ uri: MYSQL_URL });
    await admin.query(`CREATE DATABASE ${database} CHARACTER SET utf8mb4`);
    const url = new URL(MYSQL_URL);
    url.pathname = `/${database}`;
    return {
      connection: url.toString(),
      async drop() {
        await admin.query(`DROP DATABASE IF EXISTS ${database}`);
        await admin.end();
      },
    };
  }
  const dir = await mkdtemp(join(tmpdir(), 'memberkit-cn-identity-'));
  return { connection: join(dir, 'cn.sqlite'), drop: () => rm(dir, { recursive: true, force: true }) };
}

/** An opened store with the identity tables (and the catalogue's), on a fresh database. */
export async function identityFixture(dialect: SqlDialectName): Promise<IdentityFixture> {
  const db = await freshConnection(dialect);
  const store = new SqlStore({ dialect, connection: db.connection });
  await store.open();
  await migrateCnAreas(store, [identityArea]);
  const identities = new IdentityStore(store);
  const directory = new SqlSubjectDirectory(identities);
  return {
    store,
    identities,
    directory,
    service: (options = {}) => new IdentityService(identities, directory, { administrators: [], verifiers: [], mappers: [], ...options }),
    async close() {
      await store.close();
      await db.drop();
    },
  };
}

/** Empties the identity tables (between tests sharing one database). */
export async function clearIdentityTables(store: SqlStore): Promise<void> {
  for (const table of ['mk_cn_accounts', 'mk_cn_equivalences', 'mk_cn_pending_maps', 'mk_cn_groups', 'mk_cn_group_members', 'mk_cn_group_owners']) {
    await store.write(`clear ${table}`, (trx) => trx.deleteFrom(table).execute());
  }
}
