// The SciencePool's workers in a node started the way users start it (`memberkit serve` under
// `node --import tsx`, workers inheriting its execArgv): a 1.9 MB resource map nested 32,000
// deep (which took the node to 4 GB and a crash, again at every restart) and an EML whose
// CDATA holds 200,000 `<!--` (52 s frozen). The node keeps answering ping, the map is recorded
// as not indexed, the EML is indexed, and a restart answers at once without parsing either.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNodeProcess, testToken, writeConfig, type NodeProcess } from '../../../test/support/node-process.js';
import { clientSysmeta, createForm } from '../../../test/support/sysmeta.js';
import { PingMonitor } from '../../../test/support/hostile/ping-monitor.js';

const R = 'https://cn.dataone.org/cn/v2/resolve/';
const EML = 'https://eml.ecoinformatics.org/eml-2.2.0';
// Generous for a 2-core machine shared with the rest of the suite (2.5 s seen once at a load
// average of 25, 1.2 s at 16); the failures this guards against are a dead node (no answer)
// and freezes of 13 to 52 s.
const PING_LIMIT_MS = 5000;

function deepMap(depth: number, bytes: number): Uint8Array {
  const pad = 'x'.repeat(Math.max(0, Math.floor(bytes / depth) - 60));
  const open = `<rdf:Description><dcterms:title>${pad}</dcterms:title><ore:aggregates>`;
  return Buffer.from(
    `<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ore="http://www.openarchives.org/ore/terms/" xmlns:dcterms="http://purl.org/dc/terms/"><rdf:Description rdf:about="${R}deep#aggregation"><ore:aggregates>${open.repeat(depth)}${'</ore:aggregates></rdf:Description>'.repeat(depth)}</ore:aggregates></rdf:Description></rdf:RDF>`,
  );
}

describe('hostile science content in a node process (issues #15, #16)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'memberkit-hostile-process-'));
  let node: NodeProcess;
  let monitor: PingMonitor;
  let token: string;

  beforeAll(async () => {
    token = await testToken('CN=admin');
    writeConfig(dir, { extensions: { views: false, packages: false, query: { enabled: true } } });
    node = await startNodeProcess(dir);
    monitor = new PingMonitor(node.baseUrl);
  });
  afterAll(async () => {
    await monitor?.stop();
    await node?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  const create = async (pid: string, bytes: Uint8Array, formatId: string) => {
    const res = await fetch(`${node.baseUrl}/v2/object`, { method: 'POST', headers: { Authorization: `Bearer ${token}` }, body: createForm(pid, bytes, clientSysmeta(pid, bytes, { formatId, rightsHolder: 'CN=admin' })) });
    expect(res.status, await res.clone().text()).toBe(200);
  };
  const search = async (q: string) => {
    const res = await fetch(`${node.baseUrl}/v2/query/solr/?${q}&wt=json`, { headers: { Authorization: `Bearer ${token}` } });
    expect(res.status).toBe(200);
    return ((await res.json()) as { response: { docs: Array<Record<string, unknown>> } }).response.docs;
  };

  it('deep map and comment flood: ping answers throughout, the map is not indexed, the EML is', async () => {
    const since = Date.now();
    await create('hostile.deep', deepMap(32_000, 1_900_000), 'http://www.openarchives.org/ore/terms');
    const flood = Buffer.from(`<eml:eml xmlns:eml="${EML}" packageId="p" system="s"><dataset><title>Comment flood</title><abstract><para><![CDATA[${'<!--'.repeat(200_000)} floodend]]></para></abstract></dataset></eml:eml>`);
    await create('hostile.flood', flood, EML);
    // Parsed off the request path, in a worker that loads from TypeScript source here.
    const deadline = Date.now() + 60_000;
    let status: Array<Record<string, unknown>> = [];
    let eml: Array<Record<string, unknown>> = [];
    while (Date.now() < deadline) {
      status = await search('q=notIndexed:*&fl=id,notIndexed');
      // Its title (the full text keeps a document's first MAX_TEXT_CHARS; the flood is longer).
      eml = await search('q=title:"Comment flood"&fl=id');
      if (status.length && eml.length) break;
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(status).toEqual([{ id: 'hostile.deep', notIndexed: 'elements nested more than 256 deep' }]);
    expect(eml).toEqual([{ id: 'hostile.flood' }]);
    await monitor.settle(Date.now());
    const w = monitor.window(since, PING_LIMIT_MS);
    console.log(`worst ping during the uploads and their indexing: ${w.worst.toFixed(0)} ms over ${w.count} pings; peak RSS ${(node.rss().peak / 2 ** 20).toFixed(0)} MiB`);
    expect(w.failures).toEqual([]);
    expect(w.worst).toBeLessThan(PING_LIMIT_MS);
    expect(node.output().match(/not indexed: elements nested more than 256 deep/g)).toHaveLength(1);
  }, 90_000);

  it('a restart answers ping at once and parses neither document again', async () => {
    monitor.pause();
    await node.stop();
    const t0 = Date.now();
    node = await startNodeProcess(dir);
    monitor.retarget(node.baseUrl);
    monitor.resume();
    const res = await fetch(`${node.baseUrl}/v2/monitor/ping`);
    expect(res.status).toBe(200);
    expect(Date.now() - t0).toBeLessThan(30_000);
    const since = Date.now();
    await new Promise((r) => setTimeout(r, 1500));
    expect(monitor.window(since, PING_LIMIT_MS).slow).toEqual([]);
    expect(await search('q=notIndexed:*&fl=id,notIndexed')).toEqual([{ id: 'hostile.deep', notIndexed: 'elements nested more than 256 deep' }]);
    expect(node.output()).not.toMatch(/not indexed/);
  }, 90_000);
});
