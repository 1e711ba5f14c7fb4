// ChangeFollower (the change feed consumer behind the record cache, the query index and the
// views): every caller waits for a head read issued after it asked; the callers of one
// event-loop turn share one; a later turn's read is issued while an earlier one is still under
// way; every entry reaches the consumer once, in commit order. Real SQL store on SQLite; its head reads are counted and held at a gate
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
      // The head when the read is issued, answered once let through (as a slow database would).
      const head = await real.changeHead!();
      await new Promise<void>((resolve) => waiting.push(resolve));
      return head;
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

it('callers of one turn share a head read; a later turn reads beside it; entries arrive once, in order', async () => {
  const held = heldFeed();
  const seen: FeedEntry[] = [];
  const follower = new ChangeFollower(held.feed, async (entries) => {
    seen.push(...entries);
  });
  await follower.begin(await sql.catalogue.changeHead!());

  await sql.catalogue.apply({ insert: [buildObjectRecord('follow-1')] });
  // Three callers in one turn: one read, issued once they have all asked.
  const first = [follower.catchUp(), follower.catchUp(), follower.catchUp()];
  expect(held.reads()).toBe(0);
  await nextTurn();
  expect(held.reads()).toBe(1);

  await sql.catalogue.apply({ insert: [buildObjectRecord('follow-2')] });
  // A caller of a later turn does not wait for the first read to end: its own is issued.
  const second = follower.catchUp();
  await nextTurn();
  expect(held.reads()).toBe(2);
  expect(held.held()).toBe(2);

  // Each read hands over at least what was committed when it was issued, in order.
  held.release();
  await Promise.all(first);
  expect(seen.map((e) => e.pid)).toContain('follow-1');
  held.release();
  await second;
  expect(seen.map((e) => e.pid)).toEqual(['follow-1', 'follow-2']);
  expect(new Set(seen.map((e) => e.seq)).size).toBe(seen.length);

  // A commit after both reads: the next caller's read hands over exactly that one.
  await sql.catalogue.apply({ insert: [buildObjectRecord('follow-3')] });
  const third = follower.catchUp();
  await nextTurn();
  held.release();
  await third;
  expect(seen.map((e) => e.pid)).toEqual(['follow-1', 'follow-2', 'follow-3']);
  expect(held.reads()).toBe(3);
});

it('a caller never joins a read issued before it asked', async () => {
  const held = heldFeed();
  const seen: string[] = [];
  const follower = new ChangeFollower(held.feed, async (entries) => {
    seen.push(...entries.map((e) => e.pid));
  });
  await follower.begin(await sql.catalogue.changeHead!());

  // Two callers in one stretch share a read only because it is issued after both asked.
  const a = follower.catchUp();
  const issuedBeforeB = held.reads();
  const b = follower.catchUp();
  expect(issuedBeforeB).toBe(0);
  await nextTurn();
  expect(held.reads()).toBe(1);
  held.release();
  await Promise.all([a, b]);

  // A read issued (and held), then a commit and a caller: that caller waits for a read of its own.
  const early = follower.catchUp();
  await nextTurn();
  await sql.catalogue.apply({ insert: [buildObjectRecord('late-1')] });
  const late = follower.catchUp();
  let done = false;
  void late.then(() => (done = true));
  held.release();
  await early;
  await nextTurn();
  expect(held.reads()).toBe(3);
  expect(done).toBe(false);
  held.release();
  await late;
  expect(seen).toContain('late-1');
});
