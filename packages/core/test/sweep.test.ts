// The sweep (issue #19 item 8): bytes committed to managed storage whose catalogue commit never
// happened (a process killed between the two) are removed; bytes a catalogue row references,
// and bytes of writes still within the grace period, are kept. It also prunes the change feed to
// its retention, keeping the newest entry. Real adapters: the SQL store on SQLite, managed files.
import { mkdtempSync, rmSync, utimesSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { FilesystemStorageAdapter } from '@memberkit/adapter-filesystem';
import { createSqlCatalogue, type SqlCatalogue } from '@memberkit/adapter-sql';
import { buildObjectRecord } from '@memberkit/testkit';
import { createLogger, receiveUpload, StrandedBytesSweep } from '@memberkit/core';

const dir = mkdtempSync(join(tmpdir(), 'mk-sweep-'));
const logger = createLogger({ level: 'silent' });
let sql: SqlCatalogue;
let storage: FilesystemStorageAdapter;

beforeAll(async () => {
  sql = createSqlCatalogue({ dialect: 'sqlite', connection: join(dir, 'catalogue.db') });
  storage = new FilesystemStorageAdapter({ root: join(dir, 'store') });
  await sql.open();
  await storage.open();
});
afterAll(async () => {
  await storage?.close();
  await sql?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function* bytes(text: string): AsyncIterable<Uint8Array> {
  yield Buffer.from(text);
}

/** The core's write path up to the catalogue: intent, upload into temp, commit; the catalogue commit only when asked. */
async function write(pid: string, catalogued: boolean): Promise<string> {
  const intent = await sql.catalogue.intend(pid);
  const pending = await receiveUpload(storage, bytes(pid));
  const key = await pending.commit(pid);
  if (catalogued) await sql.catalogue.apply({ insert: [buildObjectRecord(pid, { storageKey: key })], intents: [intent] });
  return key;
}

it('removes bytes whose intent was never settled, keeps catalogued and recent ones', async () => {
  const kept = await write('kept', true);
  const stranded = await write('stranded', false);
  const sweep = new StrandedBytesSweep({ metadata: sql.catalogue, storage, logger }, { graceMs: 60_000 });
  expect(sweep.applicable).toBe(true);
  // Within the grace period: a write may still be committing.
  expect(await sweep.sweep()).toBe(0);
  expect(await storage.stat(stranded)).toBeDefined();
  // Later: the stranded bytes go, the catalogued ones stay, the intent is dropped.
  const later = Date.now() + 120_000;
  expect(await sweep.sweep(later)).toBe(1);
  expect(await storage.stat(stranded)).toBeUndefined();
  expect(await storage.stat(kept)).toBeDefined();
  expect((await storage.read(kept))?.size).toBe('kept'.length);
  expect(await sql.catalogue.staleIntents(new Date(later), 10)).toEqual([]);
  // A settled write left no intent: a second pass has nothing to remove.
  expect(await sweep.sweep(later)).toBe(0);
});

it('keeps catalogued bytes committed beside a stale intent, and drops the intent', async () => {
  const sweep = new StrandedBytesSweep({ metadata: sql.catalogue, storage, logger }, { graceMs: 1_000, slackMs: 1_000 });
  // A write that died before committing bytes: its intent is stale, the bytes near it are another write's.
  await sql.catalogue.intend('died-before-commit');
  const beside = await write('beside', true);
  expect(await sweep.sweep(Date.now() + 5_000)).toBe(0);
  expect(await storage.stat(beside)).toBeDefined();
  expect(await sql.catalogue.staleIntents(new Date(Date.now() + 5_000), 10)).toEqual([]);
});

it('keeps an intent whose candidate bytes are still too young to judge, and removes them at a later pass', async () => {
  // Grace shorter than the slack: bytes committed after a stale intent may be a write in progress.
  const sweep = new StrandedBytesSweep({ metadata: sql.catalogue, storage, logger }, { graceMs: 1_000, slackMs: 60_000 });
  const key = await write('young-stranded', false);
  const intents = () => sql.catalogue.staleIntents(new Date(Date.now() + 60_000), 10);
  expect((await intents()).map((i) => i.name)).toEqual(['young-stranded']);
  // Bytes committed 5 s after the intent (a slow rename): at intent + 2 s the intent is past its
  // grace, the bytes are not: neither goes (the old sweep dropped the intent and kept the bytes for good).
  const intentAt = (await intents())[0]!.created.getTime();
  const at = new Date(intentAt + 5_000);
  utimesSync(join(dir, 'store', key), at, at);
  expect(await sweep.sweep(intentAt + 2_000)).toBe(0);
  expect(await storage.stat(key)).toBeDefined();
  expect((await intents()).map((i) => i.name)).toEqual(['young-stranded']);
  // Both past the grace: the bytes go with the intent.
  expect(await sweep.sweep(intentAt + 7_000)).toBe(1);
  expect(await storage.stat(key)).toBeUndefined();
  expect(await intents()).toEqual([]);
});

it('prunes the change feed past its retention, keeping the newest entry', async () => {
  for (let i = 0; i < 5; i++) await write(`feed-${i}`, true);
  const head = await sql.catalogue.changeHead();
  expect(head).toBeGreaterThanOrEqual(5);
  // Within retention and under the cap: nothing goes.
  await new StrandedBytesSweep({ metadata: sql.catalogue, storage, logger }, { feedMaxEntries: 1_000_000 }).sweep();
  expect((await sql.catalogue.changesSince(0, 1000)).entries.length).toBe(head);
  // At most 3 entries: the oldest go, positions stay dense after the gap.
  await new StrandedBytesSweep({ metadata: sql.catalogue, storage, logger }, { feedMaxEntries: 3 }).sweep();
  let page = await sql.catalogue.changesSince(0, 1000);
  expect(page.entries.map((e) => e.seq)).toEqual([head - 2, head - 1, head]);
  // Everything older than the retention goes, except the newest: a reader behind sees a gap, never an empty page.
  await new StrandedBytesSweep({ metadata: sql.catalogue, storage, logger }, { feedRetentionMs: 0 }).sweep(Date.now() + 1_000);
  page = await sql.catalogue.changesSince(0, 1000);
  expect(page.entries.map((e) => e.seq)).toEqual([head]);
  expect(page.head).toBe(head);
});
