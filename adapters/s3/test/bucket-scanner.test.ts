// S3BucketScanner against s3rver on loopback and the SQLite catalogue: add, change and delete
// keys then rescan; checksums from the ETag or computed once and cached; paging through a
// listing with a small page size; the empty-listing guard.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DeleteObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { openSqliteStore, type SqliteStore } from '@memberkit/adapter-filesystem';
import type { StorageReadResult } from '@memberkit/types';
import { expectAdapterError } from '@memberkit/testkit';
import { createS3BucketStorage, S3BucketScanner, S3BucketStorageAdapter, pidFromKey, type S3BucketScannerOptions, type S3ReadOptions } from '../src/index.js';
import { startS3rver, type S3rverProcess } from './support/s3rver.js';

let server: Promise<S3rverProcess> | undefined;
const s3 = () => (server ??= startS3rver());
afterAll(async () => {
  if (server) await (await server).stop();
});

/** Counts the reads the scanner makes (to prove caching and the ETag shortcut). */
class CountingBucket extends S3BucketStorageAdapter {
  reads = 0;
  override async read(key: string, options?: S3ReadOptions): Promise<StorageReadResult | undefined> {
    this.reads++;
    return super.read(key, options);
  }
}

let dir: string;
let store: SqliteStore;
let client: S3Client;
let prefix: string;
let bucket: CountingBucket;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mk-s3scan-'));
  store = openSqliteStore({ file: join(dir, 'node.sqlite') });
  await store.open();
  client = (await s3()).client();
  prefix = `scan-${randomBytes(6).toString('hex')}/`;
  bucket = new CountingBucket({ ...(await s3()).connection, bucket: 'bucket', prefix, listPageSize: 7 });
  await bucket.open();
});
afterEach(async () => {
  await bucket.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

function scanner(extra: Partial<S3BucketScannerOptions> = {}): S3BucketScanner {
  return new S3BucketScanner({
    storage: bucket,
    catalogue: store.catalogue,
    stateDatabase: store.database,
    nodeId: 'urn:node:TEST',
    rightsHolder: 'CN=owner,DC=test',
    accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] },
    ...extra,
  });
}

const put = (key: string, body: string | Buffer, contentType?: string) =>
  client.send(new PutObjectCommand({ Bucket: 'bucket', Key: prefix + key, Body: body, ...(contentType ? { ContentType: contentType } : {}) }));
const del = (key: string) => client.send(new DeleteObjectCommand({ Bucket: 'bucket', Key: prefix + key }));
const md5 = (d: string) => createHash('md5').update(d).digest('hex');
const sha1 = (d: string) => createHash('sha1').update(d).digest('hex');

describe('S3BucketScanner', () => {
  it('adds, changes and removes objects as keys come, change and go (MD5 from the ETag, no reads)', async () => {
    await put('data/a.csv', 'a,b\n');
    await put('data/b c%.txt', 'hello');
    await put('raw/blob', '{"x":1}', 'application/json');
    const s = scanner();
    const first = await s.scan();
    expect(first).toMatchObject({ added: 3, changed: 0, removed: 0, unchanged: 0, fromEtag: 3, skipped: [] });
    // Single-part ETags are MD5s: no object read to hash; only the key without an extension has its first KiB read for its format.
    expect(bucket.reads, 'single-part ETags are MD5s: no byte read but for identification').toBe(1);

    const a = await store.catalogue.get('data/a.csv');
    expect(a?.storageKey).toBe('data/a.csv');
    expect(a?.sysmeta).toMatchObject({ formatId: 'text/csv', size: 4, checksum: { algorithm: 'MD5', value: md5('a,b\n') }, serialVersion: 1, originMemberNode: 'urn:node:TEST' });
    expect(await store.catalogue.get(pidFromKey('data/b c%.txt')), 'whitespace and % percent-encoded').toBeDefined();
    expect(pidFromKey('data/b c%.txt')).toBe('data/b%20c%25.txt');
    expect((await store.catalogue.get('raw/blob'))?.sysmeta.formatId, 'format from Content-Type when the extension says nothing').toBe('application/json');

    expect(await s.scan()).toMatchObject({ added: 0, changed: 0, removed: 0, unchanged: 3 });

    await put('data/a.csv', 'a,b\n1,2\n');
    await del('raw/blob');
    await put('data/new.csv', 'n\n');
    const third = await s.scan();
    expect(third).toMatchObject({ added: 1, changed: 1, removed: 1, unchanged: 1 });
    const changed = await store.catalogue.get('data/a.csv');
    expect(changed?.sysmeta).toMatchObject({ size: 8, serialVersion: 2, checksum: { value: md5('a,b\n1,2\n') } });
    expect(changed!.sysmeta.dateSysMetadataModified.getTime()).toBeGreaterThan(a!.sysmeta.dateSysMetadataModified.getTime());
    expect(await store.catalogue.get('raw/blob')).toBeUndefined();
  });

  it('computes other algorithms once by reading, then serves them from the cache', async () => {
    await put('x.txt', 'abc');
    await put('y.txt', 'def');
    const s = scanner({ checksumAlgorithm: 'SHA-1' });
    expect(await s.scan()).toMatchObject({ added: 2, fromEtag: 0 });
    expect(bucket.reads).toBe(2);
    expect((await store.catalogue.get('x.txt'))?.sysmeta.checksum).toEqual({ algorithm: 'SHA-1', value: sha1('abc') });
    expect(await s.scan()).toMatchObject({ unchanged: 2 });
    expect(bucket.reads, 'unchanged (key, size, ETag): not read again').toBe(2);
  });

  it('pages through 3,000 keys, 100 per page, applying batches as it goes', async () => {
    const keys = Array.from({ length: 3000 }, (_, i) => `many/${String(i).padStart(5, '0')}.txt`);
    for (let i = 0; i < keys.length; i += 100) await Promise.all(keys.slice(i, i + 100).map((k) => put(k, k)));
    // 30 ListObjectsV2 pages (s3rver re-reads its directory for every page, so smaller pages
    // only make this test slower; the other tests here page 7 keys at a time).
    const paged = new CountingBucket({ ...(await s3()).connection, bucket: 'bucket', prefix, listPageSize: 100 });
    const s = scanner({ storage: paged, batchSize: 250 });
    const progress: number[] = [];
    const report = await s.scan({ onProgress: (r) => progress.push(r.added) });
    expect(report.added).toBe(3000);
    expect(progress.length, 'batches reach the catalogue while the listing goes on').toBeGreaterThanOrEqual(12);
    expect(progress[0]).toBe(250);
    expect((await store.catalogue.list({ start: 0, count: 0 })).total).toBe(3000);
    expect(paged.reads, 'every checksum came from an ETag').toBe(0);
    expect(await s.scan()).toMatchObject({ unchanged: 3000, added: 0, removed: 0 });
    await paged.close();
  }, 180_000);

  it('refuses to empty the catalogue when the listing is empty, unless allowed', async () => {
    await put('only.txt', 'x');
    await scanner().scan();
    await del('only.txt');
    await expectAdapterError(() => scanner().scan(), 'unavailable', 'scan of an emptied bucket');
    expect(await store.catalogue.get('only.txt')).toBeDefined();
    expect(await scanner({ allowEmptyBucket: true }).scan()).toMatchObject({ removed: 1 });
  });

  it('skips keys whose PID breaks the identifier rules, and keys taken by other records', async () => {
    await put('ok.txt', 'x');
    await put('bad.txt', 'y');
    const report = await scanner({ pidRule: (k) => (k === 'bad.txt' ? ' ' : k) }).scan();
    expect(report.added).toBe(1);
    expect(report.skipped.map((s) => s.key)).toEqual(['bad.txt']);
  });
});

it('createS3BucketStorage makes a read-only store', () => {
  expect(createS3BucketStorage({ bucket: 'b' }).capabilities).toMatchObject({ write: false, delete: false, list: true, range: true, nativeChecksums: ['MD5'] });
});
