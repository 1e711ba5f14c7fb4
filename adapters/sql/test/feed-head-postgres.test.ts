// PostgreSQL reads the change feed's head (before every cached read) on a connection of its own
// (PgPreparedReader): it must see every commit of the pool's connections, survive the server
// ending it (a restart, an administrator's pg_terminate_backend) without crashing the process,
// and end with the store.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildObjectRecord } from '@memberkit/testkit';
import { createSqlCatalogue, type SqlCatalogue } from '../src/index.js';
import { PgPreparedReader } from '../src/pg-prepared-reader.js';
import { freshDatabase, PG_URL, type FreshDatabase } from './helpers/databases.js';

const HEAD_SQL = 'SELECT seq FROM mk_clock WHERE id = 1';

describe('PostgreSQL change feed head reads', () => {
  let fresh: FreshDatabase;
  let admin: pg.Client;
  let store: SqlCatalogue;
  // Only this file's connections carry this name (other files' nodes run beside it).
  const application = `mk_head_${randomBytes(4).toString('hex')}`;

  /** Backends of this store that ran the head read last (the reader's connection). */
  const readerBackends = async (): Promise<number[]> =>
    (await admin.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE application_name = $1 AND query = $2', [application, HEAD_SQL])).rows.map((r) => r.pid);
  const connections = async (): Promise<number> =>
    Number((await admin.query<{ n: string }>('SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1', [application])).rows[0]!.n);

  beforeAll(async () => {
    fresh = await freshDatabase('postgres');
    admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    store = createSqlCatalogue({ dialect: 'postgres', connection: { ...(fresh.connection as pg.PoolConfig), application_name: application } });
    await store.open();
  });
  afterAll(async () => {
    await store?.close();
    await admin?.end();
    await fresh?.drop();
  });

  it('sees each commit of the pool at once', async () => {
    const before = await store.catalogue.changeHead!();
    for (let i = 0; i < 3; i++) {
      await store.catalogue.apply({ insert: [buildObjectRecord(`head-${i}`)] });
      expect(await store.catalogue.changeHead!()).toBe(before + i + 1);
    }
    expect(await readerBackends()).toHaveLength(1);
  });

  it('connects again after the server ended its connection, and the process goes on', async () => {
    const [backend] = await readerBackends();
    expect(backend).toBeDefined();
    await admin.query('SELECT pg_terminate_backend($1)', [backend]);
    // The idle connection learns of its end ('error' and 'end'); an unhandled 'error' would fail this file.
    for (let i = 0; i < 50 && (await readerBackends()).includes(backend!); i++) await new Promise((r) => setTimeout(r, 20));
    await new Promise((r) => setTimeout(r, 50));
    const head = await store.catalogue.changeHead!();
    await store.catalogue.apply({ insert: [buildObjectRecord('head-after')] });
    expect(await store.catalogue.changeHead!()).toBe(head + 1);
    const now = await readerBackends();
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(backend);
  });

  it('ends its connection with the store', async () => {
    expect(await connections()).toBeGreaterThan(0);
    await store.close();
    for (let i = 0; i < 50 && (await connections()) > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(await connections()).toBe(0);
  });

  it('answers a read beside a slow one instead of queuing it behind (second connection)', async () => {
    const reader = new PgPreparedReader({ ...(fresh.connection as pg.PoolConfig), application_name: application });
    try {
      const order: string[] = [];
      const slow = reader.rows('mk_test_slow', 'SELECT pg_sleep(0.5)').then(() => order.push('slow'));
      const quick = reader.rows('mk_test_quick', 'SELECT 1').then(() => order.push('quick'));
      await Promise.all([slow, quick]);
      expect(order).toEqual(['quick', 'slow']);
    } finally {
      await reader.close();
    }
  });
});
