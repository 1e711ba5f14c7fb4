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

  it('collects every row of a long result in order, and two marked statements queued on one client each get their own', async () => {
    const series = (from: number, to: number) => client.query(`${ARRAY_ROWS}SELECT i, 'row ' || i FROM generate_series($1::int, $2::int) i ORDER BY i`, [from, to]) as unknown as Promise<{ rows: unknown[][]; rowCount: number; command: string }>;
    const long = await series(1, 20_000);
    expect(long.command).toBe('SELECT');
    expect(long.rowCount).toBe(20_000);
    expect(long.rows).toEqual(Array.from({ length: 20_000 }, (_, k) => [k + 1, `row ${k + 1}`]));
    // Sent together: node-pg runs them one after the other; neither sees the other's rows.
    const [a, b] = await Promise.all([series(1, 3), series(10, 11)]);
    expect(a.rows).toEqual([[1, 'row 1'], [2, 'row 2'], [3, 'row 3']]);
    expect(b.rows).toEqual([[10, 'row 10'], [11, 'row 11']]);
    // A failure between them leaves the next one whole.
    const [ok, failed, after] = await Promise.allSettled([series(1, 2), client.query(`${ARRAY_ROWS}SELECT 1 / (i - 2) FROM generate_series(1, $1::int) i`, [3]), series(5, 6)]);
    expect(ok).toMatchObject({ status: 'fulfilled', value: { rows: [[1, 'row 1'], [2, 'row 2']] } });
    expect(failed).toMatchObject({ status: 'rejected', reason: { message: expect.stringMatching(/division by zero/) } });
    expect(after).toMatchObject({ status: 'fulfilled', value: { rows: [[5, 'row 5'], [6, 'row 6']] } });
  });
});
