import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberNodeClient } from '@memberkit/client';
import { sysmeta, startViewsNode, type ViewsNode } from './support/node.js';
import { EML, EML_FORMAT, loadDataset, PIDS } from './support/dataset.js';
import { unzip } from './support/unzip.js';
import { bagRoot, validateBag } from './support/bagit.js';

const enc = encodeURIComponent;

describe('MNView and MNPackage on a real node', () => {
  let node: ViewsNode;
  let files: Awaited<ReturnType<typeof loadDataset>>;
  const get = (path: string, token?: string): Promise<Response> => fetch(`${node.baseUrl}${path}`, token ? { headers: { Authorization: `Bearer ${token}` } } : {});

  beforeAll(async () => {
    node = await startViewsNode();
    files = await loadDataset(node);
  });
  afterAll(async () => node?.stop());

  it('lists MNView and MNPackage in the capabilities', async () => {
    for (const v of ['v1', 'v2']) {
      const xml = await (await get(`/${v}/`)).text();
      expect(xml).toMatch(/<service name="MNView" version="v1" available="true"(\/>|><\/service>)/);
      expect(xml).toMatch(/<service name="MNPackage" version="v2" available="true"(\/>|><\/service>)/);
    }
  });

  it('listViews at /views and /view (v1 and v2), with the default theme', async () => {
    for (const path of ['/v2/views', '/v2/view', '/v1/views', '/v1/view']) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toMatch(/xml/);
      const xml = await res.text();
      expect(xml).toMatch(/<(\w+:)?optionList [^>]*key="theme"/);
      expect(xml).toContain('<option>default</option>');
      expect(xml).toContain('<option>metadata</option>');
      expect(xml).toContain('<option>jsonld</option>');
    }
  });

  it('renders the landing page of the metadata, of a data file (through its package) and of the resource map', async () => {
    for (const pid of [PIDS.eml, PIDS.csv, PIDS.map]) {
      const res = await get(`/v2/views/default/${enc(pid)}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      const html = await res.text();
      expect(html.startsWith('<!DOCTYPE html>')).toBe(true);
      expect(html).toContain('Soil temperature and moisture at Toolik Field Station, Alaska, 2016–2019');
      expect(html).toContain('Maria J. Okonkwo-Lind');
      expect(html).toContain('toolik_soil_2016_2019.csv');
      expect(html).toContain('calibration notes.pdf');
      expect(html).toContain('application/ld+json');
      expect(html).toContain(`/v2/packages/application%2Fbagit-097/${enc(PIDS.map)}`);
      expect(html).toContain('not available to you');
    }
  });

  it('an unknown theme renders with the default theme; v1 works too', async () => {
    const res = await get(`/v2/views/no-such-theme/${enc(PIDS.eml)}`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
    expect(await res.text()).toContain('Okonkwo-Lind');
    expect((await get(`/v1/views/default/${enc(PIDS.eml)}`)).status).toBe(200);
  });

  it('metadata theme: the raw EML as plain text, for the metadata and for a data file', async () => {
    for (const pid of [PIDS.eml, PIDS.csv]) {
      const res = await get(`/v2/views/metadata/${enc(pid)}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/plain; charset=utf-8');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      expect(Buffer.from(await res.arrayBuffer()).equals(EML)).toBe(true);
    }
  });

  it('jsonld theme: a schema.org Dataset naming the creators and files', async () => {
    const res = await get(`/v2/views/jsonld/${enc(PIDS.csv)}`);
    expect(res.headers.get('content-type')).toBe('application/ld+json');
    const ld = (await res.json()) as Record<string, any>;
    expect(ld['@type']).toBe('Dataset');
    expect(ld.name).toBe('Soil temperature and moisture at Toolik Field Station, Alaska, 2016–2019');
    expect(ld.creator['@list'].map((c: { name: string }) => c.name)).toEqual(['Maria J. Okonkwo-Lind', 'Tomás Ibáñez', 'Toolik Field Station Environmental Data Center']);
    expect(ld.creator['@list'][0]['@id']).toBe('https://orcid.org/0000-0002-1825-0097');
    expect(ld.distribution.map((d: { name: string }) => d.name).sort()).toEqual(['calibration notes.pdf', 'toolik_soil_2016_2019.csv', 'toolik_soil_metadata.xml']);
    expect(ld.identifier.value).toBe('doi:10.18739/A2KW57K2P');
    expect(ld.spatialCoverage[0].geo.box).toBe('68.61 -149.6 68.65 -149.5');
    expect(ld.temporalCoverage).toEqual(['2016-06-01/2019-08-31']);
  });

  it('access control as for get: NotAuthorized for a restricted object, NotFound for an unknown one, SID resolves', async () => {
    const denied = await get(`/v2/views/default/${enc(PIDS.restricted)}`);
    expect(denied.status).toBe(401);
    const body = await denied.text();
    expect(body).toMatch(/name="NotAuthorized"/);
    expect(body).toMatch(/detailCode="283\d"/);
    expect((await get(`/v2/views/default/${enc(PIDS.restricted)}`, node.tokens.writer)).status).toBe(200);
    const missing = await get('/v2/views/default/no-such-pid');
    expect(missing.status).toBe(404);
    expect(await missing.text()).toMatch(/detailCode="283\d"/);
    const bySid = await get(`/v2/views/default/${enc('doi:10.18739/A2KW57K2P')}`);
    expect(bySid.status).toBe(200);
    expect(await bySid.text()).toContain('Okonkwo-Lind');
    // The writer sees the restricted file listed with a link.
    const html = await (await get(`/v2/views/default/${enc(PIDS.map)}`, node.tokens.writer)).text();
    expect(html).not.toContain('not available to you');
  });

  it('a bad metadata document degrades to system metadata, never a 500', async () => {
    const client = new MemberNodeClient({ baseUrl: node.baseUrl, token: node.tokens.writer });
    const bad = Buffer.from('<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><eml:eml xmlns:eml="x"><dataset><title>&e;</title></dataset></eml:eml>');
    await client.create('bad-eml', bad, sysmeta('bad-eml', bad, { formatId: EML_FORMAT }));
    const truncated = EML.subarray(0, 500);
    await client.create('truncated-eml', truncated, sysmeta('truncated-eml', truncated, { formatId: EML_FORMAT, fileName: 'truncated.xml' }));
    for (const pid of ['bad-eml', 'truncated-eml']) {
      for (const theme of ['default', 'jsonld', 'metadata']) {
        const res = await get(`/v2/views/${theme}/${enc(pid)}`);
        expect(res.status).toBe(200);
      }
    }
    expect(await (await get('/v2/views/default/truncated-eml')).text()).toContain('<h1 id="title">truncated.xml</h1>');
    expect(await (await get('/v2/views/default/bad-eml')).text()).not.toContain('root:');
  });

  it('versions: obsoletes / obsoletedBy are linked', async () => {
    const client = new MemberNodeClient({ baseUrl: node.baseUrl, token: node.tokens.writer });
    const v1 = Buffer.from('a,b\n1,2\n');
    const v2 = Buffer.from('a,b\n1,3\n');
    await client.create('series-v1', v1, sysmeta('series-v1', v1, { formatId: 'text/csv' }));
    await client.update('series-v1', v2, 'series-v2', sysmeta('series-v2', v2, { formatId: 'text/csv', obsoletes: 'series-v1' }));
    const old = await (await get('/v2/views/default/series-v1')).text();
    expect(old).toContain(`href="${node.baseUrl}/v2/views/default/series-v2"`);
    const cur = await (await get('/v2/views/default/series-v2')).text();
    expect(cur).toContain(`href="${node.baseUrl}/v2/views/default/series-v1"`);
  });

  it('getPackage: a valid BagIt zip of the package; restricted members withheld with the reason', async () => {
    for (const type of ['application%2Fbagit-097', 'application/bagit-097', 'application%2Fbagit-1.0']) {
      const res = await get(`/v2/packages/${type}/${enc(PIDS.map)}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('application/zip');
      const bag = bagRoot(unzip(Buffer.from(await res.arrayBuffer())));
      expect(bag.base).toBe('resource_map_urn_uuid_4c1d0a2e');
      const entries = bag.entries;
      expect(validateBag(entries)).toEqual([]);
      const names = [...entries.keys()];
      expect(names.filter((n) => n.startsWith('data/')).sort()).toEqual(['data/calibration notes.pdf', 'data/toolik_soil_2016_2019.csv', 'data/toolik_soil_metadata.xml']);
      expect(entries.get('data/toolik_soil_2016_2019.csv')!.data.equals(files.csv)).toBe(true);
      expect(entries.get('data/toolik_soil_metadata.xml')!.data.equals(EML)).toBe(true);
      expect(entries.get('metadata/oai-ore.xml')!.data.toString()).toBe(files.map);
      expect(names.filter((n) => n.startsWith('metadata/sysmeta/'))).toHaveLength(4);
      expect(entries.get('pid-mapping.txt')!.data.toString()).toContain(`${PIDS.pdf} data/calibration notes.pdf\n`);
      expect(entries.get('withheld.txt')!.data.toString()).toContain(`${PIDS.restricted}\tNotAuthorized`);
      expect(entries.get('bag-info.txt')!.data.toString()).toMatch(/Withheld-Members: 1/);
      expect(entries.get('bagit.txt')!.data.toString()).toContain(type.endsWith('1.0') ? 'BagIt-Version: 1.0' : 'BagIt-Version: 0.97');
      expect(names).toContain('manifest-md5.txt');
      expect(names).toContain('manifest-sha256.txt');
      expect(names).toContain('tagmanifest-md5.txt');
      expect(names).toContain('tagmanifest-sha256.txt');
      // Manifests carry the members' own checksums (system metadata); the other algorithm is computed.
      expect(entries.get('manifest-md5.txt')!.data.toString()).toContain(`${createHash('md5').update(files.csv).digest('hex')}  data/toolik_soil_2016_2019.csv`);
      expect(entries.get('manifest-sha256.txt')!.data.toString()).toContain(`${createHash('sha256').update(files.pdf).digest('hex')}  data/calibration notes.pdf`);
    }
    // The writer may read everything: nothing withheld.
    const all = bagRoot(unzip(Buffer.from(await (await get(`/v2/packages/application%2Fbagit-097/${enc(PIDS.map)}`, node.tokens.writer)).arrayBuffer()))).entries;
    expect(validateBag(all)).toEqual([]);
    expect(all.has('withheld.txt')).toBe(false);
    expect([...all.keys()].filter((n) => n.startsWith('data/'))).toHaveLength(4);
  });

  it('getPackage errors: not a resource map, unknown type, unknown id, restricted map', async () => {
    const notMap = await get(`/v2/packages/application%2Fbagit-097/${enc(PIDS.eml)}`);
    expect(notMap.status).toBe(400);
    const body = await notMap.text();
    expect(body).toMatch(/name="InvalidRequest"/);
    expect(body).toMatch(/detailCode="287\d"/);
    expect((await get(`/v2/packages/application%2Fx-tar/${enc(PIDS.map)}`)).status).toBe(400);
    expect((await get('/v2/packages/application%2Fbagit-097/nope')).status).toBe(404);
    const v1 = await get(`/v1/packages/application%2Fbagit-097/${enc(PIDS.map)}`);
    expect(v1.status).toBe(200);
    await v1.arrayBuffer();
  });

  it('views are not logged as reads; a package logs a read of the map and of each member it sends', async () => {
    // Reads are counted once the log has settled (events of earlier downloads may still be landing).
    const reads = async (pid: string): Promise<number> => {
      let last = -1;
      for (;;) {
        const xml = await (await get(`/v2/log?idFilter=${enc(pid)}&event=read&count=10000`, node.tokens.writer)).text();
        const n = xml.match(/<event>read<\/event>/g)?.length ?? 0;
        if (n === last) return n;
        last = n;
        await new Promise((r) => setTimeout(r, 150));
      }
    };
    const before = await reads(PIDS.csv);
    const mapBefore = await reads(PIDS.map);
    await (await get(`/v2/views/default/${enc(PIDS.csv)}`)).text();
    expect(await reads(PIDS.csv)).toBe(before);
    await (await get(`/v2/packages/application%2Fbagit-097/${enc(PIDS.map)}`)).arrayBuffer();
    expect(await reads(PIDS.csv)).toBe(before + 1);
    expect(await reads(PIDS.map)).toBe(mapBefore + 1);
  });
});
