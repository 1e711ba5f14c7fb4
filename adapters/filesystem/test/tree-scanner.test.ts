import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, unlink, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AdapterError, type ByteRange, type ChecksumAlgorithmName, type ObjectRecord, type StorageReadResult } from '@memberkit/types';
import { openSqliteStore, type SqliteStore } from '../src/sqlite/index.js';
import { pidFromPath, TreeScanner, type TreeScannerOptions } from '../src/tree-scanner.js';
import { TreeStorageAdapter } from '../src/tree-storage.js';

/** The real tree store, counting reads (to prove the checksum cache). */
class CountingTree extends TreeStorageAdapter {
  reads: string[] = [];
  override async read(key: string, options?: { range?: ByteRange; signal?: AbortSignal }): Promise<StorageReadResult | undefined> {
    this.reads.push(key);
    return super.read(key, options);
  }
  override async digest(key: string, algorithm: ChecksumAlgorithmName, options?: { signal?: AbortSignal }) {
    this.reads.push(key);
    return super.digest(key, algorithm, options);
  }
}

let base: string;
let root: string;
let store: SqliteStore;
let tree: CountingTree;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'mk-scan-'));
  root = join(base, 'tree');
  await mkdir(root);
  store = openSqliteStore({ file: join(base, 'node.sqlite') });
  await store.open();
  tree = new CountingTree({ root });
  await tree.open();
});
afterEach(async () => {
  await store.close();
  await rm(base, { recursive: true, force: true });
});

function scanner(extra: Partial<TreeScannerOptions> = {}): TreeScanner {
  return new TreeScanner({
    storage: tree,
    catalogue: store.catalogue,
    stateDatabase: store.database,
    nodeId: 'urn:node:TEST',
    rightsHolder: 'CN=owner,DC=test',
    accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] },
    ...extra,
  });
}

const sha1 = (data: string | Buffer) => createHash('sha1').update(data).digest('hex');

async function put(rel: string, content: string | Buffer, mtime?: Date): Promise<void> {
  const path = join(root, ...rel.split('/'));
  await mkdir(join(path, '..'), { recursive: true });
  await writeFile(path, content);
  if (mtime) await utimes(path, mtime, mtime);
}

async function all(fromDate?: Date): Promise<ObjectRecord[]> {
  const page = await store.catalogue.list({ start: 0, count: 100_000, ...(fromDate ? { fromDate } : {}) });
  return page.items;
}

async function text(stream: Readable): Promise<string> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts).toString('utf8');
}

describe('TreeScanner', () => {
  it('catalogues every file with system metadata derived from the file', async () => {
    const past = new Date('2015-06-01T12:00:00Z');
    await put('a.csv', 'x,y\n1,2\n', past);
    await put('sub/dir/b.dat', 'binary');
    await put('noext', 'n');
    const report = await scanner({ formatOverrides: { dat: 'text/plain' } }).scan();
    expect(report).toMatchObject({ added: 3, changed: 0, removed: 0, unchanged: 0, skipped: [] });
    const a = await store.catalogue.get('a.csv');
    expect(a?.storageKey).toBe('a.csv');
    expect(a?.isReplica).toBe(false);
    expect(a?.sysmeta).toMatchObject({
      identifier: 'a.csv', formatId: 'text/csv', size: 8, checksum: { algorithm: 'SHA-1', value: sha1('x,y\n1,2\n') },
      serialVersion: 1, rightsHolder: 'CN=owner,DC=test', submitter: 'CN=owner,DC=test', archived: false,
      originMemberNode: 'urn:node:TEST', authoritativeMemberNode: 'urn:node:TEST', fileName: 'a.csv',
      mediaType: { name: 'text/csv', property: [] }, accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] },
    });
    expect(a?.sysmeta.dateUploaded.toISOString()).toBe(past.toISOString());
    expect(a!.sysmeta.dateSysMetadataModified.getTime()).toBeGreaterThan(Date.now() - 60_000);
    expect((await store.catalogue.get('sub/dir/b.dat'))?.sysmeta).toMatchObject({ formatId: 'text/plain', fileName: 'b.dat', mediaType: { name: 'text/plain' } });
    // No extension: the content decides (one byte of text).
    expect((await store.catalogue.get('noext'))?.sysmeta.formatId).toBe('text/plain');
  });

  it('uses the configured checksum algorithm', async () => {
    await put('f.txt', 'hello');
    await scanner({ checksumAlgorithm: 'SHA-256' }).scan();
    expect((await store.catalogue.get('f.txt'))?.sysmeta.checksum).toEqual({
      algorithm: 'SHA-256', value: createHash('sha256').update('hello').digest('hex'),
    });
  });

  it('lists the first objects of a 10,000-file tree within seconds, while the rest is hashed', async () => {
    const content = Buffer.alloc(2048, 1);
    for (let d = 0; d < 100; d++) {
      await mkdir(join(root, `d${d}`));
      await Promise.all(Array.from({ length: 100 }, (_, f) => writeFile(join(root, `d${d}`, `f${f}.bin`), content)));
    }
    const s = scanner({ concurrency: 8 });
    const started = Date.now();
    let done = false;
    const scan = s.scan().finally(() => {
      done = true;
    });
    let firstPageAfter: number | undefined;
    let totalAtFirstPage = 0;
    while (firstPageAfter === undefined) {
      const page = await store.catalogue.list({ start: 0, count: 100 });
      if (page.items.length > 0) {
        firstPageAfter = Date.now() - started;
        totalAtFirstPage = page.total;
        expect(page.items.length).toBe(Math.min(100, page.total));
      } else {
        await new Promise((r) => setTimeout(r, 5));
      }
    }
    expect(firstPageAfter).toBeLessThan(5000);
    const report = await scan;
    expect(done).toBe(true);
    expect(report.added).toBe(10_000);
    expect(report.skipped).toEqual([]);
    expect(totalAtFirstPage).toBeLessThan(10_000); // objects appeared before the scan finished
    expect((await store.catalogue.list({ start: 0, count: 0 })).total).toBe(10_000);

    // A rescan of an unchanged tree reads no file at all.
    tree.reads = [];
    const again = await s.scan();
    expect(again).toMatchObject({ added: 0, changed: 0, removed: 0, unchanged: 10_000 });
    expect(tree.reads).toEqual([]);
  }, 120_000);

  it('picks up added, modified and deleted files, moving dateSysMetadataModified forward', async () => {
    await put('keep.txt', 'keep');
    await put('modify.txt', 'v1');
    await put('delete.txt', 'bye');
    const s = scanner();
    await s.scan();
    const before = new Map((await all()).map((r) => [r.sysmeta.identifier, r]));
    const lastHarvest = Math.max(...[...before.values()].map((r) => r.sysmeta.dateSysMetadataModified.getTime()));

    await put('modify.txt', 'version two', new Date(Date.now() + 5000));
    await put('new/added.txt', 'hello');
    await unlink(join(root, 'delete.txt'));
    tree.reads = [];
    const report = await s.scan();
    expect(report).toMatchObject({ added: 1, changed: 1, removed: 1, unchanged: 1, skipped: [] });
    expect(tree.reads.sort()).toEqual(['modify.txt', 'new/added.txt']);

    // What a CN polling listObjects(fromDate = last harvest + 1 ms) sees:
    const harvested = await all(new Date(lastHarvest + 1));
    expect(harvested.map((r) => r.sysmeta.identifier).sort()).toEqual(['modify.txt', 'new/added.txt']);
    const modified = harvested.find((r) => r.sysmeta.identifier === 'modify.txt')!;
    expect(modified.sysmeta.serialVersion).toBe(2);
    expect(modified.sysmeta.size).toBe(11);
    expect(modified.sysmeta.checksum.value).toBe(sha1('version two'));
    expect(modified.sysmeta.dateUploaded.getTime()).toBe(before.get('modify.txt')!.sysmeta.dateUploaded.getTime());
    expect(await store.catalogue.get('delete.txt')).toBeUndefined();
    expect(await store.catalogue.get('keep.txt')).toEqual(before.get('keep.txt'));
    const read = await tree.read(modified.storageKey);
    expect(await text(read!.stream)).toBe('version two');
  });

  it('never moves dateSysMetadataModified backwards, even when the clock does', async () => {
    let clock = new Date('2030-01-01T00:00:00Z');
    const s = scanner({ now: () => clock });
    await put('f.txt', 'one');
    await s.scan();
    const first = (await store.catalogue.get('f.txt'))!.sysmeta.dateSysMetadataModified.getTime();
    expect(first).toBe(clock.getTime());
    clock = new Date('2020-01-01T00:00:00Z'); // clock stepped back
    await put('f.txt', 'two!', new Date(Date.now() + 10_000));
    await put('g.txt', 'g');
    await s.scan();
    const second = (await store.catalogue.get('f.txt'))!.sysmeta.dateSysMetadataModified.getTime();
    expect(second).toBeGreaterThan(first);
    expect((await store.catalogue.get('g.txt'))!.sysmeta.dateSysMetadataModified.getTime()).toBeGreaterThan(first);
    // A fresh scanner (restart) on the same state also stays ahead.
    await put('f.txt', 'three', new Date(Date.now() + 20_000));
    await scanner({ now: () => clock }).scan();
    expect((await store.catalogue.get('f.txt'))!.sysmeta.dateSysMetadataModified.getTime()).toBeGreaterThan(second);
  });

  it('does not re-hash unchanged files and ignores a touch without a content change', async () => {
    await put('a.txt', 'same');
    await put('b.txt', 'other');
    const s = scanner();
    await s.scan();
    const a1 = await store.catalogue.get('a.txt');
    tree.reads = [];
    expect(await s.scan()).toMatchObject({ unchanged: 2, added: 0, changed: 0 });
    expect(tree.reads).toEqual([]);
    const later = new Date(Date.now() + 60_000);
    await utimes(join(root, 'a.txt'), later, later);
    const report = await s.scan();
    expect(tree.reads).toEqual(['a.txt']); // mtime changed: hashed once more...
    expect(report).toMatchObject({ unchanged: 2, changed: 0 }); // ...but the bytes are the same
    expect(await store.catalogue.get('a.txt')).toEqual(a1);
    tree.reads = [];
    await s.scan();
    expect(tree.reads).toEqual([]); // and the new mtime is cached
  });

  it('keeps overlay fields the archive lacks when a file changes', async () => {
    await put('data.csv', 'a\n1\n');
    const s = scanner();
    await s.scan();
    const stored = (await store.catalogue.get('data.csv'))!;
    const overlay = {
      accessPolicy: { allow: [{ subject: ['CN=friend'], permission: ['read' as const, 'write' as const] }] },
      replicationPolicy: { replicationAllowed: true, numberReplicas: 2, preferredMemberNode: ['urn:node:B'], blockedMemberNode: [] },
      replica: [{ replicaMemberNode: 'urn:node:B', replicationStatus: 'completed' as const, replicaVerified: new Date('2024-01-01T00:00:00Z') }],
      seriesId: 'series-of-data',
      obsoletes: 'older-data.csv',
      obsoletedBy: 'newer-data.csv',
      formatId: 'text/plain',
    };
    await store.catalogue.apply({
      replace: [{ pid: 'data.csv', expectedSerialVersion: 1, sysmeta: { ...stored.sysmeta, ...overlay, serialVersion: 2, dateSysMetadataModified: new Date() } }],
    });
    await put('data.csv', 'a\n1\n2\n', new Date(Date.now() + 5000));
    expect(await s.scan()).toMatchObject({ changed: 1 });
    const after = (await store.catalogue.get('data.csv'))!;
    expect(after.sysmeta).toMatchObject({ ...overlay, serialVersion: 3, size: 6, checksum: { algorithm: 'SHA-1', value: sha1('a\n1\n2\n') } });
    expect((await store.catalogue.seriesMembers('series-of-data')).map((m) => m.pid)).toEqual(['data.csv']);
  });

  it('handles hostile file names: spaces and % percent-encoded by default, unicode twins, #, ?', async () => {
    const NFC = 'caf\u00e9.txt';
    const NFD = 'cafe\u0301.txt';
    const names = [NFC, NFD, '100%25.txt', 'a#b.txt', 'what?.txt', 'x%2F..%2Fy.txt'];
    for (const [i, n] of names.entries()) await put(`odd/${n}`, `content ${i}`);
    await put('odd/has space.txt', 'spaced');
    const report = await scanner().scan();
    expect(report.added).toBe(names.length + 1);
    expect(report.skipped).toEqual([]);
    expect((await store.catalogue.get('odd/has%20space.txt'))?.storageKey).toBe('odd/has space.txt');
    expect((await store.catalogue.get('odd/100%2525.txt'))?.storageKey).toBe('odd/100%25.txt');
    for (const [i, n] of names.entries()) {
      const record = await store.catalogue.get(pidFromPath(`odd/${n}`));
      expect(record?.sysmeta.fileName).toBe(n);
      const read = await tree.read(record!.storageKey);
      expect(await text(read!.stream)).toBe(`content ${i}`);
    }
    // Another PID rule renames every object.
    const ruled = await scanner({ pidRule: (p) => `urn:test:${p.replaceAll(' ', '_')}` }).scan();
    expect(ruled.skipped).toEqual([]);
    // The rule renamed every PID: old records are replaced by new ones.
    expect(ruled.added).toBe(names.length + 1);
    expect((await store.catalogue.get('urn:test:odd/has_space.txt'))?.storageKey).toBe('odd/has space.txt');
    expect(await store.catalogue.get(`odd/${NFC}`)).toBeUndefined();
    expect((await store.catalogue.list({ start: 0, count: 0 })).total).toBe(names.length + 1);
  });

  it('reports skipped symlinks and never catalogues them', async () => {
    await put('real.txt', 'real');
    const { symlink } = await import('node:fs/promises');
    await symlink(join(root, 'real.txt'), join(root, 'link.txt'));
    const report = await scanner().scan();
    expect(report.added).toBe(1);
    expect(report.skipped).toEqual([{ path: 'link.txt', reason: expect.stringContaining('symbolic link') }]);
    expect(await store.catalogue.get('link.txt')).toBeUndefined();
  });

  it('serialises concurrent scans', async () => {
    for (let i = 0; i < 50; i++) await put(`f${i}.txt`, `file ${i}`);
    const s = scanner({ batchSize: 7 });
    const [a, b, c] = await Promise.all([s.scan(), s.scan(), s.scan()]);
    expect(a.added).toBe(50);
    expect(b).toMatchObject({ added: 0, unchanged: 50 });
    expect(c).toBe(b); // joined the queued scan
    expect((await store.catalogue.list({ start: 0, count: 0 })).total).toBe(50);
  });

  it('an aborted scan keeps what it catalogued and removes nothing', async () => {
    for (let i = 0; i < 20; i++) await put(`f${i}.txt`, `file ${i}`);
    const s = scanner();
    await s.scan();
    for (let i = 0; i < 20; i++) await put(`f${i}.txt`, `changed ${i}`, new Date(Date.now() + 5000));
    const controller = new AbortController();
    controller.abort();
    await expect(s.scan({ signal: controller.signal })).rejects.toThrow();
    expect((await store.catalogue.list({ start: 0, count: 0 })).total).toBe(20);
    const progress: number[] = [];
    const report = await s.scan({ onProgress: (r) => progress.push(r.changed) });
    expect(report.changed).toBe(20);
    expect(progress.at(-1)).toBe(20);
  });

  it('refuses to empty the catalogue when the tree suddenly lists nothing', async () => {
    await put('a.txt', 'a');
    await put('b/c.txt', 'c');
    await scanner().scan();
    await rm(join(root, 'a.txt'));
    await rm(join(root, 'b'), { recursive: true });
    await expect(scanner().scan()).rejects.toSatisfy((e) => AdapterError.is(e, 'unavailable'));
    expect((await store.catalogue.list({ start: 0, count: 0 })).total).toBe(2);
    expect(await scanner({ allowEmptyTree: true }).scan()).toMatchObject({ removed: 2 });
    expect((await store.catalogue.list({ start: 0, count: 0 })).total).toBe(0);
  });

  it('watch() rescans periodically until stopped', async () => {
    const s = scanner();
    const reports: number[] = [];
    const w = s.watch({ intervalMs: 20, onScan: (r) => reports.push(r.added) });
    await put('late.txt', 'arrives later');
    const deadline = Date.now() + 10_000;
    while ((await store.catalogue.get('late.txt')) === undefined && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
    await w.stop();
    expect(await store.catalogue.get('late.txt')).toBeDefined();
    const count = reports.length;
    await new Promise((r) => setTimeout(r, 60));
    expect(reports.length).toBe(count);
  });
});
