// The wrap suite (@memberkit/testkit runWrapSuite) over a bucket prefix (S3BucketStorageAdapter)
// on a real S3-protocol server (s3rver on loopback).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createS3BucketStorage } from '@memberkit/adapter-s3';
import { runWrapSuite, type WrapRoot } from '@memberkit/testkit';
import { startS3rver, type S3rverProcess } from '../adapters/s3/test/support/s3rver.js';
import { startWrapNode } from './helpers/wrap-node.js';

let s3: S3rverProcess;
beforeAll(async () => {
  s3 = await startS3rver();
}, 30_000);
afterAll(async () => {
  await s3?.stop();
});

const roots = new WeakMap<WrapRoot, { dir: string; prefix: string }>();
let n = 0;

runWrapSuite('bucket', {
  async root() {
    const dir = await mkdtemp(join(tmpdir(), 'mk-wrap-suite-s3-'));
    const prefix = `wrapped-${++n}/`;
    const client = s3.client();
    const root: WrapRoot = {
      async put(key, bytes) {
        await client.send(new PutObjectCommand({ Bucket: 'bucket', Key: prefix + key, Body: bytes }));
      },
      async remove(key) {
        await client.send(new DeleteObjectCommand({ Bucket: 'bucket', Key: prefix + key }));
      },
      async close() {
        client.destroy();
        await rm(dir, { recursive: true, force: true });
      },
    };
    roots.set(root, { dir, prefix });
    return root;
  },
  async node(root) {
    const { dir, prefix } = roots.get(root)!;
    const storage = createS3BucketStorage({ bucket: 'bucket', prefix, ...s3.connection });
    const node = await startWrapNode(dir, storage, storage.root);
    return { ...node, close: async () => { await node.close(); } };
  },
});

describe('bucket wrap without a checksumAlgorithm', () => {
  it('publishes the MD5 of the ETag, as the bucket scanner before the store layer did (existing scan state stays valid)', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'mk-wrap-md5-'));
    const prefix = `md5-default-${Date.now()}/`;
    const client = s3.client();
    try {
      const bytes = Buffer.from('site,temp\nA,12.5\n');
      await client.send(new PutObjectCommand({ Bucket: 'bucket', Key: `${prefix}data.csv`, Body: bytes }));
      const storage = createS3BucketStorage({ bucket: 'bucket', prefix, ...s3.connection });
      const node = await startWrapNode(dir, storage, storage.root);
      try {
        await node.scan();
        const record = await node.get('data.csv');
        expect(record?.sysmeta.checksum).toEqual({ algorithm: 'MD5', value: createHash('md5').update(bytes).digest('hex') });
      } finally {
        await node.close();
      }
    } finally {
      client.destroy();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
