// The shared StorageAdapter conformance suite (@memberkit/testkit) against the S3 adapter's
// stores, on a real S3-protocol server (s3rver) on loopback: managed storage and read-only
// bucket storage (wrap mode). Each test gets its own prefix in one bucket. Adapter-specific
// cases live in storage.test.ts; wrap scans of a bucket in test/wrap-suite-bucket.test.ts.
import { randomBytes } from 'node:crypto';
import { afterAll } from 'vitest';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import type { StorageAdapter } from '@memberkit/types';
import { runStorageAdapterSuite } from '@memberkit/testkit';
import { createS3BucketStorage, createS3Storage, type S3BucketStorageAdapter } from '../src/index.js';
import { startS3rver, type S3rverProcess } from './support/s3rver.js';

let server: Promise<S3rverProcess> | undefined;
const s3 = () => (server ??= startS3rver());
afterAll(async () => {
  if (server) await (await server).stop();
});

const freshPrefix = () => `t-${randomBytes(6).toString('hex')}/`;
/** s3rver does not implement AbortMultipartUpload (405); those warnings are expected here. */
const ignoreWarnings = () => undefined;

runStorageAdapterSuite('s3 managed storage', {
  async create() {
    const { connection } = await s3();
    const storage = createS3Storage({ ...connection, bucket: 'bucket', prefix: freshPrefix(), partSize: 5 * 1024 * 1024, onWarning: ignoreWarnings });
    await storage.open();
    return storage;
  },
  async destroy(storage) {
    await storage.close?.();
  },
});

runStorageAdapterSuite('s3 bucket storage (wrap mode)', {
  async create() {
    const { connection } = await s3();
    const storage = createS3BucketStorage({ ...connection, bucket: 'bucket', prefix: freshPrefix() });
    await storage.open();
    return storage;
  },
  async destroy(storage) {
    await storage.close?.();
  },
  // Wrap mode: the archive's objects are put in place behind the adapter (PutObject, one
  // part); the key is the S3 key relative to the store's prefix.
  async seed(storage: StorageAdapter, name: string, bytes: Uint8Array) {
    const s = storage as S3BucketStorageAdapter;
    await (await s3()).client().send(new PutObjectCommand({ Bucket: s.bucket, Key: s.prefix + name, Body: bytes }));
    return name;
  },
});
