// Datasets from folders (#18 item 3): `memberkit serve` over a tree whose folder holds an EML
// document and the CSV files it describes, with wrap.datasets "folders": the node publishes a
// generated resource map, and landing page, package and search show one dataset; a rescan
// after a CSV is added publishes the next map version obsoleting the first.
import { createHash } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { validateXml } from '@memberkit/testkit';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { startS3rver, type S3rverProcess } from '../adapters/s3/test/support/s3rver.js';
import { startNodeProcess, writeConfig, type NodeProcess } from './support/node-process.js';

const ROOT = join(import.meta.dirname, '..');
const ORE = 'http://www.openarchives.org/ore/terms';
const TITLE = 'Giant kelp canopy counts at Arroyo Quemado';
const SERIES = 'test:kelp/.dataset-map';

const EML = `<?xml version="1.0" encoding="UTF-8"?>
<eml:eml xmlns:eml="https://eml.ecoinformatics.org/eml-2.2.0" packageId="kelp.1" system="test">
  <dataset>
    <title>${TITLE}</title>
    <creator><individualName><givenName>Ada</givenName><surName>Marsh</surName></individualName></creator>
    <abstract><para>Counts of kelp fronds along fixed transects.</para></abstract>
    <contact><individualName><surName>Marsh</surName></individualName></contact>
    <dataTable><entityName>fronds.csv</entityName><entityDescription>Frond counts per transect</entityDescription></dataTable>
    <dataTable><entityName>sites.csv</entityName><entityDescription>Transect locations</entityDescription></dataTable>
  </dataset>
</eml:eml>
`;

function scan(dir: string): string {
  return execFileSync(process.execPath, ['--conditions=@memberkit/source', '--import', 'tsx', join(ROOT, 'packages/cli/src/bin.ts'), 'scan', dir], {
    cwd: ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.dev.json') },
    encoding: 'utf8',
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe('wrap mode: a folder with an EML and its CSV files is one dataset', () => {
  let work: string;
  let tree: string;
  let dataDir: string;
  let node: NodeProcess;
  const get = (path: string) => fetch(`${node.baseUrl}${path}`);
  const meta = async (pid: string) => (await get(`/v2/meta/${encodeURIComponent(pid)}`)).text();

  beforeAll(async () => {
    work = mkdtempSync(join(tmpdir(), 'memberkit-datasets-'));
    tree = join(work, 'archive');
    dataDir = join(work, 'node');
    mkdirSync(join(tree, 'kelp'), { recursive: true });
    mkdirSync(join(tree, 'loose'), { recursive: true });
    writeFileSync(join(tree, 'kelp', 'metadata.xml'), EML);
    writeFileSync(join(tree, 'kelp', 'fronds.csv'), 'transect,fronds\n1,40\n2,52\n');
    writeFileSync(join(tree, 'kelp', 'sites.csv'), 'transect,lat,lon\n1,34.47,-120.12\n');
    // A folder without a metadata document is no dataset.
    writeFileSync(join(tree, 'loose', 'a.csv'), 'x\n1\n');
    writeConfig(dataDir, {
      storage: { type: 'tree', root: tree },
      wrap: { rightsHolder: 'CN=archive owner', pidPrefix: 'test:', datasets: 'folders' },
      extensions: { views: true, packages: true, query: { enabled: true } },
    });
    node = await startNodeProcess(dataDir);
  }, 60_000);
  afterAll(async () => {
    if (node?.child.exitCode !== null || node?.child.signalCode !== null) console.error(`node process ended early:\n${node?.output()}`);
    await node?.stop();
    rmSync(work, { recursive: true, force: true });
  });

  it('publishes one resource map for the folder: exact bytes, checksum, series, cito relations', async () => {
    const sysmeta = await until('the dataset map', async () => {
      const res = await get(`/v2/meta/${encodeURIComponent(`${SERIES}.v1`)}`);
      return res.status === 200 ? res.text() : undefined;
    });
    expect(await validateXml(sysmeta, 'map system metadata')).toBeUndefined();
    expect(sysmeta).toContain(`<formatId>${ORE}</formatId>`);
    expect(sysmeta).toContain(`<seriesId>${SERIES}</seriesId>`);
    const res = await get(`/v2/object/${encodeURIComponent(`${SERIES}.v1`)}`);
    expect(res.status).toBe(200);
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(sysmeta).toContain(`<size>${bytes.length}</size>`);
    expect(sysmeta).toContain(`<checksum algorithm="SHA-1">${createHash('sha1').update(bytes).digest('hex')}</checksum>`);
    const rdf = bytes.toString('utf8');
    expect(rdf).toContain('cito:documents rdf:resource="https://cn.dataone.org/cn/v2/resolve/test%3Akelp%2Ffronds.csv"');
    expect(rdf).toContain('cito:isDocumentedBy rdf:resource="https://cn.dataone.org/cn/v2/resolve/test%3Akelp%2Fmetadata.xml"');
    // The series resolves to its head; the loose folder got no map.
    expect((await get(`/v2/meta/${encodeURIComponent(SERIES)}`)).status).toBe(200);
    expect((await get(`/v2/meta/${encodeURIComponent('test:loose/.dataset-map.v1')}`)).status).toBe(404);
    const list = await (await get(`/v2/object?formatId=${encodeURIComponent(ORE)}`)).text();
    expect(list).toMatch(/total="1"/);
  }, 40_000);

  it("the EML's landing page lists the dataset's files", async () => {
    const html = await (await get(`/v2/views/default/${encodeURIComponent('test:kelp/metadata.xml')}`)).text();
    expect(html).toContain(TITLE);
    // Links to the data objects (the EML names the files too: the links come from the map).
    for (const csv of ['fronds.csv', 'sites.csv']) expect(html).toContain(`/v2/object/${encodeURIComponent(`test:kelp/${csv}`)}"`);
    expect(html).toContain(`/v2/packages/application%2Fbagit-097/${encodeURIComponent(`${SERIES}.v1`)}`);
  });

  it('the package zip holds the metadata document and the CSV files', async () => {
    const res = await get(`/v2/packages/application%2Fbagit-097/${encodeURIComponent(`${SERIES}.v1`)}`);
    expect(res.status).toBe(200);
    const file = join(work, 'package.zip');
    writeFileSync(file, Buffer.from(await res.arrayBuffer()));
    const names = execFileSync('unzip', ['-Z1', file]).toString();
    expect(names).toMatch(/\/data\/.*fronds\.csv$/m);
    expect(names).toMatch(/\/data\/.*sites\.csv$/m);
    expect(names).toMatch(/\/data\/.*metadata\.xml$/m);
  });

  it("a query for the dataset's title finds the metadata document, which names its map", async () => {
    const doc = await until('the search hit with its map', async () => {
      const res = await get(`/v2/query/solr/?q=${encodeURIComponent(`title:"${TITLE}"`)}&wt=json&fl=id,resourceMap,documents`);
      if (res.status !== 200) return undefined;
      const body = (await res.json()) as { response: { docs: Array<{ id: string; resourceMap?: string[]; documents?: string[] }> } };
      const hit = body.response.docs.find((d) => d.id === 'test:kelp/metadata.xml');
      return hit?.resourceMap?.includes(`${SERIES}.v1`) ? hit : undefined;
    });
    expect(doc.documents).toEqual(expect.arrayContaining(['test:kelp/fronds.csv', 'test:kelp/sites.csv']));
  }, 40_000);

  it('a rescan after a CSV is added publishes the next map version, obsoleting the first', async () => {
    writeFileSync(join(tree, 'kelp', 'urchins.csv'), 'transect,urchins\n1,3\n');
    scan(dataDir);
    const v2 = await meta(`${SERIES}.v2`);
    expect(await validateXml(v2, 'v2 system metadata')).toBeUndefined();
    expect(v2).toContain(`<obsoletes>${SERIES}.v1</obsoletes>`);
    expect(v2).toContain(`<seriesId>${SERIES}</seriesId>`);
    const v1 = await meta(`${SERIES}.v1`);
    expect(v1).toContain(`<obsoletedBy>${SERIES}.v2</obsoletedBy>`);
    // A harvesting CN sees both by dateSysMetadataModified moving forward.
    const modified = (xml: string) => Date.parse(/<dateSysMetadataModified>([^<]+)</.exec(xml)![1]!);
    expect(modified(v1)).toBeGreaterThan(0);
    expect(modified(v2)).toBeGreaterThanOrEqual(modified(v1));
    const rdf = await (await get(`/v2/object/${encodeURIComponent(`${SERIES}.v2`)}`)).text();
    expect(rdf).toContain('test%3Akelp%2Furchins.csv');
    // The old version's bytes are still served exactly.
    expect((await get(`/v2/object/${encodeURIComponent(`${SERIES}.v1`)}`)).status).toBe(200);
    // The series now resolves to the new version; nothing changes on a scan that finds nothing new.
    expect(await meta(SERIES)).toContain(`<identifier>${SERIES}.v2</identifier>`);
    scan(dataDir);
    expect((await get(`/v2/meta/${encodeURIComponent(`${SERIES}.v3`)}`)).status).toBe(404);
  }, 60_000);
});

describe('wrap mode over a bucket: the same dataset from key folders', () => {
  let s3: S3rverProcess;
  let dir: string;
  let node: NodeProcess;
  beforeAll(async () => {
    s3 = await startS3rver();
    const client = s3.client();
    for (const [key, body] of [['kelp/metadata.xml', EML], ['kelp/fronds.csv', 'transect,fronds\n1,40\n']]) {
      await client.send(new PutObjectCommand({ Bucket: 'bucket', Key: `wrapped/${key}`, Body: body }));
    }
    dir = mkdtempSync(join(tmpdir(), 'memberkit-datasets-s3-'));
    writeConfig(dir, {
      storage: { type: 's3-bucket', bucket: 'bucket', prefix: 'wrapped/', ...s3.connection },
      wrap: { rightsHolder: 'CN=archive owner', datasets: 'folders' },
    });
    node = await startNodeProcess(dir);
  }, 60_000);
  afterAll(async () => {
    await node?.stop();
    await s3?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('serves the generated map with the checksum and size its system metadata gives', async () => {
    const pid = 'kelp/.dataset-map.v1';
    const sysmeta = await until('the bucket dataset map', async () => {
      const res = await fetch(`${node.baseUrl}/v2/meta/${encodeURIComponent(pid)}`);
      return res.status === 200 ? res.text() : undefined;
    });
    const bytes = Buffer.from(await (await fetch(`${node.baseUrl}/v2/object/${encodeURIComponent(pid)}`)).arrayBuffer());
    expect(sysmeta).toContain(`<size>${bytes.length}</size>`);
    // a bucket's default digest is the MD5 of its ETags (wrap.checksumAlgorithm): the generated map's too
    expect(sysmeta).toContain(`<checksum algorithm="MD5">${createHash('md5').update(bytes).digest('hex')}</checksum>`);
    expect(bytes.toString('utf8')).toContain('cito:isDocumentedBy rdf:resource="https://cn.dataone.org/cn/v2/resolve/kelp%2Fmetadata.xml"');
  }, 40_000);
});
