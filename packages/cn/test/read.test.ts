// CNRead end to end (coordinating-node-interface.md, "CNRead"; issue #20 item 2): get,
// describe, getSystemMetadata, getChecksum, listObjects (nodeId, identifier, formatId, dates)
// over the CN's authoritative copies, and resolve. A CN started by the CLI, nodes written to
// its registry as approval leaves them, SQLite and PostgreSQL, v1 and v2, every XML body
// validated against the XSDs.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ObjectListCodec, ObjectLocationListCodec, SystemMetadataCodec, type ApiVersion } from '@memberkit/types';
import { CN_ADMIN, CnClient, DATABASES, errorOf, startCn, type CnProcess, type Received } from './harness.js';
import { addNodes, createObject, EML, emlBytes, memberNode, memberNodeSysmeta, registered } from './cn-fixtures.js';

const ALICE = 'CN=Alice,O=Example,C=US,DC=cilogon,DC=org';
const BOB = 'CN=Bob,O=Example,C=US,DC=cilogon,DC=org';
const VERSIONS = ['v1', 'v2'] as const;

function expectError(r: Received, name: string, errorCode: number, detailCode?: string): void {
  expect(r.status, r.text).toBe(errorCode);
  if (r.text === '') {
    // HEAD: the exception travels in headers.
    expect(r.headers.get('dataone-exception-name')).toBe(name);
    if (detailCode !== undefined) expect(r.headers.get('dataone-exception-detailcode')).toBe(detailCode);
    return;
  }
  const e = errorOf(r);
  expect(e.name, r.text).toBe(name);
  if (detailCode !== undefined) expect(e.detailCode, r.text).toBe(detailCode);
}

describe.each(DATABASES)('CNRead on %s', (database) => {
  let cn: CnProcess;
  let client: CnClient;
  let admin: string;
  let alice: string;
  let bob: string;
  const nodes = {
    a: memberNode('urn:node:RA'), // up, v1 and v2
    b: memberNode('urn:node:RB', { versions: ['v1'] }), // up, v1 only
    c: memberNode('urn:node:RC', { state: 'down' }),
    d: memberNode('urn:node:RD'), // not approved
    e: memberNode('urn:node:RE'),
  };
  const completed = (node: string) => ({ replicaMemberNode: node, replicationStatus: 'completed' as const, replicaVerified: new Date('2024-02-01T00:00:00.000Z') });
  const sfx = `-${database}`;

  beforeAll(async () => {
    cn = await startCn({ database });
    client = new CnClient(cn.baseUrl);
    [admin, alice, bob] = await Promise.all([cn.token(CN_ADMIN), cn.token(ALICE), cn.token(BOB)]);
    await addNodes(cn, [{ node: nodes.a }, { node: nodes.b }, { node: nodes.c }, { node: nodes.d, approved: false }, { node: nodes.e }]);
    // Authoritative on a down node, with replicas: up ones first, the invalidated and the unapproved left out.
    await registered(client, admin, memberNodeSysmeta(`spread${sfx}`, nodes.c.identifier, {
      replica: [completed(nodes.b.identifier), { ...completed(nodes.e.identifier), replicationStatus: 'invalidated' }, completed(nodes.d.identifier), completed(nodes.a.identifier)],
    }));
    await registered(client, admin, memberNodeSysmeta(`simple${sfx}`, nodes.a.identifier, { replica: [completed(nodes.b.identifier)] }));
    await registered(client, admin, memberNodeSysmeta(`orphan${sfx}`, 'urn:node:NOWHERE'));
    await registered(client, admin, memberNodeSysmeta(`private${sfx}`, nodes.a.identifier, { rightsHolder: ALICE, accessPolicy: undefined }));
    await registered(client, admin, memberNodeSysmeta(`s1${sfx}`, nodes.a.identifier, { seriesId: `series${sfx}`, obsoletedBy: `s2${sfx}`, dateUploaded: new Date('2024-01-01T00:00:00.000Z') }));
    await registered(client, admin, memberNodeSysmeta(`s2${sfx}`, nodes.b.identifier, { seriesId: `series${sfx}`, obsoletes: `s1${sfx}`, dateUploaded: new Date('2024-01-02T00:00:00.000Z') }));
    await registered(client, admin, memberNodeSysmeta(`onb${sfx}`, nodes.b.identifier, { formatId: 'text/plain' }));
    const r = await createObject(client, admin, { pid: `held${sfx}`, bytes: emlBytes('held'), rightsHolder: ALICE, formatId: EML });
    expect(r.status, r.text).toBe(200);
  });
  afterAll(async () => {
    await cn?.stop();
  });
  afterEach(async () => {
    await client.validate();
  });

  describe('resolve', () => {
    it.each(VERSIONS)('resolve (%s): 303 to the first location; locations up first, authoritative first among equals; invalidated and unapproved left out', async (version) => {
      const r = await client.get(`/${version}/resolve/spread${sfx}`);
      expect(r.status, r.text).toBe(303);
      const list = ObjectLocationListCodec.decode(r.text);
      expect(list.identifier).toBe(`spread${sfx}`);
      expect(list.objectLocation.map((l) => l.nodeIdentifier)).toEqual([nodes.b.identifier, nodes.a.identifier, nodes.c.identifier]);
      const first = list.objectLocation[0]!;
      expect(first.url).toBe(`${nodes.b.baseURL}/v1/object/spread${sfx}`);
      expect(first.version).toEqual(['v1']);
      expect(r.headers.get('location')).toBe(first.url);
      expect(list.objectLocation[1]!.url).toBe(`${nodes.a.baseURL}/v2/object/spread${sfx}`);

      const simple = ObjectLocationListCodec.decode((await client.get(`/${version}/resolve/simple${sfx}`)).text);
      expect(simple.objectLocation.map((l) => l.nodeIdentifier)).toEqual([nodes.a.identifier, nodes.b.identifier]);
    });

    it('resolve answers HEAD with 307 and the Location', async () => {
      const r = await client.request('HEAD', `/v2/resolve/simple${sfx}`);
      expect(r.status).toBe(307);
      expect(r.headers.get('location')).toBe(`${nodes.a.baseURL}/v2/object/simple${sfx}`);
    });

    it('resolve: a SID resolves the head of its series on v2; on v1 a SID is NotFound', async () => {
      const r = await client.get(`/v2/resolve/series${sfx}`);
      expect(r.status, r.text).toBe(303);
      expect(ObjectLocationListCodec.decode(r.text).identifier).toBe(`s2${sfx}`);
      expectError(await client.get(`/v1/resolve/series${sfx}`), 'NotFound', 404, '4140');
    });

    it.each(VERSIONS)('resolve (%s): NotFound without a location or an object; NotAuthorized for a private object', async (version) => {
      expectError(await client.get(`/${version}/resolve/orphan${sfx}`), 'NotFound', 404, '4140');
      expectError(await client.get(`/${version}/resolve/nothing${sfx}`), 'NotFound', 404, '4140');
      expectError(await client.get(`/${version}/resolve/private${sfx}`, { token: bob }), 'NotAuthorized', 401, '4120');
      expect((await client.get(`/${version}/resolve/private${sfx}`, { token: alice })).status).toBe(303);
    });
  });

  describe('get, describe, getSystemMetadata, getChecksum', () => {
    it.each(VERSIONS)('get (%s): the bytes the CN holds; NotFound for objects held elsewhere and unknown ones; NotAuthorized for a private one', async (version) => {
      const r = await client.get(`/${version}/object/held${sfx}`);
      expect(r.status).toBe(200);
      expect(r.text).toBe(emlBytes('held'));
      expect(r.headers.get('dataone-formatid')).toBe(EML);
      expectError(await client.get(`/${version}/object/simple${sfx}`), 'NotFound', 404, '1020');
      expectError(await client.get(`/${version}/object/nothing${sfx}`), 'NotFound', 404, '1020');
      expectError(await client.get(`/${version}/object/private${sfx}`, { token: bob }), 'NotAuthorized', 401, '1000');
    });

    it.each(VERSIONS)('describe (%s): the headers of get; exceptions in DataONE-Exception-* headers', async (version) => {
      const r = await client.request('HEAD', `/${version}/object/simple${sfx}`);
      expect(r.status).toBe(200);
      expect(r.headers.get('dataone-formatid')).toBe('text/csv');
      expect(r.headers.get('dataone-checksum')).toMatch(/^SHA-1,[0-9a-f]{40}$/);
      expect(r.headers.get('dataone-serialversion')).toBe('1');
      expectError(await client.request('HEAD', `/${version}/object/nothing${sfx}`), 'NotFound', 404, '4933');
      expectError(await client.request('HEAD', `/${version}/object/private${sfx}`, { token: bob }), 'NotAuthorized', 401, '4934');
    });

    it.each(VERSIONS)('getSystemMetadata (%s): the authoritative copy; v2 accepts a SID', async (version) => {
      const sm = SystemMetadataCodec.decode((await client.get(`/${version}/meta/simple${sfx}`)).text);
      expect(sm.authoritativeMemberNode).toBe(nodes.a.identifier);
      expect(sm.replica.map((r) => r.replicaMemberNode)).toEqual([nodes.b.identifier]);
      expectError(await client.get(`/${version}/meta/nothing${sfx}`), 'NotFound', 404, '1060');
      expectError(await client.get(`/${version}/meta/private${sfx}`, { token: bob }), 'NotAuthorized', 401, '1040');
      if (version === 'v2') expect(SystemMetadataCodec.decode((await client.get(`/v2/meta/series${sfx}`)).text).identifier).toBe(`s2${sfx}`);
      else expectError(await client.get(`/v1/meta/series${sfx}`), 'NotFound', 404, '1060');
    });

    it.each(VERSIONS)('getChecksum (%s): the checksum recorded in the system metadata', async (version) => {
      const sm = SystemMetadataCodec.decode((await client.get(`/${version}/meta/simple${sfx}`)).text);
      const r = await client.get(`/${version}/checksum/simple${sfx}`);
      expect(r.status).toBe(200);
      expect(r.text).toContain(`algorithm="SHA-1"`);
      expect(r.text).toContain(sm.checksum.value);
      expectError(await client.get(`/${version}/checksum/nothing${sfx}`), 'NotFound', 404, '1420');
      expectError(await client.get(`/${version}/checksum/private${sfx}`, { token: bob }), 'NotAuthorized', 401, '1400');
    });
  });

  describe('listObjects', () => {
    const list = async (version: ApiVersion, query: string, token: string | null = null) => {
      const r = await client.get(`/${version}/object${query}`, { token });
      expect(r.status, r.text).toBe(200);
      return ObjectListCodec.decode(r.text);
    };

    it.each(VERSIONS)('listObjects (%s): nodeId filters on the authoritative Member Node', async (version) => {
      const onB = await list(version, `?nodeId=${encodeURIComponent(nodes.b.identifier)}`, admin);
      expect(onB.objectInfo.map((o) => o.identifier).sort()).toEqual([`onb${sfx}`, `s2${sfx}`]);
      expect(onB.total).toBe(2);
      const probe = await list(version, `?nodeId=${encodeURIComponent(nodes.b.identifier)}&count=0`, admin);
      expect(probe.total).toBe(2);
      expect(probe.count).toBe(0);
      const page = await list(version, `?nodeId=${encodeURIComponent(nodes.b.identifier)}&start=1&count=5`, admin);
      expect(page.start).toBe(1);
      expect(page.count).toBe(1);
      expect(page.total).toBe(2);
      const formatted = await list(version, `?nodeId=${encodeURIComponent(nodes.b.identifier)}&formatId=text%2Fplain`, admin);
      expect(formatted.objectInfo.map((o) => o.identifier)).toEqual([`onb${sfx}`]);
    });

    it.each(VERSIONS)('listObjects (%s): identifier, formatId and date filters; callers see what they may read', async (version) => {
      const one = await list(version, `?identifier=simple${sfx}`);
      expect(one.objectInfo.map((o) => o.identifier)).toEqual([`simple${sfx}`]);
      const eml = await list(version, `?formatId=${encodeURIComponent(EML)}`);
      expect(eml.objectInfo.map((o) => o.identifier)).toContain(`held${sfx}`);
      expect((await list(version, '?fromDate=2999-01-01T00:00:00Z')).total).toBe(0);
      const everything = await list(version, '?count=1000', admin);
      expect(everything.objectInfo.map((o) => o.identifier)).toContain(`private${sfx}`);
      expect((await list(version, '?count=1000')).objectInfo.map((o) => o.identifier)).not.toContain(`private${sfx}`);
      expect((await list(version, '?count=1000', alice)).objectInfo.map((o) => o.identifier)).toContain(`private${sfx}`);
      expect((await list(version, `?nodeId=${encodeURIComponent(nodes.a.identifier)}`)).objectInfo.map((o) => o.identifier)).not.toContain(`private${sfx}`);
      expect((await list(version, `?nodeId=${encodeURIComponent(nodes.a.identifier)}`, alice)).objectInfo.map((o) => o.identifier)).toContain(`private${sfx}`);
    });

    it('listObjects: a bad date or count is InvalidRequest', async () => {
      expectError(await client.get('/v2/object?fromDate=soon'), 'InvalidRequest', 400, '1540');
      expectError(await client.get('/v2/object?count=-1'), 'InvalidRequest', 400, '1540');
    });
  });

  it.each(VERSIONS)('search and the query engines (%s) are NotImplemented until part 3', async (version) => {
    expectError(await client.get(`/${version}/search/solr/q=*:*`), 'NotImplemented', 501, '4281');
    expectError(await client.get(`/${version}/query`), 'NotImplemented', 501, '4420');
    expectError(await client.get(`/${version}/query/solr`), 'NotImplemented', 501, '4410');
    expectError(await client.get(`/${version}/query/solr/q=*:*`), 'NotImplemented', 501, '4324');
  });

  it.each(VERSIONS)('synchronize and CNReplication (%s) are NotImplemented until part 2, with their detail codes', async (version) => {
    if (version === 'v2') expectError(await client.form('POST', '/v2/synchronize', { pid: 'x' }), 'NotImplemented', 501, '4960');
    expectError(await client.request('PUT', `/${version}/replicaNotifications/x`), 'NotImplemented', 501, '4701');
    expectError(await client.request('PUT', `/${version}/replicaMetadata/x`), 'NotImplemented', 501, '4850');
    expectError(await client.request('PUT', `/${version}/replicaPolicies/x`), 'NotImplemented', 501, '4880');
    expectError(await client.get(`/${version}/replicaAuthorizations/x?targetNodeSubject=CN%3Dnode`), 'NotImplemented', 501, '4870');
    expectError(await client.request('PUT', `/${version}/removeReplicaMetadata/x`), 'NotImplemented', 501, '4950');
  });
});
