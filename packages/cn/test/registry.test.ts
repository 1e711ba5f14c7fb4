// CNRegister and CNCore.listNodes end to end (coordinating-node-interface.md, "CNRegister";
// issue #20 item 5): a CN started by the CLI on a fresh folder, on SQLite and PostgreSQL, real
// HTTP on v1 and v2, every XML body validated against the XSDs. Approval with the CLI
// (`memberkit cn approve-node`), as an administrator does it.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SqlStore } from '@memberkit/adapter-sql';
import { DEFAULT_SCHEDULE } from '@memberkit/core';
import { NodeCodec, NodeListCodec, PersonCodec, type ApiVersion, type Node } from '@memberkit/types';
import { CN_ADMIN, CnClient, DATABASES, errorOf, runCli, startCn, type CnProcess } from './harness.js';
import { NodeRegistry } from '../src/registry/node-registry.js';

const CONTACT = 'CN=Registry Contact,O=Example,C=US,DC=cilogon,DC=org';
const UNVERIFIED = 'CN=Unverified Contact,O=Example,C=US,DC=cilogon,DC=org';
const STRANGER = 'CN=Stranger,O=Example,C=US,DC=cilogon,DC=org';

let serial = 0;
/** A Node document of a Member Node at a public address (the CN never calls it). */
function memberNode(id: string, over: Partial<Node> = {}): Node {
  serial++;
  return {
    replicate: false, synchronize: true, type: 'mn', state: 'up', identifier: id, name: `node ${id}`, description: 'a test Member Node',
    baseURL: `https://mn${serial}.example.org/mn`,
    services: { service: ['MNCore', 'MNRead', 'MNAuthorization', 'MNStorage'].map((name) => ({ name, version: 'v2', available: true, restriction: [] })) },
    synchronization: { schedule: DEFAULT_SCHEDULE },
    subject: [`CN=${id},DC=dataone,DC=org`], contactSubject: [CONTACT], property: [{ key: 'CN_location_lonlat', value: '-119.7,34.4' }],
    ...over,
  };
}

/** The error's description as text (the XML's entities decoded). */
function reason(r: Parameters<typeof errorOf>[0]): string {
  const entities: Record<string, string> = { '&lt;': '<', '&gt;': '>', '&quot;': '"', '&apos;': "'", '&amp;': '&' };
  return errorOf(r).description.replace(/&(lt|gt|quot|apos|amp);/g, (e) => entities[e]!);
}

const nodeXml = (node: Node, version: ApiVersion) => new Blob([NodeCodec.encode(node, version)], { type: 'text/xml' });

/** The CN's catalogue database, opened beside the running CN (as part 2's harvester writes CN-owned fields). */
function openCnStore(cn: CnProcess): SqlStore {
  const config = JSON.parse(readFileSync(join(cn.dir, 'memberkit.config.json'), 'utf8')) as { catalogue: { type: string; file?: string; connection?: string } };
  return config.catalogue.type === 'sqlite'
    ? new SqlStore({ dialect: 'sqlite', connection: join(cn.dir, config.catalogue.file ?? 'memberkit-cn.db') })
    : new SqlStore({ dialect: 'postgres', connection: { connectionString: config.catalogue.connection! } });
}

describe.each(DATABASES)('CNRegister and listNodes on %s', (database) => {
  let cn: CnProcess;
  let client: CnClient;
  let admin: string;
  let contactToken: string;

  beforeAll(async () => {
    cn = await startCn({ database });
    client = new CnClient(cn.baseUrl);
    admin = await cn.token(CN_ADMIN);
    contactToken = await cn.token(CONTACT);
    // The contact subjects' accounts, as CNIdentity creates them: registered, one verified.
    for (const subject of [CONTACT, UNVERIFIED]) {
      const person = PersonCodec.encode({ subject, givenName: ['Test'], familyName: 'Contact', email: ['contact@example.org'], isMemberOf: [], equivalentIdentity: [] }, 'v1');
      const r = await client.form('POST', '/v2/accounts', { person: new Blob([person], { type: 'text/xml' }) }, { token: admin });
      expect(r.status, r.text).toBe(200);
    }
    const verified = await client.request('PUT', `/v2/accounts/verification/${encodeURIComponent(CONTACT)}`, { token: admin });
    expect(verified.status, verified.text).toBe(200);
  });
  afterAll(async () => {
    await cn?.stop();
  });
  afterEach(async () => {
    await client.validate();
  });

  const listed = async (version: ApiVersion) => {
    const r = await client.get(`/${version}/node`);
    expect(r.status).toBe(200);
    return NodeListCodec.decode(r.text).node.map((n) => n.identifier);
  };

  it.each(['v1', 'v2'] as const)('listNodes (%s) names the CN itself first, type cn', async (version) => {
    const r = await client.get(`/${version}/node`);
    expect(r.status).toBe(200);
    expect(r.text).toMatch(/^<\?xml[^>]*>\s*<\w+:nodeList/);
    expect((await listed(version))[0]).toBe('urn:node:CNLOCAL');
    expect(r.text).toContain('type="cn"');
  });

  it('register: a NodeReference answer; the node waits for approval, then listNodes (v1 and v2) shows it', async () => {
    const node = memberNode('urn:node:REGONE');
    const r = await client.form('POST', '/v2/node', { node: nodeXml(node, 'v2') }, { token: await cn.token(node.subject[0]!) });
    expect(r.status, r.text).toBe(200);
    expect(r.text).toMatch(/<(\w+:)?nodeReference xmlns(:\w+)?="http:\/\/ns\.dataone\.org\/service\/types\/v1">urn:node:REGONE<\/(\w+:)?nodeReference>/);
    expect(await listed('v2')).not.toContain('urn:node:REGONE');
    // getNodeCapabilities answers the registered document while it waits.
    const got = await client.get('/v2/node/urn:node:REGONE');
    expect(got.status).toBe(200);
    const stored = NodeCodec.decode(got.text);
    expect(stored).toMatchObject({ identifier: 'urn:node:REGONE', baseURL: node.baseURL, type: 'mn', subject: node.subject, contactSubject: [CONTACT] });
    expect(stored.property).toEqual(node.property);

    const { stdout } = await runCli(['cn', 'approve-node', 'urn:node:REGONE', cn.dir]);
    expect(stdout).toContain('approved urn:node:REGONE');
    expect((await runCli(['cn', 'approve-node', 'urn:node:REGONE', cn.dir])).stdout).toContain('already approved');
    for (const version of ['v1', 'v2'] as const) expect(await listed(version), version).toContain('urn:node:REGONE');
    const v1 = await client.get('/v1/node/urn:node:REGONE');
    expect(v1.status).toBe(200);
    expect(v1.text).toContain('xmlns:d1="http://ns.dataone.org/service/types/v1"');
    await expect(runCli(['cn', 'approve-node', 'urn:node:NOSUCH', cn.dir])).rejects.toThrow(/no node 'urn:node:NOSUCH' is registered.*urn:node:REGONE/);
  });

  it('register on v1 answers the same NodeReference', async () => {
    const node = memberNode('urn:node:REGV1');
    const r = await client.form('POST', '/v1/node', { node: nodeXml(node, 'v1') }, { token: contactToken });
    expect(r.status, r.text).toBe(200);
    expect(r.text).toContain('>urn:node:REGV1</');
  });

  it('register needs a session (NotAuthorized 4841)', async () => {
    const r = await client.form('POST', '/v2/node', { node: nodeXml(memberNode('urn:node:ANON'), 'v2') }, { token: null });
    expect(r.status).toBe(401);
    expect(errorOf(r)).toMatchObject({ name: 'NotAuthorized', detailCode: '4841' });
    const bad = await client.form('POST', '/v2/node', { node: nodeXml(memberNode('urn:node:BADTOKEN'), 'v2') }, { token: 'not.a.token' });
    expect(bad.status).toBe(401);
    expect(errorOf(bad)).toMatchObject({ name: 'InvalidToken' });
  });

  it('register refuses documents the rules refuse (InvalidRequest 4843), each saying what to fix', async () => {
    const cases: Array<[Node | string, RegExp]> = [
      [memberNode('urn:node:x'), /does not match/],
      [memberNode('urn:node:LOOPBACK', { baseURL: 'http://127.0.0.1:8080/mn' }), /loopback or private.*allowLoopback/],
      [memberNode('urn:node:PRIVATE', { baseURL: 'http://192.168.10.4/mn' }), /allowLoopback/],
      [memberNode('urn:node:BADSCHED', { synchronization: { schedule: { ...DEFAULT_SCHEDULE, min: '75' } } }), /schedule min="75"/],
      [memberNode('urn:node:NOCONTACT', { contactSubject: [STRANGER] }), /has no account on this Coordinating Node/],
      [memberNode('urn:node:UNVERIFIED', { contactSubject: [CONTACT, UNVERIFIED] }), /is not verified yet/],
      ['<node>not a node</node>', /not a valid Node document/],
    ];
    for (const [doc, re] of cases) {
      const r = await client.form('POST', '/v2/node', { node: typeof doc === 'string' ? doc : nodeXml(doc, 'v2') }, { token: contactToken });
      expect(r.status, r.text).toBe(400);
      expect(errorOf(r).name).toBe('InvalidRequest');
      expect(errorOf(r).detailCode).toBe('4843');
      expect(reason(r)).toMatch(re);
    }
    const none = await client.form('POST', '/v2/node', { other: 'x' }, { token: contactToken });
    expect(errorOf(none)).toMatchObject({ name: 'InvalidRequest', detailCode: '4843' });
    expect(reason(none)).toMatch(/no `node` part/);
    // synchronize off: no schedule needed
    const { synchronization: _s, ...noSchedule } = memberNode('urn:node:NOSYNC');
    const ok = await client.form('POST', '/v2/node', { node: nodeXml({ ...noSchedule, synchronize: false }, 'v2') }, { token: contactToken });
    expect(ok.status, ok.text).toBe(200);
  });

  it('identifier and baseURL are unique (IdentifierNotUnique 4844), also against the CN itself', async () => {
    const first = memberNode('urn:node:UNIQUE');
    expect((await client.form('POST', '/v2/node', { node: nodeXml(first, 'v2') }, { token: contactToken })).status).toBe(200);
    const again = await client.form('POST', '/v2/node', { node: nodeXml(memberNode('urn:node:UNIQUE'), 'v2') }, { token: contactToken });
    expect(again.status).toBe(409);
    expect(errorOf(again)).toMatchObject({ name: 'IdentifierNotUnique', detailCode: '4844' });
    // The same service spelled differently (host case, default port, trailing slash) is the same baseURL.
    const url = new URL(first.baseURL);
    const sameUrl = memberNode('urn:node:UNIQUE2', { baseURL: `https://${url.hostname.toUpperCase()}:443${url.pathname}/` });
    const dup = await client.form('POST', '/v2/node', { node: nodeXml(sameUrl, 'v2') }, { token: contactToken });
    expect(dup.status).toBe(409);
    expect(reason(dup)).toMatch(/already registered by node 'urn:node:UNIQUE'/);
    const self = await client.form('POST', '/v2/node', { node: nodeXml(memberNode('urn:node:CNLOCAL'), 'v2') }, { token: contactToken });
    expect(self.status).toBe(409);
    expect(reason(self)).toMatch(/this Coordinating Node's own identifier/);
  });

  it('concurrent registrations of one identifier: exactly one succeeds', async () => {
    const results = await Promise.all(Array.from({ length: 12 }, () => client.form('POST', '/v2/node', { node: nodeXml(memberNode('urn:node:RACE'), 'v2') }, { token: contactToken })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    expect(results.filter((r) => r.status === 409)).toHaveLength(11);
  });

  it('a node of type cn is registered by a CN administrator only', async () => {
    const cnNode = memberNode('urn:node:OTHERCN', { type: 'cn' });
    const refused = await client.form('POST', '/v2/node', { node: nodeXml(cnNode, 'v2') }, { token: contactToken });
    expect(refused.status).toBe(401);
    expect(errorOf(refused)).toMatchObject({ name: 'NotAuthorized', detailCode: '4841' });
    expect((await client.form('POST', '/v2/node', { node: nodeXml(cnNode, 'v2') }, { token: admin })).status).toBe(200);
  });

  it('getNodeCapabilities: the CN\'s own document, a registered node, NotFound 4829 otherwise', async () => {
    for (const version of ['v1', 'v2'] as const) {
      const own = await client.get(`/${version}/node/urn:node:CNLOCAL`);
      expect(own.status).toBe(200);
      expect(own.text).toContain('type="cn"');
      const missing = await client.get(`/${version}/node/urn:node:NOSUCH`);
      expect(missing.status).toBe(404);
      expect(errorOf(missing)).toMatchObject({ name: 'NotFound', detailCode: '4829' });
    }
  });

  describe('updateNodeCapabilities', () => {
    const id = 'urn:node:UPDATED';
    let original: Node;
    let nodeToken: string;
    beforeAll(async () => {
      original = memberNode(id);
      nodeToken = await cn.token(original.subject[0]!);
      expect((await client.form('POST', '/v2/node', { node: nodeXml(original, 'v2') }, { token: nodeToken })).status).toBe(200);
      await runCli(['cn', 'approve-node', id, cn.dir]);
    });

    it('by the node\'s subject: the document replaced, missing services removed, approval kept', async () => {
      const changed: Node = { ...original, name: 'renamed', description: 'new description', services: { service: [{ name: 'MNCore', version: 'v2', available: true, restriction: [] }] } };
      for (const version of ['v1', 'v2'] as const) {
        const r = await client.form('PUT', `/${version}/node/${id}`, { node: nodeXml(changed, version) }, { token: nodeToken });
        expect(r.status, r.text).toBe(200);
      }
      const stored = NodeCodec.decode((await client.get(`/v2/node/${id}`)).text);
      expect(stored.name).toBe('renamed');
      expect(stored.services?.service.map((s) => s.name)).toEqual(['MNCore']);
      expect(await listed('v2')).toContain(id);
    });

    it('keeps identifier, type, ping, lastHarvested and lastCompleteHarvest of the old entry', async () => {
      // What the CN's harvester records (part 2), written as it will be: in the registry.
      const store = openCnStore(cn);
      await store.open();
      const harvested = new Date('2026-01-02T03:04:05.678Z');
      try {
        const registry = new NodeRegistry(store);
        const entry = (await registry.get(id))!;
        await registry.replace(id, { ...entry.node, ping: { success: true, lastSuccess: harvested }, synchronization: { schedule: DEFAULT_SCHEDULE, lastHarvested: harvested, lastCompleteHarvest: harvested } });
      } finally {
        await store.close();
      }
      const submitted: Node = { ...original, type: 'cn', name: 'again', ping: { success: false, lastSuccess: new Date('2020-01-01T00:00:00Z') }, synchronization: { schedule: { ...DEFAULT_SCHEDULE, min: '0/10' }, lastHarvested: new Date('2020-01-01T00:00:00Z') } };
      const r = await client.form('PUT', `/v2/node/${id}`, { node: nodeXml(submitted, 'v2') }, { token: nodeToken });
      expect(r.status, r.text).toBe(200);
      const stored = NodeCodec.decode((await client.get(`/v2/node/${id}`)).text);
      expect(stored).toMatchObject({ identifier: id, type: 'mn', name: 'again' });
      expect(stored.ping).toEqual({ success: true, lastSuccess: harvested });
      expect(stored.synchronization).toEqual({ schedule: { ...DEFAULT_SCHEDULE, min: '0/10' }, lastHarvested: harvested, lastCompleteHarvest: harvested });
    });

    it('by a CN administrator; refused to others (NotAuthorized 4821) and to anonymous callers', async () => {
      expect((await client.form('PUT', `/v2/node/${id}`, { node: nodeXml({ ...original, name: 'by admin' }, 'v2') }, { token: admin })).status).toBe(200);
      const other = await client.form('PUT', `/v2/node/${id}`, { node: nodeXml(original, 'v2') }, { token: await cn.token(STRANGER) });
      expect(other.status).toBe(401);
      expect(errorOf(other)).toMatchObject({ name: 'NotAuthorized', detailCode: '4821' });
      const contact = await client.form('PUT', `/v2/node/${id}`, { node: nodeXml(original, 'v2') }, { token: contactToken });
      expect(contact.status).toBe(401);
      const anonymous = await client.form('PUT', `/v2/node/${id}`, { node: nodeXml(original, 'v2') }, { token: null });
      expect(errorOf(anonymous)).toMatchObject({ name: 'NotAuthorized', detailCode: '4821' });
    });

    it('refuses another identifier, a baseURL another node has, rule violations (InvalidRequest 4823); NotFound 4824 for an unknown node', async () => {
      const renamed = await client.form('PUT', `/v2/node/${id}`, { node: nodeXml({ ...original, identifier: 'urn:node:RENAMED' }, 'v2') }, { token: nodeToken });
      expect(errorOf(renamed)).toMatchObject({ name: 'InvalidRequest', detailCode: '4823' });
      const regOne = NodeCodec.decode((await client.get('/v2/node/urn:node:REGONE')).text);
      const taken = await client.form('PUT', `/v2/node/${id}`, { node: nodeXml({ ...original, baseURL: regOne.baseURL }, 'v2') }, { token: nodeToken });
      expect(errorOf(taken)).toMatchObject({ name: 'InvalidRequest', detailCode: '4823' });
      expect(reason(taken)).toMatch(/urn:node:REGONE/);
      const loop = await client.form('PUT', `/v2/node/${id}`, { node: nodeXml({ ...original, baseURL: 'http://localhost:8080/mn' }, 'v2') }, { token: nodeToken });
      expect(reason(loop)).toMatch(/allowLoopback/);
      const unverified = await client.form('PUT', `/v2/node/${id}`, { node: nodeXml({ ...original, contactSubject: [UNVERIFIED] }, 'v2') }, { token: nodeToken });
      expect(errorOf(unverified)).toMatchObject({ name: 'InvalidRequest', detailCode: '4823' });
      const missing = await client.form('PUT', '/v2/node/urn:node:NOSUCH', { node: nodeXml(memberNode('urn:node:NOSUCH'), 'v2') }, { token: admin });
      expect(missing.status).toBe(404);
      expect(errorOf(missing)).toMatchObject({ name: 'NotFound', detailCode: '4824' });
    });
  });
});
