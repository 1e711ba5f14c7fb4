// CNAuthorization end to end (coordinating-node-interface.md, "CNAuthorization"; issue #20
// item 3): isAuthorized, setAccessPolicy, setRightsHolder with serialVersion checks, group
// membership expanding decisions, and the policy for objects of v2 Member Nodes
// (cn.changesToV2Objects "refuse" by default, "apply"). SQLite and PostgreSQL, v1 and v2.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { AccessPolicyCodec, GroupCodec, PersonCodec, SystemMetadataCodec, type AccessPolicy } from '@memberkit/types';
import { CN_ADMIN, CnClient, DATABASES, errorOf, startCn, type CnDatabase, type CnProcess, type Received } from './harness.js';
import { addNodes, memberNode, memberNodeSysmeta, registered } from './cn-fixtures.js';

const ALICE = 'CN=Alice,O=Example,C=US,DC=cilogon,DC=org';
const BOB = 'CN=Bob,O=Example,C=US,DC=cilogon,DC=org';
const CAROL = 'CN=Carol,O=Example,C=US,DC=cilogon,DC=org';
const DAVE = 'CN=Dave,O=Example,C=US,DC=cilogon,DC=org';
const GROUP = 'CN=field-team,DC=dataone,DC=org';
const VERSIONS = ['v1', 'v2'] as const;

function expectError(r: Received, name: string, errorCode: number, detailCode?: string): void {
  expect(r.status, r.text).toBe(errorCode);
  const e = errorOf(r);
  expect(e.name, r.text).toBe(name);
  if (detailCode !== undefined) expect(e.detailCode, r.text).toBe(detailCode);
}

const xml = (s: string) => new Blob([s], { type: 'text/xml' });
const policyXml = (p: AccessPolicy) => xml(AccessPolicyCodec.encode(p, 'v1'));
const identifierOf = (r: Received) => /<d1:identifier[^>]*>([^<]*)<\/d1:identifier>/.exec(r.text)?.[1];

/** A CN with a v1 and a v2 Member Node registered, and objects of each. */
async function startWithObjects(database: CnDatabase, changesToV2Objects?: 'apply') {
  const cn = await startCn({ database, ...(changesToV2Objects ? { config: { cn: { changesToV2Objects } } } : {}) });
  const client = new CnClient(cn.baseUrl);
  const admin = await cn.token(CN_ADMIN);
  const v1 = memberNode('urn:node:AUTHV1', { versions: ['v1'] });
  const v2 = memberNode('urn:node:AUTHV2', { versions: ['v1', 'v2'] });
  await addNodes(cn, [{ node: v1 }, { node: v2 }]);
  return { cn, client, admin, v1, v2 };
}

describe.each(DATABASES)('CNAuthorization on %s', (database) => {
  let cn: CnProcess;
  let client: CnClient;
  let admin: string;
  let v2node: { identifier: string; baseURL: string };
  const tokens: Record<string, string> = {};
  let n = 0;
  const pid = (stem: string) => `${stem}-${database}-${++n}`;
  const as = (subject: string) => tokens[subject]!;
  const sv = async (id: string) => SystemMetadataCodec.decode((await client.get(`/v2/meta/${id}`, { token: admin })).text).serialVersion!;

  beforeAll(async () => {
    const started = await startWithObjects(database);
    ({ cn, client, admin } = started);
    v2node = started.v2;
    for (const s of [ALICE, BOB, CAROL, DAVE]) tokens[s] = await cn.token(s);
    // CAROL's account and her group (CNIdentity), so that a rule naming the group admits her.
    const person = PersonCodec.encode({ subject: CAROL, givenName: ['Carol'], familyName: 'Tester', email: ['carol@example.org'], isMemberOf: [], equivalentIdentity: [] }, 'v1');
    const account = await client.form('POST', '/v2/accounts', { person: xml(person) }, { token: as(CAROL) });
    expect(account.status, account.text).toBe(200);
    const group = await client.form('POST', '/v2/groups', { group: xml(GroupCodec.encode({ subject: GROUP, groupName: 'Field team', hasMember: [CAROL], rightsHolder: [CAROL] }, 'v1')) }, { token: as(CAROL) });
    expect(group.status, group.text).toBe(200);
  });
  afterAll(async () => {
    await cn?.stop();
  });
  afterEach(async () => {
    await client.validate();
  });

  const v1Object = async (over: Parameters<typeof memberNodeSysmeta>[2] = {}) => {
    const id = pid('obj');
    await registered(client, admin, memberNodeSysmeta(id, 'urn:node:AUTHV1', { rightsHolder: ALICE, accessPolicy: { allow: [{ subject: [BOB], permission: ['read'] }] }, ...over }));
    return id;
  };

  it.each(VERSIONS)('isAuthorized (%s): 200 when allowed, NotAuthorized (401) otherwise', async (version) => {
    const id = await v1Object();
    const check = (action: string, token: string | null) => client.get(`/${version}/isAuthorized/${id}?action=${action}`, { token });
    expect((await check('changePermission', as(ALICE))).status).toBe(200);
    expect((await check('read', as(BOB))).status).toBe(200);
    expect((await check('read', admin)).status).toBe(200);
    expectError(await check('write', as(BOB)), 'NotAuthorized', 401);
    expectError(await check('read', null), 'NotAuthorized', 401);
    expectError(await check('delete', as(ALICE)), 'InvalidRequest', 400);
    expectError(await client.get(`/${version}/isAuthorized/${pid('none')}?action=read`, { token: as(ALICE) }), 'NotFound', 404);
  });

  it.each(VERSIONS)("isAuthorized (%s): a rule naming a group admits its members (the CN's identity store expands the session)", async (version) => {
    const id = await v1Object({ accessPolicy: { allow: [{ subject: [GROUP], permission: ['write'] }] } });
    expect((await client.get(`/${version}/isAuthorized/${id}?action=write`, { token: as(CAROL) })).status).toBe(200);
    expectError(await client.get(`/${version}/isAuthorized/${id}?action=write`, { token: as(DAVE) }), 'NotAuthorized', 401);
  });

  it.each(VERSIONS)('setAccessPolicy (%s): by changePermission holders, on the current serialVersion', async (version) => {
    const id = await v1Object();
    const policy = { allow: [{ subject: [DAVE], permission: ['write' as const] }] };
    const set = (token: string, serialVersion: string | undefined, p: Blob | string = policyXml(policy), target = id) =>
      client.form('PUT', `/${version}/accessRules/${target}`, { ...(p !== '' ? { accessPolicy: p } : {}), ...(serialVersion !== undefined ? { serialVersion } : {}) }, { token });
    const before = await sv(id);
    expectError(await set(as(BOB), String(before)), 'NotAuthorized', 401);
    expectError(await set(as(ALICE), String(before + 5)), 'VersionMismatch', 409);
    expectError(await set(as(ALICE), undefined), 'InvalidRequest', 400);
    expectError(await set(as(ALICE), String(before), ''), 'InvalidRequest', 400);
    expectError(await set(as(ALICE), String(before), xml('<accessPolicy><allow/></accessPolicy>')), 'InvalidRequest', 400);
    expectError(await set(as(ALICE), '1', policyXml(policy), pid('none')), 'NotFound', 404);
    const ok = await set(as(ALICE), String(before));
    expect(ok.status, ok.text).toBe(200);
    const sm = SystemMetadataCodec.decode((await client.get(`/${version}/meta/${id}`, { token: admin })).text);
    expect(sm.serialVersion).toBe(before + 1);
    expect(sm.accessPolicy?.allow).toEqual(policy.allow);
    expect((await client.get(`/${version}/isAuthorized/${id}?action=write`, { token: as(DAVE) })).status).toBe(200);
    expectError(await client.get(`/${version}/isAuthorized/${id}?action=read`, { token: as(BOB) }), 'NotAuthorized', 401);
  });

  it.each(VERSIONS)('setRightsHolder (%s): the identifier answered; serialVersion checked', async (version) => {
    const id = await v1Object();
    const set = (token: string, userId: string | undefined, serialVersion: string) => client.form('PUT', `/${version}/owner/${id}`, { ...(userId ? { userId } : {}), serialVersion }, { token });
    const before = await sv(id);
    expectError(await set(as(DAVE), BOB, String(before)), 'NotAuthorized', 401);
    expectError(await set(as(ALICE), BOB, String(before - 1)), 'VersionMismatch', 409);
    expectError(await set(as(ALICE), undefined, String(before)), 'InvalidRequest', 400);
    const ok = await set(as(ALICE), BOB, String(before));
    expect(ok.status, ok.text).toBe(200);
    expect(identifierOf(ok)).toBe(id);
    const sm = SystemMetadataCodec.decode((await client.get(`/${version}/meta/${id}`, { token: admin })).text);
    expect(sm.rightsHolder).toBe(BOB);
    expect(sm.serialVersion).toBe(before + 1);
    expectError(await client.get(`/${version}/isAuthorized/${id}?action=changePermission`, { token: as(ALICE) }), 'NotAuthorized', 401);
  });

  it.each(VERSIONS)("objects of a v2 Member Node (%s): refused by default, naming the node to call", async (version) => {
    const id = pid('v2obj');
    await registered(client, admin, memberNodeSysmeta(id, 'urn:node:AUTHV2', { rightsHolder: ALICE }));
    const current = await sv(id);
    for (const token of [as(ALICE), admin]) {
      const r = await client.form('PUT', `/${version}/accessRules/${id}`, { accessPolicy: policyXml({ allow: [{ subject: [DAVE], permission: ['read'] }] }), serialVersion: String(current) }, { token });
      expectError(r, 'NotAuthorized', 401);
      expect(errorOf(r).description).toContain('urn:node:AUTHV2');
      expect(errorOf(r).description).toContain(v2node.baseURL);
      expectError(await client.form('PUT', `/${version}/owner/${id}`, { userId: BOB, serialVersion: String(current) }, { token }), 'NotAuthorized', 401);
    }
    expect(await sv(id)).toBe(current);
  });
});

describe.each(DATABASES)('CNAuthorization with cn.changesToV2Objects "apply" on %s', (database) => {
  let started: Awaited<ReturnType<typeof startWithObjects>>;
  beforeAll(async () => {
    started = await startWithObjects(database, 'apply');
  });
  afterAll(async () => {
    await started?.cn.stop();
  });
  afterEach(async () => {
    await started.client.validate();
  });

  it('setAccessPolicy and setRightsHolder change objects of a v2 Member Node', async () => {
    const { client, admin, cn } = started;
    const alice = await cn.token(ALICE);
    const id = `v2-apply-${database}`;
    await registered(client, admin, memberNodeSysmeta(id, 'urn:node:AUTHV2', { rightsHolder: ALICE }));
    const r = await client.form('PUT', `/v2/accessRules/${id}`, { accessPolicy: policyXml({ allow: [{ subject: [DAVE], permission: ['read'] }] }), serialVersion: '1' }, { token: alice });
    expect(r.status, r.text).toBe(200);
    const owner = await client.form('PUT', `/v2/owner/${id}`, { userId: BOB, serialVersion: '2' }, { token: alice });
    expect(owner.status, owner.text).toBe(200);
    const sm = SystemMetadataCodec.decode((await client.get(`/v2/meta/${id}`, { token: admin })).text);
    expect(sm.rightsHolder).toBe(BOB);
    expect(sm.accessPolicy?.allow[0]?.subject).toEqual([DAVE]);
  });
});
