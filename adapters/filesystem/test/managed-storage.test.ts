import { createHash } from 'node:crypto';
import { mkdtemp, readdir, rm, symlink, utimes, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AdapterError, type StorageAdapter } from '@memberkit/types';
import { receiveUpload, type UploadOptions } from '@memberkit/core';
import { createFilesystemStorage, type FilesystemStorageAdapter } from '../src/managed-storage.js';

let dir: string;
let store: FilesystemStorageAdapter;

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'mk-managed-'));
  store = createFilesystemStorage({ root: dir });
  await store.open();
});
afterEach(async () => {
  await store.close();
  await rm(dir, { recursive: true, force: true });
});

/** The core's upload path (hashing, size limit, pending-write state) into this store's temp area. */
function upload(source: AsyncIterable<Uint8Array>, options?: UploadOptions, storage: StorageAdapter = store) {
  return receiveUpload(storage, source, options);
}

async function* chunks(...parts: Array<string | Uint8Array>): AsyncIterable<Uint8Array> {
  for (const p of parts) yield typeof p === 'string' ? Buffer.from(p) : p;
}

async function text(stream: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

const digest = (alg: string, data: string | Buffer) => createHash(alg).update(data).digest('hex');

async function filesUnder(path: string): Promise<string[]> {
  const out = await readdir(path, { recursive: true, withFileTypes: true });
  return out.filter((d) => d.isFile()).map((d) => d.name);
}

describe('FilesystemStorageAdapter (managed mode)', () => {
  it('declares its capabilities', () => {
    expect(store.capabilities).toEqual({ write: true, delete: true, list: true, range: true, nativeChecksums: [] });
  });

  it('still reads, lists and deletes keys of the earlier two-level layout (objects/ab/cd/…)', async () => {
    const old = `objects/ab/cd/${'e'.repeat(64)}-0123456789abcdef`;
    await mkdir(join(dir, 'objects', 'ab', 'cd'), { recursive: true });
    await writeFile(join(dir, ...old.split('/')), 'older layout');
    expect((await store.stat(old))?.size).toBe(12);
    const read = await store.read(old);
    const parts: Buffer[] = [];
    for await (const c of read!.stream) parts.push(c as Buffer);
    expect(Buffer.concat(parts).toString()).toBe('older layout');
    const listed: string[] = [];
    for await (const e of store.list!()) listed.push(e.key);
    expect(listed).toContain(old);
    await store.delete!(old);
    expect(await store.stat(old)).toBeUndefined();
  });

  it('writes, commits, stats, reads, lists and deletes', async () => {
    const pending = await upload(chunks('hello ', 'world'));
    expect(pending.size).toBe(11);
    expect(await filesUnder(join(dir, 'objects'))).toEqual([]);
    const key = await pending.commit('doi:10.5063/F1?x#y');
    expect(key).toMatch(/^objects\/[0-9a-f]{3}\/[0-9a-f]{64}-[0-9a-f]{32}$/);
    const sha = digest('sha256', 'doi:10.5063/F1?x#y');
    expect(key.startsWith(`objects/${sha.slice(0, 3)}/${sha}-`)).toBe(true);
    expect(await filesUnder(join(dir, 'tmp'))).toEqual([]);

    const st = await store.stat(key);
    expect(st?.size).toBe(11);
    expect(st?.modified).toBeInstanceOf(Date);

    const whole = await store.read(key);
    expect(whole?.length).toBe(11);
    expect(whole?.size).toBe(11);
    expect(await text(whole!.stream)).toBe('hello world');

    const part = await store.read(key, { range: { start: 6, end: 9 } });
    expect(part?.length).toBe(4);
    expect(await text(part!.stream)).toBe('worl');
    const tail = await store.read(key, { range: { start: 6 } });
    expect(await text(tail!.stream)).toBe('world');
    const clamped = await store.read(key, { range: { start: 10, end: 100 } });
    expect(clamped?.length).toBe(1);
    expect(await text(clamped!.stream)).toBe('d');
    await expect(store.read(key, { range: { start: 11 } })).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));
    await expect(store.read(key, { range: { start: 5, end: 2 } })).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));

    const listed = [];
    for await (const e of store.list!()) listed.push(e);
    expect(listed).toEqual([{ key, size: 11, modified: st!.modified }]);
    const byPrefix = [];
    for await (const e of store.list!({ prefix: key.slice(0, 13) })) byPrefix.push(e.key);
    expect(byPrefix).toEqual([key]);
    const none = [];
    for await (const e of store.list!({ prefix: 'objects/zz' })) none.push(e.key);
    expect(none).toEqual([]);

    await store.delete(key);
    expect(await store.stat(key)).toBeUndefined();
    expect(await store.read(key)).toBeUndefined();
    await store.delete(key); // absent is fine
  });

  it('computes MD5, SHA-1 and SHA-256 equal to node:crypto', async () => {
    const data = Buffer.alloc(300_000);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7919) & 0xff;
    const pending = await upload(chunks(data.subarray(0, 1), data.subarray(1, 65_537), data.subarray(65_537)));
    expect(pending.size).toBe(data.length);
    expect(pending.checksums).toEqual({ MD5: digest('md5', data), 'SHA-1': digest('sha1', data), 'SHA-256': digest('sha256', data) });
    const empty = await upload(chunks());
    expect(empty.size).toBe(0);
    expect(empty.checksums.MD5).toBe(digest('md5', ''));
    const key = await empty.commit('empty');
    expect((await store.stat(key))?.size).toBe(0);
    await expect(store.read(key, { range: { start: 0 } })).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));
  });

  it('gives two commits of the same name different keys', async () => {
    const a = await (await upload(chunks('a'))).commit('same');
    const b = await (await upload(chunks('b'))).commit('same');
    expect(a).not.toBe(b);
    expect(a.slice(0, 76)).toBe(b.slice(0, 76)); // same shard and name hash
    await store.delete(a);
    expect(await text((await store.read(b))!.stream)).toBe('b');
  });

  it('a shard directory removed behind its back is made again by the next commit into it', async () => {
    const a = await (await upload(chunks('a'))).commit('same');
    // An operator's clean-up: the shard this process made (and remembers) is gone.
    await rm(join(dir, ...a.split('/').slice(0, -1)), { recursive: true });
    const b = await (await upload(chunks('b'))).commit('same');
    expect(b.slice(0, 76)).toBe(a.slice(0, 76));
    expect(await text((await store.read(b))!.stream)).toBe('b');
  });

  it('abort() discards the temp bytes, is idempotent, and a committed write is not undone by it', async () => {
    const p = await upload(chunks('x'));
    await p.abort();
    await p.abort();
    expect(await filesUnder(join(dir, 'tmp'))).toEqual([]);
    await expect(p.commit('n')).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));
    const q = await upload(chunks('y'));
    const key = await q.commit('n');
    await q.abort();
    expect(await store.stat(key)).toBeDefined();
  });

  it('an aborted signal mid-stream leaves nothing in tmp or objects', async () => {
    const controller = new AbortController();
    async function* slow(): AsyncIterable<Uint8Array> {
      yield Buffer.alloc(1024, 1);
      yield Buffer.alloc(1024, 2);
      controller.abort(new Error('client went away'));
      await new Promise((r) => setTimeout(r, 20));
      yield Buffer.alloc(1024, 3);
    }
    await expect(upload(slow(), { signal: controller.signal })).rejects.toThrow();
    expect(await filesUnder(join(dir, 'tmp'))).toEqual([]);
    expect(await filesUnder(join(dir, 'objects'))).toEqual([]);
  });

  it('a failing source leaves nothing behind and its error is rethrown', async () => {
    async function* failing(): AsyncIterable<Uint8Array> {
      yield Buffer.from('partial');
      throw new Error('source broke');
    }
    await expect(upload(failing())).rejects.toThrow('source broke');
    expect(await filesUnder(join(dir, 'tmp'))).toEqual([]);
  });

  it('refuses more than maxBytes with kind invalid', async () => {
    await expect(upload(chunks('12345', '6'), { maxBytes: 5 })).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));
    expect(await filesUnder(join(dir, 'tmp'))).toEqual([]);
    const ok = await upload(chunks('12345'), { maxBytes: 5 });
    expect(ok.size).toBe(5);
    await ok.abort();
  });

  it('refuses hostile keys with kind invalid', async () => {
    await writeFile(join(dir, 'secret'), 'top secret');
    const hostile = ['../x', 'a/../../b', 'objects/../secret', 'objects/../../etc/passwd', '/etc/passwd', 'C:/x', 'objects\\..\\secret',
      'objects/a\0b', '', 'objects', 'objects/', 'objects//x', 'objects/./x', 'secret', 'tmp/x'];
    for (const key of hostile) {
      for (const op of [() => store.stat(key), () => store.read(key), () => store.delete(key)]) {
        await expect(op(), JSON.stringify(key)).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));
      }
    }
    // Percent-encoded traversal is just a (missing) file name.
    expect(await store.stat('objects/..%2Fsecret')).toBeUndefined();
  });

  it('refuses a key whose real path leaves the root through a symlink', async () => {
    const outside = await mkdtemp(join(tmpdir(), 'mk-outside-'));
    try {
      await writeFile(join(outside, 'f'), 'outside');
      await mkdir(join(dir, 'objects', 'ab'), { recursive: true });
      await symlink(outside, join(dir, 'objects', 'ab', 'cd'));
      await expect(store.stat('objects/ab/cd/f')).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));
      await expect(store.read('objects/ab/cd/f')).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));
      await expect(store.delete('objects/ab/cd/f')).rejects.toSatisfy((e) => AdapterError.is(e, 'invalid'));
      expect(await filesUnder(outside)).toEqual(['f']);
    } finally {
      await rm(outside, { recursive: true, force: true });
    }
  });

  it('sweepTemp removes stale temp files but not fresh ones', async () => {
    const old = join(dir, 'tmp', 'old.part');
    const fresh = join(dir, 'tmp', 'fresh.part');
    await writeFile(old, 'x');
    await writeFile(fresh, 'y');
    const twoHoursAgo = new Date(Date.now() - 2 * 3600_000);
    await utimes(old, twoHoursAgo, twoHoursAgo);
    const pending = await upload(chunks(Buffer.alloc(200_000, 0x7a))); // spooled to a temp file
    expect(await store.sweepTemp(3600_000)).toBe(1);
    expect((await filesUnder(join(dir, 'tmp'))).sort()).toHaveLength(2);
    expect(await store.sweepTemp(-1000)).toBe(1); // everything but the write in progress
    expect(await pending.commit('still-there')).toMatch(/^objects\//);
    // open() sweeps too
    await writeFile(old, 'x');
    await utimes(old, twoHoursAgo, twoHoursAgo);
    const again = createFilesystemStorage({ root: dir });
    await again.open();
    expect(await filesUnder(join(dir, 'tmp'))).toEqual([]);
  });

  it('holds a small write in memory until commit, which writes it in place durably; abort leaves nothing', async () => {
    const small = await upload(chunks('a', Buffer.alloc(100_000, 0x62)));
    expect(await filesUnder(join(dir, 'tmp'))).toEqual([]);
    const key = await small.commit('small');
    expect(await filesUnder(join(dir, 'tmp'))).toEqual([]);
    expect(await text((await store.read(key))!.stream)).toBe('a' + 'b'.repeat(100_000));
    expect(await small.commit('small')).toBe(key);
    const dropped = await upload(chunks('never kept'));
    await dropped.abort();
    expect(await filesUnder(join(dir, 'tmp'))).toEqual([]);
    expect(await filesUnder(join(dir, 'objects'))).toHaveLength(1);
  });

  it("a small write held as a view into a larger buffer stores only the view's bytes and leaves the caller's buffer whole", async () => {
    // The file worker gets a copy of the bytes moved to it (not the view's whole ArrayBuffer cloned, nor the caller's moved).
    const backing = Buffer.alloc(1024 * 1024, 0x2e);
    backing.write('the object itself', 4096);
    const view = backing.subarray(4096, 4096 + 17);
    const key = await (await upload(chunks(view))).commit('view');
    expect(await text((await store.read(key))!.stream)).toBe('the object itself');
    expect(backing.byteLength).toBe(1024 * 1024);
    expect(view.toString()).toBe('the object itself');
    expect(backing[0]).toBe(0x2e);
  });

  it('spools small writes to disk once those held in memory reach the budget (32 MiB)', async () => {
    const piece = Buffer.alloc(128 * 1024, 0x63);
    const held = [];
    for (let i = 0; i < 256; i++) held.push(await upload(chunks(piece)));
    expect(await filesUnder(join(dir, 'tmp'))).toEqual([]);
    const spilled = await upload(chunks(piece));
    expect(await filesUnder(join(dir, 'tmp'))).toHaveLength(1);
    // Released by commit and abort: the next small write is held again.
    await held[0]!.commit('first');
    await Promise.all(held.slice(1).map((p) => p.abort()));
    const next = await upload(chunks(piece));
    expect(await filesUnder(join(dir, 'tmp'))).toHaveLength(1);
    const key = await spilled.commit('spilled');
    expect((await store.stat(key))?.size).toBe(piece.length);
    await next.abort();
    expect(await filesUnder(join(dir, 'tmp'))).toEqual([]);
  });

  it('streams a 64 MiB write without buffering it', async () => {
    const chunk = Buffer.alloc(64 * 1024, 0x5a);
    const total = 64 * 1024 * 1024;
    const expected = createHash('sha256');
    for (let i = 0; i < total / chunk.length; i++) expected.update(chunk);
    global.gc?.();
    const before = process.memoryUsage();
    let peak = 0;
    async function* big(): AsyncIterable<Uint8Array> {
      for (let sent = 0; sent < total; sent += chunk.length) {
        // A fresh buffer each time, so retained chunks would show up in memory use.
        yield Buffer.from(chunk);
        if ((sent / chunk.length) % 64 === 0) {
          const m = process.memoryUsage();
          peak = Math.max(peak, m.arrayBuffers + m.heapUsed - before.arrayBuffers - before.heapUsed);
        }
      }
    }
    const pending = await upload(big());
    expect(pending.size).toBe(total);
    expect(pending.checksums['SHA-256']).toBe(expected.digest('hex'));
    const key = await pending.commit('big');
    expect((await store.stat(key))?.size).toBe(total);
    // Generous bound: garbage not yet collected, but far below the 64 MiB a buffered write holds.
    expect(peak).toBeLessThan(40 * 1024 * 1024);
  });
});
