// Wrap mode end to end: `memberkit serve` over an existing tree of 10,000 files, then
// `memberkit scan` after files are added, changed and removed.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ObjectListCodec } from '@memberkit/types';
import { startNodeProcess, testToken, writeConfig, type NodeProcess } from './support/node-process.js';

const ROOT = join(import.meta.dirname, '..');
const FILES = 10_000;

async function list(node: NodeProcess, query = '') {
  const res = await fetch(`${node.baseUrl}/v2/object?count=10000${query}`);
  expect(res.status).toBe(200);
  return ObjectListCodec.decode(await res.text());
}

function scan(dir: string): string {
  return execFileSync(process.execPath, ['--conditions=@memberkit/source', '--import', 'tsx', join(ROOT, 'packages/cli/src/bin.ts'), 'scan', dir], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.dev.json') },
    encoding: 'utf8',
  });
}

describe('wrap mode over a tree of 10,000 files', () => {
  let work: string;
  let tree: string;
  let dataDir: string;
  let node: NodeProcess;
  let firstListMs: number;

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'memberkit-wrap-'));
    tree = join(work, 'archive');
    dataDir = join(work, 'node');
    for (let d = 0; d < 100; d++) {
      const sub = join(tree, `site-${d}`);
      mkdirSync(sub, { recursive: true });
      for (let f = 0; f < FILES / 100; f++) writeFileSync(join(sub, `obs ${f}.csv`), `site,value\n${d},${f}\n`);
    }
    writeFileSync(join(work, 'secret.txt'), 'outside the root');
    symlinkSync(join(work, 'secret.txt'), join(tree, 'link-out.txt'));
    writeConfig(dataDir, { storage: { type: 'tree', root: tree }, wrap: { rightsHolder: 'CN=archive owner' } });
    node = await startNodeProcess(dataDir);
    const started = Date.now();
    // The first listObjects answers at once; objects appear as their checksums are computed.
    const first = await list(node, '&count=0');
    firstListMs = Date.now() - started;
    expect(first.total).toBeGreaterThanOrEqual(0);
  }, 120_000);
  afterAll(async () => {
    if (node?.child.exitCode !== null || node?.child.signalCode !== null) console.error(`node process ended early:\n${node?.output()}`);
    await node?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('answers the first listObjects within seconds of start, and lists every file once hashed', async () => {
    expect(firstListMs).toBeLessThan(5_000);
    const deadline = Date.now() + 110_000;
    let total = 0;
    while (Date.now() < deadline) {
      total = (await list(node, '&count=0')).total;
      if (total === FILES) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(total).toBe(FILES);
  }, 120_000);

  it('serves a file by its relative path, with format, checksum and public read', async () => {
    const pid = 'site-7/obs%2042.csv';
    const res = await fetch(`${node.baseUrl}/v2/object/${encodeURIComponent(pid)}`);
    expect(res.status).toBe(200);
    expect(await res.text()).toBe('site,value\n7,42\n');
    const meta = await (await fetch(`${node.baseUrl}/v2/meta/${encodeURIComponent(pid)}`)).text();
    expect(meta).toContain('<formatId>text/csv</formatId>');
    expect(meta).toContain('<rightsHolder>CN=archive owner</rightsHolder>');
    const sum = await (await fetch(`${node.baseUrl}/v2/checksum/${encodeURIComponent(pid)}?checksumAlgorithm=MD5`)).text();
    expect(sum).toContain('algorithm="MD5"');
  });

  it('never serves a symlink leading outside the root', async () => {
    expect((await fetch(`${node.baseUrl}/v2/object/link-out.txt`)).status).toBe(404);
    expect((await fetch(`${node.baseUrl}/v2/object/${encodeURIComponent('../secret.txt')}`)).status).toBe(404);
  });

  it('refuses writes: the archive is read-only', async () => {
    const node_ = await (await fetch(`${node.baseUrl}/v2/node`)).text();
    expect(node_).toContain('<service name="MNStorage" version="v2" available="false">');
    const form = new FormData();
    form.append('pid', 'new');
    form.append('object', new Blob(['x']));
    const res = await fetch(`${node.baseUrl}/v2/object`, { method: 'POST', body: form, headers: { Authorization: `Bearer ${await testToken('CN=writer')}` } });
    expect(res.status).toBe(501);
    expect(await res.text()).toContain('name="NotImplemented"');
  });

  it('a rescan shows added, changed and removed files, moving dateSysMetadataModified forward', async () => {
    const before = await list(node);
    const maxBefore = Math.max(...before.objectInfo.map((o) => o.dateSysMetadataModified.getTime()));
    // A digest computed on request (MD5; SHA-1 is recorded) is cached: it must follow the file's bytes.
    const md5Of = async () => (await fetch(`${node.baseUrl}/v2/checksum/${encodeURIComponent('site-2/obs%203.csv')}?checksumAlgorithm=MD5`)).text();
    expect(await md5Of()).toContain(createHash('md5').update(readFileSync(join(tree, 'site-2', 'obs 3.csv'))).digest('hex'));
    writeFileSync(join(tree, 'site-1', 'new file.csv'), 'site,value\n1,new\n');
    writeFileSync(join(tree, 'site-2', 'obs 3.csv'), 'site,value\n2,changed and longer\n');
    unlinkSync(join(tree, 'site-3', 'obs 4.csv'));
    const out = scan(dataDir);
    expect(out).toMatch(/added 1, changed 1, removed 1/);
    const changedSince = await list(node, `&fromDate=${new Date(maxBefore + 1).toISOString()}`);
    const ids = changedSince.objectInfo.map((o) => o.identifier).sort();
    expect(ids).toEqual(['site-1/new%20file.csv', 'site-2/obs%203.csv']);
    expect((await fetch(`${node.baseUrl}/v2/meta/${encodeURIComponent('site-3/obs%204.csv')}`)).status).toBe(404);
    expect((await list(node, '&count=0')).total).toBe(FILES);
    expect(await (await fetch(`${node.baseUrl}/v2/object/${encodeURIComponent('site-2/obs%203.csv')}`)).text()).toBe('site,value\n2,changed and longer\n');
    expect(await md5Of()).toContain(createHash('md5').update('site,value\n2,changed and longer\n').digest('hex'));
  }, 90_000);
});
