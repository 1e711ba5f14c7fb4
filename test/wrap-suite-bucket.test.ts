// The wrap suite (@memberkit/testkit runWrapSuite) over a bucket prefix (S3BucketStorageAdapter)
// on a real S3-protocol server (s3rver on loopback).
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DeleteObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll } from 'vitest';
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
