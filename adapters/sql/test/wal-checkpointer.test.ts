// SQLite's WAL is checkpointed by a worker thread (WalCheckpointer), not inside the COMMIT of
// a request: while the thread runs, the serving connection's own auto-checkpoint is only a
// backstop (10,000 pages), yet committed pages reach the database file within moments.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { openKysely, type SqlHandle } from '../src/dialect.js';

let dir: string;
let handle: SqlHandle | undefined;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mk-wal-'));
});
afterEach(async () => {
  await handle?.destroy();
  handle = undefined;
  await rm(dir, { recursive: true, force: true });
});

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

it('moves committed pages into the database file from its own thread, the serving connection checkpointing only past 10,000 pages', async () => {
  const file = join(dir, 'wal.db');
  handle = openKysely({ dialect: 'sqlite', connection: { file } });
  const { db } = handle;
  await sql`CREATE TABLE t (x BLOB)`.execute(db);
  const threshold = async () => Number((await sql<{ wal_autocheckpoint: number }>`PRAGMA wal_autocheckpoint`.execute(db)).rows[0]!.wal_autocheckpoint);
  expect(await until(threshold, (n) => n === 10_000)).toBe(10_000);
  const before = (await stat(file)).size;
  // ~400 pages in the WAL: below both thresholds, so only the thread moves them.
  for (let i = 0; i < 100; i++) await sql`INSERT INTO t (x) VALUES (randomblob(16000))`.execute(db);
  const after = await until(async () => (await stat(file)).size, (size) => size > before + 1_500_000);
  expect(after).toBeGreaterThan(before + 1_500_000);
  const rows = await sql<{ n: number }>`SELECT count(*) AS n FROM t`.execute(db);
  expect(Number(rows.rows[0]!.n)).toBe(100);
});

it('an in-memory database runs without the thread', async () => {
  handle = openKysely({ dialect: 'sqlite', connection: { file: ':memory:' } });
  const rows = await sql<{ n: number }>`PRAGMA wal_autocheckpoint`.execute(handle.db);
  expect(Number((rows.rows[0] as { wal_autocheckpoint: number }).wal_autocheckpoint)).toBe(1000);
});
