// Datasets from folders over a wrapped bucket (s3rver on loopback, the SQL catalogue on SQLite,
// the core WrapScanner): a key
// "folder" with one EML document and CSV objects gets a generated resource map served exactly
// by DatasetMapStorage; a new CSV publishes the next version obsoleting the first.
import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { createSqlCatalogue, SqlScanState, type SqlCatalogue } from '@memberkit/adapter-sql';
import { WrapScanner } from '@memberkit/core';
import { DatasetMapStorage, readResourceMap } from '@memberkit/science';
import { S3BucketStorageAdapter } from '../src/index.js';
import { startS3rver, type S3rverProcess } from './support/s3rver.js';

const EML = `<?xml version="1.0"?><eml:eml xmlns:eml="https://eml.ecoinformatics.org/eml-2.2.0" packageId="p" system="s"><dataset><title>Kelp</title></dataset></eml:eml>`;

let server: Promise<S3rverProcess> | undefined;
const s3 = () => (server ??= startS3rver());
afterAll(async () => {
  if (server) await (await server).stop();
});

let dir: string;
let store: SqlCatalogue;
let state: SqlScanState;
let client: S3Client;
let prefix: string;
let bucket: S3BucketStorageAdapter;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mk-s3datasets-'));
  store = createSqlCatalogue({ dialect: 'sqlite', connection: join(dir, 'node.sqlite') });
  await store.open();
  state = new SqlScanState(store.store);
  client = (await s3()).client();
  prefix = `datasets-${randomBytes(6).toString('hex')}/`;
  bucket = new S3BucketStorageAdapter({ ...(await s3()).connection, bucket: 'bucket', prefix });
  await bucket.open();
});
afterEach(async () => {
  await bucket.close();
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

const put = (key: string, body: string) => client.send(new PutObjectCommand({ Bucket: 'bucket', Key: prefix + key, Body: body }));

describe('WrapScanner over a bucket with datasets "folders"', () => {
  it('publishes a map per dataset folder, served exactly, and versions it when the folder changes', async () => {
    await put('kelp/eml.xml', EML);
    await put('kelp/a.csv', 'a\n1\n');
    await put('loose/b.csv', 'b\n');
    const storage = new DatasetMapStorage(bucket, () => state);
    const scanner = new WrapScanner({
      storage: bucket, root: bucket.root, catalogue: store.catalogue, state, nodeId: 'urn:node:TEST', rightsHolder: 'CN=owner', datasets: 'folders',
      // MD5, as S3 wrap recommends: the single-part ETags are the checksums, no object is read.
      checksumAlgorithm: 'MD5', flushIntervalMs: 0,
      // The catalogue itself (this file tests the maps; the wrap suite tests events and notices).
      writer: { commit: (c) => store.catalogue.apply(c.change) },
    });
    const first = await scanner.scan();
    expect(first.added).toBe(4); // three objects and one map
    expect(first.fromNative).toBe(3);
    const v1 = (await store.catalogue.get('kelp/.dataset-map.v1'))!;
    const read = await storage.read(v1.storageKey);
    const chunks: Buffer[] = [];
    for await (const c of read!.stream) chunks.push(c as Buffer);
    const bytes = Buffer.concat(chunks);
    expect(createHash('md5').update(bytes).digest('hex')).toBe(v1.sysmeta.checksum.value);
    expect(bytes.length).toBe(v1.sysmeta.size);
    expect((await readResourceMap(bytes))?.documents).toEqual([{ metadata: 'kelp/eml.xml', data: 'kelp/a.csv' }]);
    expect(await store.catalogue.get('loose/.dataset-map.v1')).toBeUndefined();
    // A bucket key that merely starts like a generated map's is still the bucket's.
    await put('\\dataset-map\\real', 'real');
    const real = await storage.read('\\dataset-map\\real');
    const got: Buffer[] = [];
    for await (const c of real!.stream) got.push(c as Buffer);
    expect(Buffer.concat(got).toString()).toBe('real');

    await put('kelp/c.csv', 'c\n');
    await scanner.scan();
    const v2 = (await store.catalogue.get('kelp/.dataset-map.v2'))!;
    expect(v2.sysmeta).toMatchObject({ obsoletes: 'kelp/.dataset-map.v1', seriesId: 'kelp/.dataset-map' });
    expect((await store.catalogue.get('kelp/.dataset-map.v1'))?.sysmeta.obsoletedBy).toBe('kelp/.dataset-map.v2');
  }, 60_000);
});
