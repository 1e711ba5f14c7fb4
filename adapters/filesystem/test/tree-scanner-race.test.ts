// Two wrap scans of one tree at once, each with its own connection to one SQLite file (as two
// node processes sharing a catalogue have), while files change and an administrator makes
// objects private: a scan that loses a compare-and-set re-reads the record and merges; nothing
// is removed, nothing is re-added with the default access, private stays private.
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { AdapterError, type AccessPolicy, type MetadataAdapter } from '@memberkit/types';
import { openSqliteStore, type SqliteStore } from '../src/sqlite/index.js';
import { TreeScanner, type ScanReport } from '../src/tree-scanner.js';
import { TreeStorageAdapter } from '../src/tree-storage.js';

const PUBLIC: AccessPolicy = { allow: [{ subject: ['public'], permission: ['read'] }] };
const PRIVATE: AccessPolicy = { allow: [{ subject: ['CN=curator'], permission: ['write'] }] };
const FILES = 120;

let base: string;
let root: string;
let stores: SqliteStore[];

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'mk-scan-race-'));
  root = join(base, 'tree');
  await mkdir(root);
  stores = [];
});
afterEach(async () => {
  for (const s of stores) await s.close();
  await rm(base, { recursive: true, force: true });
});

async function open(): Promise<SqliteStore> {
  const store = openSqliteStore({ file: join(base, 'node.sqlite') });
  await store.open();
  stores.push(store);
  return store;
}

/**
 * The store's catalogue as another process sees it: each read takes a turn of the event loop,
 * as a query to a database does, so the administrator's updates land between a scan's read of
 * a record and its write (in one process with a synchronous SQLite driver they never would).
 */
function withLatency(catalogue: MetadataAdapter): MetadataAdapter {
  return new Proxy(catalogue, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (typeof value !== 'function') return value;
      if (prop !== 'get') return (value as (...args: unknown[]) => unknown).bind(target);
      return async (pid: string) => {
        await new Promise((r) => setTimeout(r, 1));
        return (value as MetadataAdapter['get']).call(target, pid);
      };
    },
  });
}

async function scannerOn(store: SqliteStore, logged: string[] = []): Promise<TreeScanner> {
  const tree = new TreeStorageAdapter({ root });
  await tree.open();
  return new TreeScanner({
    storage: tree, catalogue: withLatency(store.catalogue), stateDatabase: store.database, nodeId: 'urn:node:TEST',
    rightsHolder: 'CN=owner', accessPolicy: PUBLIC, batchSize: 7, concurrency: 4, flushIntervalMs: 0,
    logger: { info: (_fields, message) => logged.push(message) },
  });
}

const name = (i: number) => `d${i % 5}/f${i}.dat`;
const sha1 = (s: string) => createHash('sha1').update(s).digest('hex');

/** What updateSystemMetadata does: compare-and-set on serialVersion, retried when it loses. */
async function makePrivate(store: SqliteStore, pid: string): Promise<void> {
  for (;;) {
    const r = await store.catalogue.get(pid);
    if (r === undefined) throw new Error(`${pid} vanished from the catalogue while its file is there`);
    try {
      await store.catalogue.apply!({
        replace: [{ pid, expectedSerialVersion: r.sysmeta.serialVersion, sysmeta: { ...r.sysmeta, accessPolicy: PRIVATE, serialVersion: r.sysmeta.serialVersion + 1, dateSysMetadataModified: new Date() } }],
      });
      return;
    } catch (e) {
      if (!AdapterError.is(e, 'conflict')) throw e;
    }
  }
}

it('two concurrent scans while files change and objects are made private: nothing lost, nothing republished', async () => {
  for (let i = 0; i < FILES; i++) {
    await mkdir(join(root, `d${i % 5}`), { recursive: true });
    await writeFile(join(root, name(i)), `v1 ${i}`);
  }
  const admin = await open();
  const a = await scannerOn(await open());
  const b = await scannerOn(await open());
  expect((await a.scan()).added).toBe(FILES);
  const uploaded = new Map<string, number>();
  for (let i = 0; i < FILES; i++) uploaded.set(name(i), (await admin.catalogue.get(name(i)))!.sysmeta.dateUploaded.getTime());

  const reports: ScanReport[] = [];
  for (let round = 0; round < 3; round++) {
    // Every file changes; a third of the objects are made private while both scans run.
    for (let i = 0; i < FILES; i++) await writeFile(join(root, name(i)), `v${round + 2} ${i} ${'x'.repeat(round)}`);
    // The second scan starts once the first has recorded a batch: as two processes do, they
    // number their scans differently.
    let started!: () => void;
    const firstBatch = new Promise<void>((r) => (started = r));
    const ra = a.scan({ onProgress: () => started() });
    await firstBatch;
    const rb = b.scan();
    for (let i = round; i < FILES; i += 3) {
      await makePrivate(admin, name(i));
      await new Promise((r) => setTimeout(r, 2));
    }
    reports.push(await ra, await rb);
  }
  // One more pair of scans settles anything a lost race left to the next scan.
  const [fa, fb] = await Promise.all([a.scan(), b.scan()]);
  reports.push(fa!, fb!);

  for (const r of reports) expect(r.removed).toBe(0);
  expect(reports.reduce((n, r) => n + r.changed, 0)).toBeGreaterThanOrEqual(3 * FILES);
  for (let i = 0; i < FILES; i++) {
    const r = await admin.catalogue.get(name(i));
    expect(r, name(i)).toBeDefined();
    // Not re-added: the same record, its upload date kept, the latest bytes' checksum.
    expect(r!.sysmeta.dateUploaded.getTime()).toBe(uploaded.get(name(i)));
    expect(r!.sysmeta.checksum.value).toBe(sha1(`v4 ${i} xx`));
    expect(r!.sysmeta.size).toBe(`v4 ${i} xx`.length);
    expect(r!.sysmeta.accessPolicy, name(i)).toEqual(PRIVATE);
  }
  expect((await admin.catalogue.list({ start: 0, count: 0 })).total).toBe(FILES);
}, 60_000);

it('removes a file only when it is really gone, and logs what a periodic scan changed', async () => {
  for (let i = 0; i < 10; i++) {
    await mkdir(join(root, `d${i % 5}`), { recursive: true });
    await writeFile(join(root, name(i)), `v1 ${i}`);
  }
  const admin = await open();
  const logged: string[] = [];
  const a = await scannerOn(await open(), logged);
  const b = await scannerOn(await open());
  await a.scan();
  await unlink(join(root, name(3)));
  await writeFile(join(root, name(4)), 'changed');
  await makePrivate(admin, name(4));
  const [ra, rb] = await Promise.all([a.scan(), b.scan()]);
  expect(ra!.removed + rb!.removed).toBe(1);
  expect(await admin.catalogue.get(name(3))).toBeUndefined();
  const four = (await admin.catalogue.get(name(4)))!;
  expect(four.sysmeta.checksum.value).toBe(sha1('changed'));
  expect(four.sysmeta.accessPolicy).toEqual(PRIVATE);
  expect((await admin.catalogue.list({ start: 0, count: 0 })).total).toBe(9);

  await writeFile(join(root, 'new.dat'), 'new');
  const watcher = a.watch({ intervalMs: 10_000 });
  for (let t = 0; t < 200 && logged.length === 0; t++) await new Promise((r) => setTimeout(r, 25));
  await watcher.stop();
  expect(logged[0]).toMatch(/^wrap rescan of .*: 1 added, 0 changed, 0 removed, 9 unchanged, 0 skipped$/);
}, 30_000);
