// Formats of a wrapped tree (#18), scanned by the core WrapScanner with its scan state on the
// SQL store: identified from a file's first bytes once per file
// version (the result kept with the checksum cache, no read on an unchanged file), read only
// when the name does not settle the format; a node upgraded from name-based formats corrects
// the formats its scanner had set (WaterML for every .xml) from the heads alone, and keeps an
// administrator's; a file changing kind gets its new format; a bad override is refused.
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it } from 'vitest';
import { AdapterError, type ByteRange, type ChecksumAlgorithmName, type StorageReadResult } from '@memberkit/types';
import { createSqlCatalogue, SqlScanState, type SqlCatalogue } from '@memberkit/adapter-sql';
import { WrapScanner, type WrapScannerOptions } from '@memberkit/core';
import { TreeStorageAdapter } from '../src/tree-storage.js';

/** Counts the reads of heads (with a digest, or alone) and the digests the scanner asks for. */
class CountingTree extends TreeStorageAdapter {
  heads: string[] = [];
  digests: string[] = [];
  override async read(key: string, options?: { range?: ByteRange; signal?: AbortSignal }): Promise<StorageReadResult | undefined> {
    this.heads.push(key);
    return super.read(key, options);
  }
  override async digest(key: string, algorithm: ChecksumAlgorithmName, options?: Parameters<TreeStorageAdapter['digest']>[2]) {
    this.digests.push(key);
    if (options?.headBytes) this.heads.push(key);
    const d = await super.digest(key, algorithm, options);
    // The head comes with the digest, never read a second time.
    if (d && options?.headBytes) expect(d.head, key).toBeDefined();
    return d;
  }
}

const EML = '<?xml version="1.0"?>\n<eml:eml xmlns:eml="eml://ecoinformatics.org/eml-2.1.1" packageId="p.1.1" system="s"><dataset><title>T</title></dataset></eml:eml>\n';
const ISO = '<gmd:MD_Metadata xmlns:gmd="http://www.isotc211.org/2005/gmd"/>';
const WATERML_1 = 'http://www.cuahsi.org/waterML/1.0/';

let base: string;
let root: string;
let store: SqlCatalogue;
let state: SqlScanState;
let tree: CountingTree;

beforeEach(async () => {
  base = await mkdtemp(join(tmpdir(), 'mk-scan-formats-'));
  root = join(base, 'tree');
  await mkdir(join(root, 'meta'), { recursive: true });
  store = createSqlCatalogue({ dialect: 'sqlite', connection: join(base, 'node.sqlite') });
  await store.open();
  state = new SqlScanState(store.store);
  tree = new CountingTree({ root });
  await tree.open();
});
afterEach(async () => {
  await tree.close();
  await store.close();
  await rm(base, { recursive: true, force: true });
});

function scanner(extra: Partial<WrapScannerOptions> = {}): WrapScanner {
  return new WrapScanner({
    storage: tree, root: tree.root, catalogue: store.catalogue, state, nodeId: 'urn:node:TEST', rightsHolder: 'CN=owner',
    // The catalogue itself (this file tests formats; the wrap suite tests events and notices).
    writer: { commit: (c) => store.catalogue.apply(c.change) },
    ...extra,
  });
}
const formatOf = async (pid: string) => (await store.catalogue.get(pid))?.sysmeta;

it('reads the head of a file once per version, only when its name does not settle the format', async () => {
  await writeFile(join(root, 'meta/eml.xml'), EML);
  await writeFile(join(root, 'table.csv'), 'a,b\n1,2\n');
  const s = scanner();
  expect(await s.scan()).toMatchObject({ added: 2 });
  expect(tree.heads).toEqual(['meta/eml.xml']);
  expect((await formatOf('meta/eml.xml'))).toMatchObject({ formatId: 'eml://ecoinformatics.org/eml-2.1.1', mediaType: { name: 'text/xml' } });
  expect((await formatOf('table.csv'))?.formatId).toBe('text/csv');
  expect(await s.scan()).toMatchObject({ unchanged: 2 });
  expect(tree.heads, 'unchanged: not read again').toHaveLength(1);

  // The file now holds ISO 19139: the format the scanner set follows the content.
  await writeFile(join(root, 'meta/eml.xml'), ISO);
  expect(await s.scan()).toMatchObject({ changed: 1 });
  expect(await formatOf('meta/eml.xml')).toMatchObject({ formatId: 'http://www.isotc211.org/2005/gmd', serialVersion: 2 });
});

it('after an upgrade, corrects the formats its scanner had set from the heads, keeps an administrator\'s, and does not hash again', async () => {
  await writeFile(join(root, 'meta/eml.xml'), EML);
  await writeFile(join(root, 'meta/iso.xml'), ISO);
  await writeFile(join(root, 'table.csv'), 'a,b\n1,2\n');
  expect(await scanner().scan()).toMatchObject({ added: 3 });
  // As an earlier version left them: no format in the cache, WaterML 1.0 for every .xml, and
  // an administrator who had set the ISO record's format by hand.
  const rows = await state.page(tree.root, '', 100);
  expect(rows).toHaveLength(3);
  await state.put(tree.root, rows.map((r) => ({ ...r, format: null })));
  expect([...(await state.getMany(tree.root, ['meta/eml.xml'])).values()][0]?.format).toBeNull();
  for (const [pid, formatId] of [['meta/eml.xml', WATERML_1], ['meta/iso.xml', 'http://www.isotc211.org/2005/gmd-noaa']] as const) {
    const r = (await store.catalogue.get(pid))!;
    await store.catalogue.apply!({ replace: [{ pid, expectedSerialVersion: r.sysmeta.serialVersion, sysmeta: { ...r.sysmeta, formatId, serialVersion: r.sysmeta.serialVersion + 1 } }] });
  }
  tree.heads = [];
  tree.digests = [];
  const before = (await formatOf('meta/eml.xml'))!;

  const report = await scanner().scan();
  expect(report).toMatchObject({ changed: 1, unchanged: 2, added: 0, removed: 0 });
  expect(tree.digests, 'same bytes: no checksum computed again').toEqual([]);
  expect(tree.heads.sort()).toEqual(['meta/eml.xml', 'meta/iso.xml']);
  const eml = (await formatOf('meta/eml.xml'))!;
  expect(eml).toMatchObject({ formatId: 'eml://ecoinformatics.org/eml-2.1.1', serialVersion: before.serialVersion + 1, checksum: before.checksum });
  // A CN harvesting by fromDate sees the correction.
  expect(eml.dateSysMetadataModified.getTime()).toBeGreaterThan(before.dateSysMetadataModified.getTime());
  expect((await formatOf('meta/iso.xml'))?.formatId, "an administrator's format stays").toBe('http://www.isotc211.org/2005/gmd-noaa');

  tree.heads = [];
  expect(await scanner().scan()).toMatchObject({ unchanged: 3 });
  expect(tree.heads, 'identified once').toEqual([]);
});

it('applies a new glob override to unchanged files without reading them', async () => {
  await writeFile(join(root, 'meta/eml.xml'), '<record/>');
  expect(await scanner().scan()).toMatchObject({ added: 1 });
  expect((await formatOf('meta/eml.xml'))?.formatId).toBe('text/xml');
  tree.heads = [];
  expect(await scanner({ formatOverrides: { 'meta/*.xml': 'eml://ecoinformatics.org/eml-2.1.1' } }).scan()).toMatchObject({ changed: 1 });
  expect(tree.heads).toEqual([]);
  expect((await formatOf('meta/eml.xml'))?.formatId).toBe('eml://ecoinformatics.org/eml-2.1.1');
});

it('refuses an override outside the federation\'s list unless it is an extra format', () => {
  expect(() => scanner({ formatOverrides: { '**/*.xml': 'eml://example.org/eml-9' } })).toThrow(AdapterError);
  expect(() => scanner({ formatOverrides: { '**/*.xml': 'eml://example.org/eml-9' } })).toThrow(/formatOverrides\["\*\*\/\*\.xml"\]/);
  expect(() => scanner({ formatOverrides: { '**/*.xml': 'eml://example.org/eml-9' }, extraFormats: ['eml://example.org/eml-9'] })).not.toThrow();
});
