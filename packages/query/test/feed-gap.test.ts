// The query index fell behind the change feed's retention (indexer.ts applyFeed): a node whose
// index was stopped while another node on the same catalogue created, deleted and made objects
// private, and the feed was pruned past those changes, re-indexes everything on start and drops
// PIDs the catalogue lost, so its index is exact: new objects found, deleted ones gone, private
// ones refused to anonymous callers. Real SQLite catalogue shared by two nodes, real index file.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { MemberNodeClient } from '@memberkit/client';
import { createFilesystemStorage } from '@memberkit/adapter-filesystem';
import { createSqlCatalogue } from '@memberkit/adapter-sql';
import type { CatalogueAdapter } from '@memberkit/types';
import { startNode, type StartedNode } from '../../../test/helpers/start-node.js';
import { createQueryExtension } from '../src/index.js';
import { sysmetaFor } from './node.js';

let work: string;
let writer: StartedNode;
const catalogueFile = () => join(work, 'catalogue.sqlite');
const indexFile = () => join(work, 'index.sqlite');

/** A node on the shared catalogue and storage; with a query index in the shared index file when `indexed`. */
function startShared(indexed: boolean): Promise<StartedNode> {
  const store = createSqlCatalogue({ dialect: 'sqlite', connection: catalogueFile() });
  return startNode({
    nodeId: 'urn:node:FEEDGAP',
    catalogue: () => ({ metadata: store.catalogue, eventLog: store.eventLog }),
    storage: () => createFilesystemStorage({ root: join(work, 'objects') }),
    ...(indexed ? { extensions: [createQueryExtension({ index: { kind: 'sqlite', file: indexFile() }, followIntervalMs: 0, reconcileIntervalMs: 0 })] } : {}),
  });
}

const client = (node: StartedNode, who?: 'writer' | 'admin') => new MemberNodeClient({ baseUrl: node.baseUrl, ...(who ? { token: node.tokens[who] } : {}), retries: 0 });

async function found(node: StartedNode, who?: 'admin'): Promise<string[]> {
  const res = await fetch(`${node.baseUrl}/v2/query/solr/?q=id:gap-*&fl=id&rows=100&wt=json`, { headers: who ? { Authorization: `Bearer ${node.tokens[who]}` } : {} });
  expect(res.status).toBe(200);
  return ((await res.json()) as { response: { docs: Array<{ id: string }> } }).response.docs.map((d) => d.id).sort();
}

async function create(pid: string): Promise<void> {
  const bytes = `bytes of ${pid}`;
  await client(writer, 'writer').create(pid, bytes, sysmetaFor(pid, bytes, 'text/csv', writer.subjects.writer));
}

beforeAll(async () => {
  work = mkdtempSync(join(tmpdir(), 'memberkit-feedgap-'));
  writer = await startShared(false);
});

afterAll(async () => {
  await writer?.stop();
  rmSync(work, { recursive: true, force: true });
});

it('an index that fell behind the pruned change feed is rebuilt exactly: new found, deleted gone, private refused', async () => {
  for (const pid of ['gap-kept', 'gap-deleted', 'gap-private']) await create(pid);
  // The indexed node follows the feed to its head, then stops (its index file keeps the position).
  const before = await startShared(true);
  expect(await found(before)).toEqual(['gap-deleted', 'gap-kept', 'gap-private']);
  await before.stop();

  // Meanwhile, on the other node: a new object, a delete, an object made private; then one more
  // create, so that after pruning the only entry left is unrelated to the three changes.
  await create('gap-new');
  await client(writer, 'admin').delete('gap-deleted');
  const w = client(writer, 'writer');
  const sm = await w.getSystemMetadata('gap-private');
  await w.updateSystemMetadata('gap-private', { ...sm, accessPolicy: { allow: [{ subject: [writer.subjects.writer], permission: ['write'] }] } });
  await create('gap-last');
  const catalogue = writer.catalogue as Required<CatalogueAdapter>;
  const head = await catalogue.changeHead();
  expect(await catalogue.pruneChanges(new Date(Date.now() + 60_000), 1)).toBeGreaterThan(0);
  expect((await catalogue.changesSince(0, 100)).entries.map((e) => e.seq), 'the feed keeps only its newest entry').toEqual([head]);

  // Restarted on the same index file: it finds the gap and re-indexes in full.
  const after = await startShared(true);
  try {
    expect(await found(after), 'anonymous').toEqual(['gap-kept', 'gap-last', 'gap-new']);
    expect(await found(after, 'admin'), 'administrator').toEqual(['gap-kept', 'gap-last', 'gap-new', 'gap-private']);
  } finally {
    await after.stop();
  }
}, 30_000);

it('pruning by age removes the oldest entries up to the first within retention, never the newest', async () => {
  const catalogue = writer.catalogue as Required<CatalogueAdapter>;
  await create('gap-age-old');
  await new Promise((r) => setTimeout(r, 20));
  const cut = new Date();
  await create('gap-age-young');
  const head = await catalogue.changeHead();
  await catalogue.pruneChanges(cut, 1_000_000);
  expect((await catalogue.changesSince(0, 100)).entries.map((e) => e.seq)).toEqual([head]);
});
