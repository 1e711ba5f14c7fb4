// PostgreSQL: write statements run as named prepared statements, one per text and connection
// (pg-named-writes.ts), on a real server: what is prepared (writes and row locks, up to the
// bound; not other reads), and that a failed write and its rolled-back transaction leave the statement usable.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MAX_NAMED_TEXT, nameWrites } from '../src/pg-named-writes.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';

describe('named write statements (PostgreSQL)', () => {
  let db: FreshDatabase;
  let client: pg.Client;

  const prepared = async () => (await client.query<{ name: string; statement: string }>('SELECT name, statement FROM pg_prepared_statements ORDER BY name')).rows;

  beforeAll(async () => {
    db = await freshDatabase('postgres');
    client = new pg.Client(db.connection as pg.ClientConfig);
    await client.connect();
    nameWrites(client, 4);
    await client.query('CREATE TABLE t (id text PRIMARY KEY, n int NOT NULL)');
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('a write text is prepared once and reused; reads, long texts and texts past the bound run unnamed', async () => {
    const insert = 'INSERT INTO t (id, n) VALUES ($1, $2)';
    await client.query(insert, ['a', 1]);
    await client.query(insert, ['b', 2]);
    // a text longer than MAX_NAMED_TEXT (a batch of many rows): unnamed
    const many = Array.from({ length: 700 }, (_, i) => `('m${i}', ${i})`).join(', ');
    expect(many.length).toBeGreaterThan(MAX_NAMED_TEXT);
    await client.query(`INSERT INTO t (id, n) VALUES ${many}, ($1, $2)`, ['m-last', 1]);
    await client.query('UPDATE t SET n = n + $1 WHERE id = $2', [10, 'a']);
    await client.query('WITH d AS (DELETE FROM t WHERE id = $1 RETURNING n) INSERT INTO t (id, n) SELECT $2, n FROM d', ['b', 'c']);
    // a row lock (of a write transaction) is named too
    expect((await client.query('SELECT n FROM t WHERE id = $1 FOR UPDATE', ['a'])).rows).toEqual([{ n: 11 }]);
    expect((await client.query("SELECT id, n FROM t WHERE id NOT LIKE 'm%' AND id <> $1 ORDER BY id", ['zzz'])).rows).toEqual([
      { id: 'a', n: 11 },
      { id: 'c', n: 2 },
    ]);
    // the fifth text, past the bound of 4: unnamed, and it still runs
    await client.query('DELETE FROM t WHERE id = $1 OR id LIKE $2', ['c', 'm%']);
    expect((await client.query('SELECT count(*)::int AS n FROM t', [])).rows[0]).toEqual({ n: 1 });
    expect((await prepared()).map((p) => [p.name, p.statement])).toEqual([
      ['mk_w0', 'INSERT INTO t (id, n) VALUES ($1, $2)'],
      ['mk_w1', 'UPDATE t SET n = n + $1 WHERE id = $2'],
      ['mk_w2', 'WITH d AS (DELETE FROM t WHERE id = $1 RETURNING n) INSERT INTO t (id, n) SELECT $2, n FROM d'],
      ['mk_w3', 'SELECT n FROM t WHERE id = $1 FOR UPDATE'],
    ]);
  });

  it('a named write that fails in a transaction rolls back with it; the statement runs again afterwards', async () => {
    const insert = 'INSERT INTO t (id, n) VALUES ($1, $2)';
    await client.query('BEGIN');
    await expect(client.query(insert, ['a', 5])).rejects.toMatchObject({ code: '23505' });
    await client.query('ROLLBACK');
    await client.query(insert, ['d', 4]);
    expect((await client.query('SELECT id, n FROM t ORDER BY id', [])).rows).toEqual([
      { id: 'a', n: 11 },
      { id: 'd', n: 4 },
    ]);
    expect((await prepared()).length).toBe(4);
  });
});
