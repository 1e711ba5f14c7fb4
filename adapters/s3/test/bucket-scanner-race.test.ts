// Two wrap scans of one bucket at once on s3rver, each with its own connection to one SQLite
// file (as two node processes sharing a catalogue have), while objects change and an
// administrator makes records private: a scan that loses a compare-and-set re-reads the record
// and merges; nothing is removed, nothing is re-added with the default access.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, expect, it } from 'vitest';
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { openSqliteStore, type SqliteStore } from '@memberkit/adapter-filesystem';
import { AdapterError, type AccessPolicy, type MetadataAdapter } from '@memberkit/types';
import { S3BucketScanner, S3BucketStorageAdapter, type S3ScanReport } from '../src/index.js';
import { startS3rver, type S3rverProcess } from './support/s3rver.js';

const PUBLIC: AccessPolicy = { allow: [{ subject: ['public'], permission: ['read'] }] };
const PRIVATE: AccessPolicy = { allow: [{ subject: ['CN=curator'], permission: ['write'] }] };
const KEYS = 40;

let server: Promise<S3rverProcess> | undefined;
const s3 = () => (server ??= startS3rver());
afterAll(async () => {
  if (server) await (await server).stop();
});

let dir: string;
let client: S3Client;
let prefix: string;
let stores: SqliteStore[];
let buckets: S3BucketStorageAdapter[];

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mk-s3race-'));
  client = (await s3()).client();
  prefix = `race-${randomBytes(6).toString('hex')}/`;
  stores = [];
  buckets = [];
});
afterEach(async () => {
  for (const b of buckets) await b.close();
  for (const s of stores) await s.close();
  await rm(dir, { recursive: true, force: true });
});

async function open(): Promise<SqliteStore> {
  const store = openSqliteStore({ file: join(dir, 'node.sqlite') });
  await store.open();
  stores.push(store);
  return store;
}

/** Reads of the catalogue take a turn of the event loop, as a query from another process does. */
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

async function scannerOn(store: SqliteStore, logged: string[] = []): Promise<S3BucketScanner> {
  const bucket = new S3BucketStorageAdapter({ ...(await s3()).connection, bucket: 'bucket', prefix, listPageSize: 9 });
  await bucket.open();
  buckets.push(bucket);
  return new S3BucketScanner({
    storage: bucket, catalogue: withLatency(store.catalogue), stateDatabase: store.database, nodeId: 'urn:node:TEST',
    rightsHolder: 'CN=owner', accessPolicy: PUBLIC, batchSize: 6, concurrency: 4,
    logger: { info: (_fields, message) => logged.push(message) },
  });
}

const put = (key: string, body: string) => client.send(new PutObjectCommand({ Bucket: 'bucket', Key: prefix + key, Body: body }));
const del = (key: string) => client.send(new DeleteObjectCommand({ Bucket: 'bucket', Key: prefix + key }));
const md5 = (d: string) => createHash('md5').update(d).digest('hex');
const key = (i: number) => `k${i % 4}/o${i}.dat`;

async function makePrivate(store: SqliteStore, pid: string): Promise<void> {
  for (;;) {
    const r = await store.catalogue.get(pid);
    if (r === undefined) throw new Error(`${pid} vanished from the catalogue while its object is there`);
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

it('two concurrent bucket scans while objects change and are made private: nothing lost, nothing republished', async () => {
  for (let i = 0; i < KEYS; i++) await put(key(i), `v1 ${i}`);
  const admin = await open();
  const a = await scannerOn(await open());
  const b = await scannerOn(await open());
  expect((await a.scan()).added).toBe(KEYS);
  const uploaded = new Map<string, number>();
  for (let i = 0; i < KEYS; i++) uploaded.set(key(i), (await admin.catalogue.get(key(i)))!.sysmeta.dateUploaded.getTime());

  const reports: S3ScanReport[] = [];
  for (let round = 0; round < 2; round++) {
    for (let i = 0; i < KEYS; i++) await put(key(i), `v${round + 2} ${i}`);
    let started!: () => void;
    const firstBatch = new Promise<void>((r) => (started = r));
    const ra = a.scan({ onProgress: () => started() });
    await firstBatch;
    const rb = b.scan();
    for (let i = round; i < KEYS; i += 2) {
      await makePrivate(admin, key(i));
      await new Promise((r) => setTimeout(r, 2));
    }
    reports.push(await ra, await rb);
  }
  const [fa, fb] = await Promise.all([a.scan(), b.scan()]);
  reports.push(fa!, fb!);

  for (const r of reports) expect(r.removed).toBe(0);
  for (let i = 0; i < KEYS; i++) {
    const r = await admin.catalogue.get(key(i));
    expect(r, key(i)).toBeDefined();
    expect(r!.sysmeta.dateUploaded.getTime(), 'not re-added').toBe(uploaded.get(key(i)));
    expect(r!.sysmeta.checksum.value).toBe(md5(`v3 ${i}`));
    expect(r!.sysmeta.accessPolicy, key(i)).toEqual(PRIVATE);
  }
  expect((await admin.catalogue.list({ start: 0, count: 0 })).total).toBe(KEYS);
}, 90_000);

it('removes a key only when it is really gone, and logs what a periodic scan changed', async () => {
  for (let i = 0; i < 8; i++) await put(key(i), `v1 ${i}`);
  const admin = await open();
  const logged: string[] = [];
  const a = await scannerOn(await open(), logged);
  const b = await scannerOn(await open());
  await a.scan();
  await del(key(3));
  await put(key(4), 'changed');
  await makePrivate(admin, key(4));
  const [ra, rb] = await Promise.all([a.scan(), b.scan()]);
  expect(ra!.removed + rb!.removed).toBe(1);
  expect(await admin.catalogue.get(key(3))).toBeUndefined();
  expect((await admin.catalogue.get(key(4)))!.sysmeta).toMatchObject({ checksum: { value: md5('changed') }, accessPolicy: PRIVATE });

  await put('new.dat', 'new');
  const watcher = a.watch({ intervalMs: 10_000 });
  for (let t = 0; t < 200 && logged.length === 0; t++) await new Promise((r) => setTimeout(r, 25));
  await watcher.stop();
  expect(logged[0]).toMatch(/^wrap rescan of s3:\/\/bucket\/race-\w+\/: 1 added, 0 changed, 0 removed, 7 unchanged, 0 skipped$/);
}, 60_000);
