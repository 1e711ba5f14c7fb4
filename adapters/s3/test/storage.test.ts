// S3-specific cases beyond the shared suite: multipart streaming, range edge cases, the ETag
// rules of native checksums, abort on a server without AbortMultipartUpload, hostile keys and
// prefixes, error kinds. Against s3rver on loopback.
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { ListObjectsV2Command, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { AdapterError } from '@memberkit/types';
import { receiveUpload } from '@memberkit/core';
import { bytesSource, digestStream, expectAdapterError, generatedSource, Digester, patternBytes, readAll } from '@memberkit/testkit';
import { createS3BucketStorage, createS3Storage, md5FromEtag, s3Error, type S3StorageOptions } from '../src/index.js';
import { startS3rver, type S3rverProcess } from './support/s3rver.js';

const MiB = 1024 * 1024;
let server: Promise<S3rverProcess> | undefined;
const s3 = () => (server ??= startS3rver());
afterAll(async () => {
  if (server) await (await server).stop();
});
const freshPrefix = () => `u-${randomBytes(6).toString('hex')}/`;

async function managed(extra: Partial<S3StorageOptions> = {}) {
  const warnings: string[] = [];
  const storage = createS3Storage({ ...(await s3()).connection, bucket: 'bucket', prefix: freshPrefix(), onWarning: (m) => warnings.push(m), ...extra });
  await storage.open();
  return { storage, warnings };
}

async function rawKeys(client: S3Client, prefix: string): Promise<string[]> {
  const r = await client.send(new ListObjectsV2Command({ Bucket: 'bucket', Prefix: prefix }));
  return (r.Contents ?? []).map((o) => o.Key!);
}

describe('S3 managed storage', () => {
  it('streams a 20 MiB object in 5 MiB parts with bounded memory, and reads it back', async () => {
    const { storage } = await managed({ partSize: 5 * MiB, queueSize: 2 });
    const digester = new Digester();
    const pending = await receiveUpload(storage, generatedSource(20 * MiB + 123, 64 * 1024, { digester }));
    const expected = digester.digest();
    expect(pending.size).toBe(20 * MiB + 123);
    expect(pending.checksums).toMatchObject(expected);
    const key = await pending.commit('doi:10.5063/BIG');
    expect(key).toMatch(/^objects\/[0-9a-f]{2}\/[0-9a-f]{32}$/);
    const stat = await storage.stat(key);
    expect(stat?.size).toBe(20 * MiB + 123);
    expect(stat?.checksums, 'managed objects report no native checksum').toBeUndefined();
    const read = await storage.read(key);
    const { size, digests } = await digestStream(read!.stream);
    expect(size).toBe(20 * MiB + 123);
    expect(digests).toEqual(expected);
    // Range across a part boundary.
    const r = await storage.read(key, { range: { start: 5 * MiB - 10, end: 5 * MiB + 9 } });
    expect(r?.length).toBe(20);
    expect((await readAll(r!.stream)).length).toBe(20);
    await storage.close();
  }, 60_000);

  it('an uncommitted write is neither listed nor readable; commit makes it so', async () => {
    const { storage } = await managed();
    const client = (await s3()).client();
    const pending = await receiveUpload(storage, bytesSource(patternBytes(1000)));
    expect(await rawKeys(client, storage.prefix), 'nothing in the bucket listing before commit').toEqual([]);
    const key = await pending.commit('x');
    expect(await rawKeys(client, storage.prefix)).toEqual([storage.prefix + key]);
    expect(await pending.commit('x'), 'commit twice gives the same key').toBe(key);
    await pending.abort(); // a no-op after commit
    expect((await storage.stat(key))?.size).toBe(1000);
  });

  it('abort tolerates a server without AbortMultipartUpload (405) and reports it to onWarning', async () => {
    const { storage, warnings } = await managed();
    const pending = await receiveUpload(storage, bytesSource(patternBytes(1000)));
    await pending.abort();
    await pending.abort();
    expect(warnings.length, 'one warning for the one abort that reached S3').toBe(1);
    expect(warnings[0]).toMatch(/MethodNotAllowed.*lifecycle rule/);
    await expectAdapterError(() => pending.commit('x'), 'invalid', 'commit after abort');
    expect(await rawKeys((await s3()).client(), storage.prefix)).toEqual([]);
  });

  it('a failed write aborts its upload and rethrows the source error', async () => {
    const { storage, warnings } = await managed();
    const boom = new Error('source failed');
    await expect(receiveUpload(storage, generatedSource(12 * MiB, 64 * 1024, { onChunk: (i) => { if (i === 100) throw boom; } }))).rejects.toBe(boom);
    expect(warnings).toHaveLength(1);
  });

  it('refuses keys outside objects/ and hostile keys with invalid', async () => {
    const { storage } = await managed();
    for (const key of ['tmp/x', 'objects/', 'objects', 'objects/../x', 'objects//x', '/objects/x', 'objects/a\u0000b', 'objects/\u0001', `objects/${'x'.repeat(1100)}`, 'objects/\uD800']) {
      await expectAdapterError(() => storage.stat(key), 'invalid', `stat(${JSON.stringify(key)})`);
      await expectAdapterError(() => storage.delete(key), 'invalid', `delete(${JSON.stringify(key)})`);
    }
    // Ordinary S3 key characters are fine (absent, not invalid).
    expect(await storage.stat('objects/a b%2F?#\\x')).toBeUndefined();
  });

  it('list with a prefix outside objects/ yields nothing', async () => {
    const { storage } = await managed();
    await (await receiveUpload(storage, bytesSource(patternBytes(10)))).commit('x');
    const keys = async (prefix?: string) => { const out = []; for await (const e of storage.list(prefix === undefined ? {} : { prefix })) out.push(e.key); return out; };
    expect(await keys()).toHaveLength(1);
    expect(await keys('obj')).toHaveLength(1);
    expect(await keys('tmp/')).toEqual([]);
    expect(await keys('../')).toEqual([]);
  });

  it('validates its options without I/O', () => {
    expect(() => createS3Storage({ bucket: 'b', partSize: 1024 })).toThrow(/partSize/);
    expect(() => createS3Storage({ bucket: 'b', prefix: '../x' })).toThrow(/prefix/);
    expect(() => createS3Storage({ bucket: '' })).toThrow(/bucket/);
    expect(createS3Storage({ bucket: 'b', prefix: 'a/b' }).prefix).toBe('a/b/');
  });

  it('a missing bucket fails open with a clear internal error; an unreachable endpoint is unavailable', async () => {
    const missing = createS3Storage({ ...(await s3()).connection, bucket: 'no-such-bucket' });
    await expectAdapterError(() => missing.open(), 'internal', 'open of a missing bucket');
    const down = createS3Storage({ endpoint: 'http://127.0.0.1:9', region: 'us-east-1', forcePathStyle: true, credentials: { accessKeyId: 'x', secretAccessKey: 'y' }, bucket: 'b', clientConfig: { maxAttempts: 1 } });
    await expectAdapterError(() => down.stat('objects/x'), 'unavailable', 'stat against a closed port');
    await down.close();
  });

  it('maps SDK errors to adapter error kinds', () => {
    const err = (name: string, status: number) => Object.assign(new Error(name), { name, $metadata: { httpStatusCode: status } });
    expect(s3Error(err('SlowDown', 503), 'x', 'b').kind).toBe('unavailable');
    expect(s3Error(err('InternalError', 500), 'x', 'b').kind).toBe('unavailable');
    expect(s3Error(err('AccessDenied', 403), 'x', 'b')).toMatchObject({ kind: 'internal', message: expect.stringMatching(/refused access.*credentials/) });
    expect(s3Error(err('InvalidRange', 416), 'x', 'b').kind).toBe('invalid');
    expect(s3Error(Object.assign(new Error('x'), { code: 'ECONNRESET' }), 'x', 'b').kind).toBe('unavailable');
    expect(s3Error(err('Weird', 400), 'x', 'b').kind).toBe('internal');
    expect(AdapterError.is(s3Error(new AdapterError('invalid', 'y'), 'x', 'b'), 'invalid')).toBe(true);
  });
});

describe('ETag rules (native MD5)', () => {
  it('md5FromEtag: plain single-part ETags only, never multipart, SSE-KMS or SSE-C', () => {
    const md5 = createHash('md5').update('x').digest('hex');
    expect(md5FromEtag(`"${md5}"`)).toBe(md5);
    expect(md5FromEtag(`"${md5.toUpperCase()}"`)).toBe(md5);
    expect(md5FromEtag(`"${md5}-2"`)).toBeUndefined();
    expect(md5FromEtag(`"${md5}"`, { serverSideEncryption: 'AES256' })).toBe(md5);
    expect(md5FromEtag(`"${md5}"`, { serverSideEncryption: 'aws:kms' })).toBeUndefined();
    expect(md5FromEtag(`"${md5}"`, { sseCustomerAlgorithm: 'AES256' })).toBeUndefined();
    expect(md5FromEtag(undefined)).toBeUndefined();
    expect(md5FromEtag('"abc"')).toBeUndefined();
  });

  it('bucket storage reports the ETag MD5 of a single-part object and the Content-Type', async () => {
    const client = (await s3()).client();
    const prefix = freshPrefix();
    await client.send(new PutObjectCommand({ Bucket: 'bucket', Key: `${prefix}a.csv`, Body: 'a,b\n1,2\n', ContentType: 'text/csv' }));
    const storage = createS3BucketStorage({ ...(await s3()).connection, bucket: 'bucket', prefix });
    const stat = await storage.stat('a.csv');
    expect(stat).toMatchObject({ size: 8, mediaType: 'text/csv', checksums: { MD5: createHash('md5').update('a,b\n1,2\n').digest('hex') } });
    await storage.close();
  });

  // Not testable end to end here: s3rver gives every object, multipart ones too, the plain MD5
  // of its bytes as ETag. Real S3 gives multipart objects `<hex>-<parts>`, which md5FromEtag
  // refuses (above); the wrap scanner then reads the bytes (as with SHA-1: test/wrap-suite-bucket.test.ts).
});

describe('S3 bucket storage (wrap mode)', () => {
  it('skips keys that cannot be storage keys, and directory markers silently', async () => {
    const client = (await s3()).client();
    const prefix = freshPrefix();
    for (const k of ['ok/a.txt', 'dir/', 'c/\u0001x', 'w/a b%c#d?e']) await client.send(new PutObjectCommand({ Bucket: 'bucket', Key: prefix + k, Body: k.endsWith('/') ? '' : 'x' }));
    const storage = createS3BucketStorage({ ...(await s3()).connection, bucket: 'bucket', prefix });
    const skipped: string[] = [];
    const keys: string[] = [];
    for await (const e of storage.list({ onSkip: (k) => skipped.push(k) })) keys.push(e.key);
    expect(keys.sort()).toEqual(['ok/a.txt', 'w/a b%c#d?e']);
    expect(skipped).toEqual(['c/\u0001x']);
    await expectAdapterError(() => storage.stat('dir/'), 'invalid', 'a directory marker');
    expect(await readAll((await storage.read('w/a b%c#d?e'))!.stream)).toEqual(Buffer.from('x'));
  });

  it('hidden keys are absent unless includeHidden, the rule of the tree store', async () => {
    const client = (await s3()).client();
    const prefix = freshPrefix();
    const all = ['a.csv', '.DS_Store', '.git/config', 'data/.hidden.csv', 'data/b.csv'];
    for (const k of all) await client.send(new PutObjectCommand({ Bucket: 'bucket', Key: prefix + k, Body: 'x' }));
    const keysOf = async (storage: ReturnType<typeof createS3BucketStorage>) => {
      const keys: string[] = [];
      for await (const e of storage.list()) keys.push(e.key);
      return keys.sort();
    };
    const plain = createS3BucketStorage({ ...(await s3()).connection, bucket: 'bucket', prefix });
    expect(await keysOf(plain)).toEqual(['a.csv', 'data/b.csv']);
    expect(await plain.stat('.git/config')).toBeUndefined();
    expect(await plain.read('data/.hidden.csv')).toBeUndefined();
    const all_ = createS3BucketStorage({ ...(await s3()).connection, bucket: 'bucket', prefix, includeHidden: true });
    expect(await keysOf(all_)).toEqual([...all].sort());
    expect(await all_.stat('.git/config')).toMatchObject({ size: 1 });
    await plain.close();
    await all_.close();
  });

  it('has no write or delete', () => {
    const storage = createS3BucketStorage({ bucket: 'b' }) as unknown as Record<string, unknown>;
    expect(storage.openTemp).toBeUndefined();
    expect(storage.delete).toBeUndefined();
  });
});
