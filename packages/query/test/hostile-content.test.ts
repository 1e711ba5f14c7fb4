import 'reflect-metadata';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberNodeClient } from '@memberkit/client';
import { createFilesystemStorage } from '@memberkit/adapter-filesystem';
import type { Logger } from '@memberkit/core';
import { SciencePool, type ResourceMap, type ScienceRead } from '@memberkit/science';
import type { StorageAdapter } from '@memberkit/types';
import { startNode } from '../../../test/helpers/start-node.js';
import { CatalogueIndexer, createQueryExtension, SqliteSearchIndex, type QueryExtension } from '../src/index.js';
import { sysmetaFor } from './node.js';
import { MAX_VALUES_PER_FIELD } from '../src/sql/compile.js';

const EML = 'https://eml.ecoinformatics.org/eml-2.2.0';
const ORE = 'http://www.openarchives.org/ore/terms';
const R = 'https://cn.dataone.org/cn/v2/resolve/';

/** A resource map whose aggregation holds descriptions nested `depth` deep (~7 bytes a level). */
function deepMap(depth: number): string {
  return `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ore="http://www.openarchives.org/ore/terms/"><rdf:Description rdf:about="${R}deep#aggregation"><ore:aggregates>${'<rdf:Description><ore:aggregates>'.repeat(depth)}${'</ore:aggregates></rdf:Description>'.repeat(depth)}</ore:aggregates></rdf:Description></rdf:RDF>`;
}
const eml = (title: string, extra = '') => `<eml:eml xmlns:eml="${EML}" packageId="p" system="s"><dataset><title>${title}</title>${extra}</dataset></eml:eml>`;

/** A pool that counts the documents handed to it. */
class CountingPool extends SciencePool {
  maps = 0;
  documents = 0;
  override metadata(...args: Parameters<SciencePool['metadata']>) {
    this.documents++;
    return super.metadata(...args);
  }
  override resourceMap(bytes: Uint8Array | string): Promise<ScienceRead<ResourceMap>> {
    this.maps++;
    return super.resourceMap(bytes);
  }
}

function capturingLogger(): Logger & { warnings: string[] } {
  const warnings: string[] = [];
  return { warnings, info() {}, debug() {}, error() {}, warn: (_o: object, msg?: string) => void warnings.push(msg ?? '') };
}

describe('query index: hostile content (issue #15)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memberkit-query-hostile-'));
  const file = join(dir, 'index.sqlite');
  const pool = new CountingPool({ threads: 1 });
  let ext: QueryExtension;
  let node: Awaited<ReturnType<typeof startNode>>;
  let storage: StorageAdapter;
  const client = (who: 'writer' | 'admin' | 'other') => new MemberNodeClient({ baseUrl: node.baseUrl, token: node.tokens[who], retries: 0 });
  const search = async (q: string, who?: 'writer' | 'admin' | 'other') => {
    const res = await fetch(`${node.baseUrl}/v2/query/solr/?${q}&wt=json&rows=100`, { headers: who ? { Authorization: `Bearer ${node.tokens[who]}` } : {} });
    expect(res.status).toBe(200);
    return ((await res.json()) as { response: { docs: Array<Record<string, unknown>> } }).response.docs;
  };

  beforeAll(async () => {
    ext = createQueryExtension({ followIntervalMs: 0, reconcileIntervalMs: 0, index: { kind: 'sqlite', file }, pool });
    node = await startNode({ nodeId: 'urn:node:QUERYTEST', name: 'hostile content', extensions: [ext], storage: (d) => (storage = createFilesystemStorage({ root: join(d, 'objects') })) });
  });
  afterAll(async () => {
    await node?.stop();
    await pool.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('create answers without parsing; content over a budget is "not indexed" with its reason, shown to the owner and administrators', async () => {
    const deep = deepMap(40_000);
    expect(deep.length).toBeGreaterThan(280_000);
    const writer = client('writer');
    const t0 = performance.now();
    await writer.create('hostile.deep-map', deep, sysmetaFor('hostile.deep-map', deep, ORE, node.subjects.writer, { accessPolicy: undefined }));
    const comments = eml('Comment flood', `<abstract><para><![CDATA[start ${'<!--'.repeat(200_000)} end]]></para></abstract>`);
    await writer.create('hostile.comments', comments, sysmetaFor('hostile.comments', comments, EML, node.subjects.writer));
    const keywords = eml('Keyword flood', `<keywordSet>${Array.from({ length: 30_000 }, (_, i) => `<keyword>kw${i % 25_000}</keyword>`).join('')}</keywordSet>`);
    await writer.create('hostile.keywords', keywords, sysmetaFor('hostile.keywords', keywords, EML, node.subjects.writer));
    // The three creates did not wait for any parsing (before: 52 s for the comment flood alone).
    expect(performance.now() - t0).toBeLessThan(10_000);
    // Found by system metadata at once.
    expect((await search(`q=id:hostile.keywords`)).map((d) => d.id)).toEqual(['hostile.keywords']);
    await ext.indexer!.settled();

    const status = await search('q=notIndexed:*&fl=id,notIndexed', 'writer');
    expect(status).toEqual([{ id: 'hostile.deep-map', notIndexed: 'elements nested more than 256 deep' }]);
    expect((await search('q=notIndexed:*&fl=id', 'admin')).map((d) => d.id)).toEqual(['hostile.deep-map']);
    expect(await search('q=notIndexed:*&fl=id', 'other')).toEqual([]);
    // Hostile but within budgets: indexed, with its content.
    expect((await search('q=abstract:end&fl=id')).map((d) => d.id)).toEqual(['hostile.comments']);
    // A descriptive field indexes its first MAX_VALUES_PER_FIELD distinct values (25,000 here).
    expect((await search(`q=keywords:kw${MAX_VALUES_PER_FIELD - 1}&fl=id`)).map((d) => d.id)).toEqual(['hostile.keywords']);
    expect(await search(`q=keywords:kw${MAX_VALUES_PER_FIELD}&fl=id`)).toEqual([]);
    expect((await search('q=Comment&fl=id')).map((d) => d.id)).toEqual(['hostile.comments']);
  });

  it('a system metadata change reuses parsed content; a restart does not parse content recorded as not indexed', async () => {
    const before = { maps: pool.maps, documents: pool.documents };
    const sm = await client('writer').getSystemMetadata('hostile.deep-map');
    await client('writer').updateSystemMetadata('hostile.deep-map', { ...sm, accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] } });
    await ext.indexer!.settled();
    expect(await search('q=notIndexed:*&fl=id,notIndexed')).toEqual([{ id: 'hostile.deep-map', notIndexed: 'elements nested more than 256 deep' }]);
    expect(pool.maps).toBe(before.maps);

    // Another process opening the same index file and catching up from the start (a restart).
    const index = new SqliteSearchIndex({ file });
    await index.open();
    // Back to the start of the catalogue's change feed: every change is indexed again.
    await index.setState('feed', '0');
    const head = await node.catalogue.changeHead!();
    const restartPool = new CountingPool({ threads: 1 });
    const logger = capturingLogger();
    const indexer = new CatalogueIndexer(index, { metadata: node.catalogue, storage, logger }, { pool: restartPool, followIntervalMs: 0, reconcileIntervalMs: 0 });
    try {
      expect(await indexer.follow()).toBe(head);
      expect(restartPool.maps).toBe(0);
      expect(restartPool.documents).toBe(2);
      expect(logger.warnings).toEqual([]);
    } finally {
      await indexer.stop();
      await index.close();
      await restartPool.close();
    }
    expect(await search('q=notIndexed:*&fl=id,notIndexed')).toEqual([{ id: 'hostile.deep-map', notIndexed: 'elements nested more than 256 deep' }]);
    expect((await search(`q=keywords:kw${MAX_VALUES_PER_FIELD - 1}&fl=id`)).map((d) => d.id)).toEqual(['hostile.keywords']);
  });

  it('an index file made before the notIndexed field gets its column on open', async () => {
    const old = join(dir, 'old.sqlite');
    const { default: Database } = await import('better-sqlite3');
    const db = new Database(old);
    db.exec('CREATE TABLE docs (rid INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, formatId TEXT)');
    db.close();
    const index = new SqliteSearchIndex({ file: old });
    await index.open();
    try {
      await index.upsert({ id: 'x', formatId: ORE, notIndexed: 'elements nested more than 256 deep', _readers: ['public'] });
    } finally {
      await index.close();
    }
  });
});
