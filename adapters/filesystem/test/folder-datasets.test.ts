import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, rm, unlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ObjectRecord } from '@memberkit/types';
import { DatasetMapStorage, readResourceMap } from '@memberkit/science';
import { createSqlCatalogue, SqlScanState, type SqlCatalogue } from '@memberkit/adapter-sql';
import { WrapScanner } from '@memberkit/core';
import { TreeStorageAdapter } from '../src/tree-storage.js';

const EML = `<?xml version="1.0"?><eml:eml xmlns:eml="https://eml.ecoinformatics.org/eml-2.2.0" packageId="p" system="s"><dataset><title>Kelp</title></dataset></eml:eml>`;
const ISO = `<?xml version="1.0"?><gmd:MD_Metadata xmlns:gmd="http://www.isotc211.org/2005/gmd"/>`;

let base: string;
let root: string;
let store: SqlCatalogue;
let storage: DatasetMapStorage;
let scanner: WrapScanner;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'mk-datasets-'));
  root = join(base, 'tree');
  await mkdir(join(root, 'kelp'), { recursive: true });
  store = createSqlCatalogue({ dialect: 'sqlite', connection: join(base, 'node.sqlite') });
  await store.open();
  const state = new SqlScanState(store.store);
  const tree = new TreeStorageAdapter({ root });
  storage = new DatasetMapStorage(tree, () => state);
  await storage.open();
  scanner = new WrapScanner({
    storage: tree, root: tree.root, catalogue: store.catalogue, state, nodeId: 'urn:node:TEST',
    // The catalogue itself (this file tests the maps; the wrap suite tests events and notices).
    writer: { commit: (c) => store.catalogue.apply(c.change) },
    rightsHolder: 'CN=owner', datasets: 'folders', flushIntervalMs: 0,
  });
});
afterEach(async () => {
  await storage.close();
  await store.close();
  await rm(base, { recursive: true, force: true });
});

const put = (rel: string, text: string) => writeFile(join(root, ...rel.split('/')), text);
const record = async (pid: string): Promise<ObjectRecord> => {
  const r = await store.catalogue.get(pid);
  if (!r) throw new Error(`${pid} is not catalogued`);
  return r;
};
async function bytesOf(r: ObjectRecord, range?: { start: number; end?: number }): Promise<Buffer> {
  const read = await storage.read(r.storageKey, range ? { range } : {});
  const chunks: Buffer[] = [];
  for await (const c of read!.stream) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

describe('folder datasets in the tree scanner', () => {
  it('serves each version exactly (checksum, size, ranges); the tree listing never shows them', async () => {
    await put('kelp/eml.xml', EML);
    await put('kelp/a.csv', 'a\n1\n');
    await scanner.scan();
    const map = await record('kelp/.dataset-map.v1');
    const bytes = await bytesOf(map);
    expect(bytes.length).toBe(map.sysmeta.size);
    expect(createHash('sha1').update(bytes).digest('hex')).toBe(map.sysmeta.checksum.value);
    expect((await bytesOf(map, { start: 5, end: 9 })).equals(bytes.subarray(5, 10))).toBe(true);
    expect((await storage.stat(map.storageKey))?.size).toBe(bytes.length);
    await expect(storage.read(map.storageKey, { range: { start: bytes.length } })).rejects.toMatchObject({ kind: 'invalid' });
    // Not a generated map: the tree's answer (it refuses backslashes).
    await expect(storage.read(`${map.storageKey}x`)).rejects.toMatchObject({ kind: 'invalid' });
    expect((await readResourceMap(bytes))?.documents).toEqual([{ metadata: 'kelp/eml.xml', data: 'kelp/a.csv' }]);
    const keys: string[] = [];
    for await (const e of storage.list()) keys.push(e.key);
    expect(keys.sort()).toEqual(['kelp/a.csv', 'kelp/eml.xml']);
  });

  it('a folder that stops being a dataset gets its map archived; becoming one again publishes the next version', async () => {
    await put('kelp/eml.xml', EML);
    await put('kelp/a.csv', 'a\n1\n');
    await scanner.scan();
    // A second metadata document: no longer exactly one.
    await put('kelp/iso.xml', ISO);
    const second = await scanner.scan();
    expect(second.added).toBe(1); // the ISO file; no new map
    const v1 = await record('kelp/.dataset-map.v1');
    expect(v1.sysmeta.archived).toBe(true);
    expect(v1.sysmeta.serialVersion).toBe(2);
    await unlink(join(root, 'kelp', 'iso.xml'));
    await scanner.scan();
    const v2 = await record('kelp/.dataset-map.v2');
    expect(v2.sysmeta.obsoletes).toBe('kelp/.dataset-map.v1');
    expect((await record('kelp/.dataset-map.v1')).sysmeta.obsoletedBy).toBe('kelp/.dataset-map.v2');
    expect(v2.sysmeta.archived).toBe(false);
    // Unchanged membership: nothing new, nothing touched.
    const again = await scanner.scan();
    expect(again.added + again.changed).toBe(0);
    expect(await store.catalogue.get('kelp/.dataset-map.v3')).toBeUndefined();
  });

  it('folders without a metadata document, or with no data beside it, get no map', async () => {
    await put('kelp/a.csv', 'a\n1\n');
    await mkdir(join(root, 'docs'));
    await put('docs/eml.xml', EML);
    await scanner.scan();
    expect((await store.catalogue.list({ formatId: 'http://www.openarchives.org/ore/terms', start: 0, count: 10 })).total).toBe(0);
  });

  it('reads the scanner state page by page: a folder listed after the first 1,000 files is found', async () => {
    await mkdir(join(root, 'a'));
    await Promise.all(Array.from({ length: 1_050 }, (_, i) => put(`a/${i}.csv`, `${i}\n`)));
    await mkdir(join(root, 'z'));
    await put('z/eml.xml', EML);
    await put('z/b.csv', 'b\n');
    await scanner.scan();
    expect((await record('z/.dataset-map.v1')).sysmeta.seriesId).toBe('z/.dataset-map');
  });

  it('off by default', async () => {
    const inner = storage.inner as TreeStorageAdapter;
    const plain = new WrapScanner({ storage: inner, root: inner.root, catalogue: store.catalogue, state: new SqlScanState(store.store), writer: { commit: (c) => store.catalogue.apply(c.change) }, nodeId: 'urn:node:TEST', rightsHolder: 'CN=owner' });
    await put('kelp/eml.xml', EML);
    await put('kelp/a.csv', 'a\n1\n');
    await plain.scan();
    expect(await store.catalogue.get('kelp/.dataset-map.v1')).toBeUndefined();
  });
});
