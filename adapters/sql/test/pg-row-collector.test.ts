// PostgreSQL: a statement marked ARRAY_ROWS gets its rows as arrays of values, on a real
// server, through a client that also names write statements (as every pool connection does);
// the mark never reaches the server, and an unmarked statement keeps its rows as objects.
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ARRAY_ROWS, collectRows } from '../src/pg-row-collector.js';
import { nameWrites } from '../src/pg-named-writes.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';

describe('array rows on mark (PostgreSQL)', () => {
  let db: FreshDatabase;
  let client: pg.Client;

  beforeAll(async () => {
    db = await freshDatabase('postgres');
    client = new pg.Client(db.connection as pg.ClientConfig);
    await client.connect();
    collectRows(client);
    nameWrites(client);
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

  it('collects the rows of every statement kysely sends (values or a name), with the command and count; leaves several statements in one text to node-pg', async () => {
    type Collected = { command: string; rowCount: number; rows: unknown[] };
    const run = (text: string, values?: unknown[]) => client.query(text, values) as unknown as Promise<Collected>;
    // Named by nameWrites (an INSERT), with RETURNING rows.
    const inserted = await run('INSERT INTO t (id, n) VALUES ($1, $2), ($3, $4) RETURNING id', ['c', 3, 'd', 4]);
    expect(inserted).toMatchObject({ command: 'INSERT', rowCount: 2, rows: [{ id: 'c' }, { id: 'd' }] });
    const updated = await run('UPDATE t SET n = n + 10 WHERE id IN ($1, $2)', ['c', 'd']);
    expect(updated).toMatchObject({ command: 'UPDATE', rowCount: 2, rows: [] });
    // Named with no values (a row lock), and an unnamed read with values.
    expect((await run('SELECT id FROM t WHERE id = \'a\' FOR UPDATE', [])).rows).toEqual([{ id: 'a' }]);
    expect((await run('SELECT id, n FROM t WHERE n > $1 ORDER BY id', [10])).rows).toEqual([{ id: 'c', n: '13' }, { id: 'd', n: '14' }]);
    expect((await run('DELETE FROM t WHERE n > $1', [10])).rowCount).toBe(2);
    // No values: a simple query, which may hold several statements (node-pg gives a result each).
    const both = (await client.query('SELECT 1 AS one; SELECT 2 AS two')) as unknown as Array<{ rows: unknown[] }>;
    expect(both.map((r) => r.rows)).toEqual([[{ one: 1 }], [{ two: 2 }]]);
  });

  it("node-pg's Query objects keep none of the rows they delivered (what let pages outlive their statement)", async () => {
    const spied = new pg.Client(db.connection as pg.ClientConfig);
    await spied.connect();
    try {
      const submitted: Array<{ _result?: { rows: unknown[] } }> = [];
      const inner = spied.query.bind(spied) as (...args: unknown[]) => unknown;
      (spied as unknown as { query: unknown }).query = (...args: unknown[]) => {
        if (args[0] instanceof pg.Query) submitted.push(args[0] as never);
        return inner(...args);
      };
      collectRows(spied);
      nameWrites(spied);
      const page = (await spied.query(`${ARRAY_ROWS}SELECT i FROM generate_series(1, $1::int) i`, [500])) as unknown as { rows: unknown[][] };
      const objects = (await spied.query('SELECT i FROM generate_series(1, $1::int) i', [300])) as unknown as { rows: unknown[] };
      const named = (await spied.query('SELECT id FROM t WHERE id > $1 FOR UPDATE', [''])) as unknown as { rows: unknown[] };
      expect([page.rows.length, objects.rows.length, named.rows.length]).toEqual([500, 300, 2]);
      expect(submitted).toHaveLength(3);
      expect(submitted.map((q) => q._result?.rows.length)).toEqual([0, 0, 0]);
    } finally {
      await spied.end();
    }
  });
});
