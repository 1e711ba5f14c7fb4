// ChangeFollower (the change feed consumer behind the record cache, the query index and the
// views): the callers of one event-loop turn share one head read; a caller of a later turn
// starts its own read at once instead of waiting for the one under way; every entry reaches the
// consumer once, in commit order, and a caller returns only once the changes committed before it
// asked were handed over. Real SQL store on SQLite; its head reads are counted and held at a gate
// (as a slow PostgreSQL would hold them) so that reads overlap for certain.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createSqlCatalogue, type SqlCatalogue } from '@memberkit/adapter-sql';
import { buildObjectRecord } from '@memberkit/testkit';
import type { CatalogueAdapter, FeedEntry } from '@memberkit/types';
import { ChangeFollower } from '@memberkit/core';

const dir = mkdtempSync(join(tmpdir(), 'mk-follower-'));
let sql: SqlCatalogue;

beforeAll(async () => {
  sql = createSqlCatalogue({ dialect: 'sqlite', connection: join(dir, 'catalogue.db') });
  await sql.open();
});
afterAll(async () => {
  await sql?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The store's feed, with every head read counted and held until `release`. */
function heldFeed() {
  const real = sql.catalogue;
  const waiting: Array<() => void> = [];
  let reads = 0;
  const feed = {
    changesSince: (seq: number, limit: number) => real.changesSince!(seq, limit),
    changeHead: async () => {
      reads++;
      // The head as the read finds it once let through: a commit made before then is in it.
      await new Promise<void>((resolve) => waiting.push(resolve));
      return real.changeHead!();
    },
  } as Pick<CatalogueAdapter, 'changesSince' | 'changeHead'> as CatalogueAdapter;
  return {
    feed,
    reads: () => reads,
    /** Lets the oldest held read through. */
    release: () => waiting.shift()?.(),
    held: () => waiting.length,
  };
}

const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

it('callers of one turn share a head read; a later turn reads at once beside it; entries arrive once, in order', async () => {
  const held = heldFeed();
  const seen: FeedEntry[] = [];
  const follower = new ChangeFollower(held.feed, async (entries) => {
    seen.push(...entries);
  });
  await follower.begin(await sql.catalogue.changeHead!());

  await sql.catalogue.apply({ insert: [buildObjectRecord('follow-1')] });
  // Three callers in one turn: one read.
  const first = [follower.catchUp(), follower.catchUp(), follower.catchUp()];
  expect(held.reads()).toBe(1);

  await nextTurn();
  await sql.catalogue.apply({ insert: [buildObjectRecord('follow-2')] });
  // A caller of a later turn does not wait for the first read to end: its own has started.
  const second = follower.catchUp();
  expect(held.reads()).toBe(2);
  expect(held.held()).toBe(2);

  // The first read ends (it sees both commits: they were made before it was let through).
  held.release();
  await Promise.all(first);
  held.release();
  await second;
  expect(seen.map((e) => e.pid)).toEqual(['follow-1', 'follow-2']);
  expect(new Set(seen.map((e) => e.seq)).size).toBe(seen.length);

  // A commit after both reads: the next caller's read hands over exactly that one.
  await sql.catalogue.apply({ insert: [buildObjectRecord('follow-3')] });
  await nextTurn();
  const third = follower.catchUp();
  held.release();
  await third;
  expect(seen.map((e) => e.pid)).toEqual(['follow-1', 'follow-2', 'follow-3']);
  expect(held.reads()).toBe(3);
});

it('a caller of a later turn returns only after the changes committed before it asked were handed over', async () => {
  const held = heldFeed();
  const seen: string[] = [];
  const follower = new ChangeFollower(held.feed, async (entries) => {
    seen.push(...entries.map((e) => e.pid));
  });
  await follower.begin(await sql.catalogue.changeHead!());

  // The first read is let through before the commit: it cannot see it.
  const early = follower.catchUp();
  held.release();
  await early;
  await sql.catalogue.apply({ insert: [buildObjectRecord('late-1')] });
  await nextTurn();
  const late = follower.catchUp();
  let done = false;
  void late.then(() => (done = true));
  await nextTurn();
  expect(done).toBe(false); // its read is still held
  held.release();
  await late;
  expect(seen).toEqual(['late-1']);
});
