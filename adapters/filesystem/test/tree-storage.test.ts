import { mkdir, mkdtemp, rm, symlink, writeFile } from 'node:fs/promises';
import { createHash } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AdapterError, type StorageAdapter } from '@memberkit/types';
import { createTreeStorage, type TreeStorageAdapter } from '../src/tree-storage.js';

let base: string;
let root: string;
let outside: string;
let tree: TreeStorageAdapter;

const NFC = 'caf\u00e9.txt';
const NFD = 'cafe\u0301.txt';

async function text(stream: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

beforeAll(async () => {
  base = await mkdtemp(join(tmpdir(), 'mk-tree-'));
  root = join(base, 'root');
  outside = join(base, 'outside');
  await mkdir(join(root, 'data', 'deep', 'er'), { recursive: true });
  await mkdir(join(root, '.git'), { recursive: true });
  await mkdir(outside, { recursive: true });
  await writeFile(join(outside, 'secret.txt'), 'secret');
  await writeFile(join(base, 'sibling.txt'), 'sibling');
  await writeFile(join(root, 'top.csv'), 'a,b\n1,2\n');
  await writeFile(join(root, 'data', 'deep', 'er', 'x.bin'), Buffer.alloc(10, 7));
  await writeFile(join(root, 'data', 'with space %41 #h ?q.txt'), 'odd');
  await writeFile(join(root, 'data', NFC), 'nfc');
  await writeFile(join(root, 'data', NFD), 'nfd');
  await writeFile(join(root, 'data', 'back\\slash'), 'b');
  await writeFile(join(root, '.git', 'config'), 'hidden');
  await writeFile(join(root, '.hidden'), 'hidden');
  await symlink(join(outside, 'secret.txt'), join(root, 'link-out.txt'));
  await symlink(join(root, 'top.csv'), join(root, 'link-in.csv'));
  await symlink(outside, join(root, 'linked-dir'));
  await symlink(join(root, 'data'), join(root, 'linked-data'));
  tree = createTreeStorage({ root });
  await tree.open();
});
afterAll(async () => {
  await tree.close();
  await rm(base, { recursive: true, force: true });
});

describe('TreeStorageAdapter (wrap mode)', () => {
  it('declares a read-only store with list and range', () => {
    expect(tree.capabilities).toEqual({ write: false, delete: false, list: true, range: true, nativeChecksums: [] });
    const asPort: StorageAdapter = tree;
    expect(asPort.openTemp).toBeUndefined();
    expect(asPort.delete).toBeUndefined();
  });

  it('lists regular files only, skipping symlinks, hidden names and unrepresentable names', async () => {
    const skipped: string[] = [];
    const keys: string[] = [];
    for await (const e of tree.list({ onSkip: (p) => skipped.push(p) })) {
      keys.push(e.key);
      expect(e.size).toBeGreaterThanOrEqual(0);
      expect(e.mtimeMs).toBeGreaterThan(0);
    }
    expect(keys.sort()).toEqual(['data/deep/er/x.bin', `data/${NFD}`, `data/${NFC}`, 'data/with space %41 #h ?q.txt', 'top.csv'].sort());
    expect(skipped.sort()).toEqual(['data/back\\slash', 'link-in.csv', 'link-out.txt', 'linked-data', 'linked-dir'].sort());
    const deep: string[] = [];
    for await (const e of tree.list({ prefix: 'data/deep/' })) deep.push(e.key);
    expect(deep).toEqual(['data/deep/er/x.bin']);
  });

  it('includeHidden lists dot files and dot directories', async () => {
    const all = createTreeStorage({ root, includeHidden: true });
    const keys: string[] = [];
    for await (const e of all.list()) keys.push(e.key);
    expect(keys).toContain('.git/config');
    expect(keys).toContain('.hidden');
    expect(await all.stat('.hidden')).toBeDefined();
    expect(await tree.stat('.hidden')).toBeUndefined();
    expect(await tree.read('.git/config')).toBeUndefined();
  });

  it('stats and reads files, with ranges', async () => {
    expect((await tree.stat('top.csv'))?.size).toBe(8);
    const r = await tree.read('top.csv', { range: { start: 4, end: 6 } });
    expect(r?.length).toBe(3);
    expect(r?.size).toBe(8);
    expect(await text(r!.stream)).toBe('1,2');
    expect(await text((await tree.read('data/with space %41 #h ?q.txt'))!.stream)).toBe('odd');
    expect(await text((await tree.read(`data/${NFC}`))!.stream)).toBe('nfc');
    expect(await text((await tree.read(`data/${NFD}`))!.stream)).toBe('nfd');
    await expect(tree.read('top.csv', { range: { start: 8 } })).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));
    expect(await tree.stat('missing.txt')).toBeUndefined();
    expect(await tree.read('data')).toBeUndefined(); // a directory is not an object
    expect(await tree.stat('top.csv/below')).toBeUndefined();
  });

  it('never serves a symlink, to outside or inside the tree, file or directory', async () => {
    for (const key of ['link-out.txt', 'link-in.csv', 'linked-dir/secret.txt', 'linked-data/with space %41 #h ?q.txt']) {
      expect(await tree.stat(key), key).toBeUndefined();
      expect(await tree.read(key), key).toBeUndefined();
    }
  });

  it('digests small files on the hashing threads exactly as the streaming path does, with the same refusals', async () => {
    const sha1 = (bytes: Buffer | string) => createHash('sha1').update(bytes).digest('hex');
    const keys = ['top.csv', 'data/deep/er/x.bin', `data/${NFC}`, 'data/with space %41 #h ?q.txt'];
    // Many at once: they travel in one batch and come back to the right callers.
    const pooled = await Promise.all(keys.flatMap((key) => [1, 2, 3].map(() => tree.digest(key, 'SHA-1', { sizeHint: 10 }))));
    const streamed = await Promise.all(keys.map((key) => tree.digest(key, 'SHA-1')));
    keys.forEach((key, i) => {
      for (let j = 0; j < 3; j++) expect(pooled[i * 3 + j], key).toEqual(streamed[i]);
    });
    expect(pooled[0]!.checksum).toBe(sha1('a,b\n1,2\n'));
    expect((await tree.digest('data/deep/er/x.bin', 'SHA-256', { sizeHint: 10 }))!.checksum).toBe(createHash('sha256').update(Buffer.alloc(10, 7)).digest('hex'));
    for (const key of ['link-out.txt', 'link-in.csv', 'linked-dir/secret.txt', 'linked-data/with space %41 #h ?q.txt', '.hidden', 'data', 'missing.txt', 'data/deep/nope/x']) {
      expect(await tree.digest(key, 'SHA-1', { sizeHint: 1 }), key).toBeUndefined();
    }
    await expect(tree.digest('../sibling.txt', 'SHA-1', { sizeHint: 1 })).rejects.toMatchObject({ kind: 'invalid' });
  });

  it('gives the first bytes with the digest when asked (the scanner identifies formats without a second read), on both paths', async () => {
    const big = Buffer.alloc((1 << 20) + 3000);
    for (let i = 0; i < big.length; i++) big[i] = (i * 31) % 251;
    await writeFile(join(root, 'big.dat'), big);
    for (const sizeHint of [big.length, 10]) {
      // sizeHint 10 takes the hashing threads, the real size the streaming path
      const d = await tree.digest('big.dat', 'SHA-1', { sizeHint, headBytes: 8192 });
      expect(d!.checksum).toBe(createHash('sha1').update(big).digest('hex'));
      expect(Buffer.from(d!.head!)).toEqual(big.subarray(0, 8192));
    }
    const small = await Promise.all([tree.digest('top.csv', 'SHA-1', { sizeHint: 8, headBytes: 8192 }), tree.digest('top.csv', 'SHA-1', { headBytes: 3 })]);
    expect(small.map((d) => Buffer.from(d!.head!).toString())).toEqual(['a,b\n1,2\n', 'a,b']);
    expect((await tree.digest('top.csv', 'SHA-1', { sizeHint: 8 }))!.head).toBeUndefined();
  });

  it('refuses hostile keys with kind invalid', async () => {
    const hostile = ['../sibling.txt', 'a/../../sibling.txt', 'data/../../sibling.txt', '/etc/passwd', join(outside, 'secret.txt'),
      'data\\..\\..\\sibling.txt', 'top.csv\0', '', './top.csv', 'data//x', 'data/', '..'];
    for (const key of hostile) {
      await expect(tree.stat(key), JSON.stringify(key)).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));
      await expect(tree.read(key), JSON.stringify(key)).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));
    }
    expect(await tree.stat('..%2Fsibling.txt')).toBeUndefined();
  });
});
