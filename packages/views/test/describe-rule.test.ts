import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MemberNodeClient } from '@memberkit/client';
import { resourceMap, startViewsNode, sysmeta, type ViewsNode } from './support/node.js';
import { EML, EML_FORMAT, loadDataset, ORE_FORMAT, PIDS } from './support/dataset.js';

const enc = encodeURIComponent;
const TOOLIK = 'Soil temperature and moisture at Toolik Field Station, Alaska, 2016–2019';
const STRANGER_EML = Buffer.from(
  EML.toString('utf8')
    .replace(/<title>Soil temperature[^<]*<\/title>/, '<title>Mallory owns this data now</title>')
    .replace(/<givenName>Maria<\/givenName>/, '<givenName>Mallory</givenName>')
    .replace('doi:10.18739/A2KW57K2P', 'doi:10.9999/MALLORY'),
);

describe("who may describe an object: a stranger's map never speaks for someone else's object", () => {
  let node: ViewsNode;
  const get = (path: string, token?: string): Promise<Response> => fetch(`${node.baseUrl}${path}`, token ? { headers: { Authorization: `Bearer ${token}` } } : {});

  beforeAll(async () => {
    node = await startViewsNode();
    await loadDataset(node);
    const writer = new MemberNodeClient({ baseUrl: node.baseUrl, token: node.tokens.writer });
    const stranger = new MemberNodeClient({ baseUrl: node.baseUrl, token: node.tokens.other });
    const mine = { rightsHolder: node.subjects.other };
    const lonely = Buffer.from('x,y\n1,2\n');
    await writer.create('lonely.csv', lonely, sysmeta('lonely.csv', lonely, { formatId: 'text/csv', fileName: 'lonely.csv' }));
    // A collaborator: the writer gave the stranger write permission on this one.
    await writer.create('shared.csv', lonely, sysmeta('shared.csv', lonely, { formatId: 'text/csv', fileName: 'shared.csv', accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }, { subject: [node.subjects.other], permission: ['write'] }] } }));
    // The stranger's public EML and maps, uploaded after the writer's (newest would win before).
    await stranger.create('stranger-eml', STRANGER_EML, sysmeta('stranger-eml', STRANGER_EML, { formatId: EML_FORMAT, ...mine }));
    const takeover = resourceMap('stranger-map', 'stranger-eml', [PIDS.csv, PIDS.eml, 'lonely.csv', 'shared.csv']);
    await stranger.create('stranger-map', takeover, sysmeta('stranger-map', Buffer.from(takeover), { formatId: ORE_FORMAT, ...mine }));
    // Naming the victim as rights holder of one's own map does not help: the submitter counts too.
    const disguised = resourceMap('stranger-map-disguised', 'stranger-eml', [PIDS.csv, 'lonely.csv']);
    await stranger.create('stranger-map-disguised', disguised, sysmeta('stranger-map-disguised', Buffer.from(disguised), { formatId: ORE_FORMAT, rightsHolder: node.subjects.writer }));
    // A map the object's own rights holder submitted, naming someone else as its rights holder.
    await writer.create('gift.csv', lonely, sysmeta('gift.csv', lonely, { formatId: 'text/csv', fileName: 'gift.csv' }));
    const giftEml = Buffer.from(EML.toString('utf8').replace(/<title>Soil temperature[^<]*<\/title>/, '<title>A gift</title>'));
    await writer.create('gift-eml', giftEml, sysmeta('gift-eml', giftEml, { formatId: EML_FORMAT }));
    const gift = resourceMap('gift-map', 'gift-eml', ['gift.csv']);
    await writer.create('gift-map', gift, sysmeta('gift-map', Buffer.from(gift), { formatId: ORE_FORMAT, ...mine }));
  });
  afterAll(async () => node?.stop());

  it("the owner's page and JSON-LD keep the owner's title, creators, citation, package and metadata", async () => {
    for (const pid of [PIDS.csv, PIDS.eml]) {
      const html = await (await get(`/v2/views/default/${enc(pid)}`)).text();
      expect(html).toContain(`<h1 id="title">${TOOLIK}</h1>`);
      expect(html).not.toContain('Mallory');
      expect(html).toContain(`/v2/packages/application%2Fbagit-097/${enc(PIDS.map)}`);
      expect(html).not.toContain('stranger-map');
      const ld = (await (await get(`/v2/views/jsonld/${enc(pid)}`)).json()) as Record<string, unknown>;
      expect(ld.name).toBe(TOOLIK);
      expect(JSON.stringify(ld)).not.toMatch(/Mallory|stranger/);
      // Authenticated callers get the same answer.
      expect(await (await get(`/v2/views/default/${enc(pid)}`, node.tokens.other)).text()).not.toContain('Mallory');
    }
    const metadata = await (await get(`/v2/views/metadata/${enc(PIDS.csv)}`)).text();
    expect(metadata).toContain('Okonkwo-Lind');
    expect(metadata).not.toContain('Mallory');
  });

  it("an object only a stranger's map aggregates gets no package and no description from it", async () => {
    const html = await (await get('/v2/views/default/lonely.csv')).text();
    expect(html).toContain('<h1 id="title">lonely.csv</h1>');
    expect(html).not.toContain('Mallory');
    expect(html).not.toContain('/packages/');
    const ld = (await (await get('/v2/views/jsonld/lonely.csv')).json()) as Record<string, unknown>;
    expect(JSON.stringify(ld)).not.toMatch(/Mallory|stranger/);
  });

  it('a subject the owner let write the object may describe it', async () => {
    const html = await (await get('/v2/views/default/shared.csv')).text();
    expect(html).toContain('<h1 id="title">Mallory owns this data now</h1>');
    expect(html).toContain('/v2/packages/application%2Fbagit-097/stranger-map');
  });

  it("a map the object's own rights holder submitted describes it, whoever it names as rights holder", async () => {
    const html = await (await get('/v2/views/default/gift.csv')).text();
    expect(html).toContain('/v2/packages/application%2Fbagit-097/gift-map');
    expect(html).toContain('<h1 id="title">A gift</h1>');
  });

  it("the stranger's own map still has its page and package (aggregating public data is allowed)", async () => {
    const html = await (await get('/v2/views/default/stranger-map')).text();
    expect(html).toContain('Mallory owns this data now');
    const zip = await get('/v2/packages/application%2Fbagit-097/stranger-map');
    expect(zip.status).toBe(200);
    await zip.arrayBuffer();
  });
});
