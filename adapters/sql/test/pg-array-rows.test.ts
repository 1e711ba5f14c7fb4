// PostgreSQL: a statement marked ARRAY_ROWS gets its rows as arrays of values, on a real
// server, through a client that also names write statements (as every pool connection does);
// the mark never reaches the server, and an unmarked statement keeps its rows as objects.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARRAY_ROWS, arrayRowsOnMark } from '../src/pg-array-rows.js';
import { nameWrites } from '../src/pg-named-writes.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';

describe('array rows on mark (PostgreSQL)', () => {
  let db: FreshDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    db = await freshDatabase('postgres');
    client = new pg.Client(db.connection as pg.ClientConfig);
    await client.connect();
    nameWrites(client);
    arrayRowsOnMark(client);
    await client.query('CREATE TABLE t (id text PRIMARY KEY, n bigint NOT NULL)');
    await client.query('INSERT INTO t (id, n) VALUES ($1, $2), ($3, $4)', ['a', 1, 'b', 2]);
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  it('a marked statement returns arrays in column order; an unmarked one objects', async () => {
    const marked = await client.query(`${ARRAY_ROWS}SELECT id, n FROM t WHERE n >= $1 ORDER BY id`, [1]);
    expect(marked.rows).toEqual([['a', '1'], ['b', '2']]);
    const plain = await client.query('SELECT id, n FROM t WHERE n >= $1 ORDER BY id', [1]);
    expect(plain.rows).toEqual([{ id: 'a', n: '1' }, { id: 'b', n: '2' }]);
  });

  it('the server is sent the text without the mark', async () => {
    const text = `SELECT query FROM pg_stat_activity WHERE pid = pg_backend_pid() AND $1::int = 1`;
    const seen = await client.query(`${ARRAY_ROWS}${text}`, [1]);
    expect(seen.rows).toEqual([[text]]);
  });

  it('a marked statement that fails rejects, and the connection keeps working', async () => {
    await expect(client.query(`${ARRAY_ROWS}SELECT no_such_column FROM t WHERE n = $1`, [1])).rejects.toThrow(/no_such_column/);
    expect((await client.query(`${ARRAY_ROWS}SELECT count(*) FROM t WHERE n > $1`, [0])).rows).toEqual([['2']]);
  });
});
