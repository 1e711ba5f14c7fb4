// CNCore end to end (coordinating-node-interface.md, "CNCore"; issue #20 items 1 and 8): a CN
// started by the CLI on a fresh folder, on SQLite and on PostgreSQL, real HTTP on v1 and v2,
// every XML body validated against the XSDs.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { allFormats, LogCodec, ObjectFormatListCodec, SystemMetadataCodec, type ApiVersion } from '@memberkit/types';
import { buildUploadSysmeta, encodeSysmeta } from '@memberkit/testkit';
import { CN_ADMIN, CnClient, DATABASES, errorOf, runCli, startCn, type CnProcess, type Received } from './harness.js';
import { createObject, EML, emlBytes, memberNodeSysmeta, registerSysmeta, registered } from './cn-fixtures.js';

const ALICE = 'CN=Alice,O=Example,C=US,DC=cilogon,DC=org';
const BOB = 'CN=Bob,O=Example,C=US,DC=cilogon,DC=org';
const VERIFIER = 'CN=Verifier,O=Example,C=US,DC=cilogon,DC=org';
const VERSIONS = ['v1', 'v2'] as const;

/** The exception of an error body, with the status it came with. */
function expectError(r: Received, name: string, errorCode: number, detailCode?: string): void {
  expect(r.status, r.text).toBe(errorCode);
  const e = errorOf(r);
  expect(e.name, r.text).toBe(name);
  expect(e.errorCode).toBe(String(errorCode));
  if (detailCode !== undefined) expect(e.detailCode, r.text).toBe(detailCode);
}

const identifierOf = (r: Received) => /<d1:identifier[^>]*>([^<]*)<\/d1:identifier>/.exec(r.text)?.[1];
const xml = (s: string) => new Blob([s], { type: 'text/xml' });

describe.each(DATABASES)('CNCore on %s', (database) => {
  let cn: CnProcess;
  let client: CnClient;
  let admin: string;
  let alice: string;
  let bob: string;
  let n = 0;
  const pid = (stem: string) => `${stem}-${database}-${++n}`;

  beforeAll(async () => {
    cn = await startCn({ database, config: { cn: { identity: { verifiers: [VERIFIER] } }, limits: { maxObjectBytes: 64 * 1024 } } });
    client = new CnClient(cn.baseUrl);
    [admin, alice, bob] = await Promise.all([cn.token(CN_ADMIN), cn.token(ALICE), cn.token(BOB)]);
  });
  afterAll(async () => {
    await cn?.stop();
  });
  afterEach(async () => {
    await client.validate();
  });

  describe('ping and getCapabilities', () => {
    it.each(VERSIONS)('ping (%s): 200 with a Date header', async (version) => {
      const r = await client.get(`/${version}/monitor/ping`);
      expect(r.status).toBe(200);
      expect(Date.parse(r.headers.get('date') ?? '')).not.toBeNaN();
    });

    it.each(VERSIONS)("getCapabilities (%s): the CN's Node document, type cn, its services and the identity restrictions", async (version) => {
      for (const path of [`/${version}`, `/${version}/`]) {
        const r = await client.get(path);
        expect(r.status, path).toBe(200);
        expect(r.headers.get('content-type')).toMatch(/xml/);
        expect(r.text).toContain('type="cn"');
        expect(r.text).toContain('<identifier>urn:node:CNLOCAL</identifier>');
        for (const service of ['CNCore', 'CNRead', 'CNAuthorization', 'CNIdentity', 'CNRegister', 'CNDiagnostic', 'CNView']) expect(r.text).toContain(`name="${service}"`);
        expect(r.text).toMatch(/<restriction methodName="verifyAccount">[\s\S]*?<\/restriction>/);
        const verify = /<restriction methodName="verifyAccount">([\s\S]*?)<\/restriction>/.exec(r.text)![1]!;
        expect(verify).toContain(VERIFIER);
        expect(verify).toContain(CN_ADMIN);
        expect(r.text).toContain('methodName="mapIdentity"');
      }
    });

    it('getCapabilities at the bare base address', async () => {
      const r = await client.get('');
      expect(r.status).toBe(200);
      expect(r.text).toContain('type="cn"');
    });

    it('an unknown path answers a DataONE NotFound', async () => {
      expectError(await client.get('/v2/no-such-thing'), 'NotFound', 404);
    });
  });

  describe('formats and checksum algorithms', () => {
    it.each(VERSIONS)("listFormats (%s): the federation's list as vendored, count = total", async (version) => {
      const r = await client.get(`/${version}/formats`);
      expect(r.status).toBe(200);
      const list = ObjectFormatListCodec.decode(r.text);
      expect(list.total).toBeGreaterThanOrEqual(allFormats().length);
      expect(list.count).toBe(list.objectFormat.length);
      expect(list.objectFormat.map((f) => f.formatId)).toEqual(expect.arrayContaining([EML, 'text/csv']));
      expect(list.objectFormat[0]!.formatId).toBe(allFormats()[0]!.formatId);
    });

    it.each(VERSIONS)('getFormat (%s): one format, its id escaped as a path element; NotFound for an unknown one', async (version) => {
      const r = await client.get(`/${version}/formats/${encodeURIComponent(EML)}`);
      expect(r.status).toBe(200);
      expect(r.text).toContain(`<formatId>${EML}</formatId>`);
      expect(r.text).toContain('<formatType>METADATA</formatType>');
      expectError(await client.get(`/${version}/formats/${encodeURIComponent('no/such format')}`), 'NotFound', 404, '4848');
    });

    it('memberkit cn add-format adds a format the running CN serves; adding it again is refused', async () => {
      const id = `http://example.org/format/${database}`;
      await runCli(['cn', 'add-format', cn.dir, '--id', id, '--name', 'Example format', '--type', 'DATA', '--media-type', 'application/x-example', '--extension', '.exa']);
      const r = await client.get(`/v2/formats/${encodeURIComponent(id)}`);
      expect(r.status, r.text).toBe(200);
      expect(r.text).toContain('<formatName>Example format</formatName>');
      expect(r.text).toContain('<extension>exa</extension>');
      const list = ObjectFormatListCodec.decode((await client.get('/v2/formats')).text);
      expect(list.objectFormat.at(-1)!.formatId).toBe(id);
      await expect(runCli(['cn', 'add-format', cn.dir, '--id', id, '--name', 'again', '--type', 'DATA'])).rejects.toThrow(/already in the list/);
    });

    it.each(VERSIONS)('listChecksumAlgorithms (%s)', async (version) => {
      const r = await client.get(`/${version}/checksum`);
      expect(r.status).toBe(200);
      for (const a of ['SHA-1', 'MD5', 'SHA-256']) expect(r.text).toContain(`<algorithm>${a}</algorithm>`);
    });
  });

  describe('reservations', () => {
    it('reserveIdentifier takes the form field pid (v2) and id (v1); the same subject may reserve again', async () => {
      const a = pid('reserve');
      const r = await client.form('POST', '/v2/reserve', { pid: a }, { token: alice });
      expect(r.status, r.text).toBe(200);
      expect(identifierOf(r)).toBe(a);
      const again = await client.form('POST', '/v2/reserve', { pid: a }, { token: alice });
      expect(again.status, again.text).toBe(200);
      const b = pid('reserve-v1');
      const v1 = await client.form('POST', '/v1/reserve', { id: b }, { token: alice });
      expect(v1.status, v1.text).toBe(200);
      expect(identifierOf(v1)).toBe(b);
    });

    it("reserveIdentifier: another subject's reservation or an identifier in use is IdentifierNotUnique", async () => {
      const a = pid('taken');
      expect((await client.form('POST', '/v2/reserve', { pid: a }, { token: alice })).status).toBe(200);
      expectError(await client.form('POST', '/v2/reserve', { pid: a }, { token: bob }), 'IdentifierNotUnique', 409, '4210');
      const used = pid('used');
      await registered(client, admin, memberNodeSysmeta(used, 'urn:node:MNA'));
      expectError(await client.form('POST', '/v1/reserve', { pid: used }, { token: bob }), 'IdentifierNotUnique', 409, '4210');
    });

    it('reserveIdentifier: an anonymous caller is NotAuthorized; a missing or invalid identifier InvalidRequest', async () => {
      expectError(await client.form('POST', '/v2/reserve', { pid: pid('anon') }, { token: null }), 'NotAuthorized', 401, '4180');
      expectError(await client.form('POST', '/v2/reserve', { other: 'x' }, { token: alice }), 'InvalidRequest', 400, '4200');
      expectError(await client.form('POST', '/v2/reserve', { pid: 'has space' }, { token: alice }), 'InvalidRequest', 400, '4200');
    });

    it('hasReservation answers GET /reserve/{id}?subject= and GET /reserve/{id}/{subject}', async () => {
      const a = pid('has');
      expect((await client.form('POST', '/v2/reserve', { pid: a }, { token: alice })).status).toBe(200);
      for (const version of VERSIONS) {
        const q = await client.get(`/${version}/reserve/${encodeURIComponent(a)}?subject=${encodeURIComponent(ALICE)}`, { token: bob });
        expect(q.status, q.text).toBe(200);
        const p = await client.get(`/${version}/reserve/${encodeURIComponent(a)}/${encodeURIComponent(ALICE)}`);
        expect(p.status, p.text).toBe(200);
        expectError(await client.get(`/${version}/reserve/${encodeURIComponent(a)}?subject=${encodeURIComponent(BOB)}`), 'NotAuthorized', 401, '4924');
      }
    });

    it('hasReservation: NotFound when not reserved, IdentifierNotUnique when in use, InvalidRequest without a subject', async () => {
      expectError(await client.get(`/v2/reserve/${pid('none')}?subject=${encodeURIComponent(ALICE)}`), 'NotFound', 404, '4923');
      const used = pid('used');
      await registered(client, admin, memberNodeSysmeta(used, 'urn:node:MNA'));
      expectError(await client.get(`/v2/reserve/${used}?subject=${encodeURIComponent(ALICE)}`), 'IdentifierNotUnique', 409);
      expectError(await client.get(`/v2/reserve/${pid('nosubject')}`), 'InvalidRequest', 400, '4925');
    });

    it.each(VERSIONS)('generateIdentifier (%s): UUID, reserved for its caller; a fragment leads it', async (version) => {
      const r = await client.form('POST', `/${version}/generate`, { scheme: 'UUID' }, { token: alice });
      expect(r.status, r.text).toBe(200);
      const id = identifierOf(r)!;
      expect(id).toMatch(/^urn:uuid:[0-9a-f-]{36}$/);
      expect((await client.get(`/${version}/reserve/${encodeURIComponent(id)}?subject=${encodeURIComponent(ALICE)}`)).status).toBe(200);
      expectError(await client.form('POST', `/${version}/reserve`, { pid: id }, { token: bob }), 'IdentifierNotUnique', 409);
      const f = await client.form('POST', `/${version}/generate`, { scheme: 'uuid', fragment: 'doc.' }, { token: alice });
      expect(f.status, f.text).toBe(200);
      expect(identifierOf(f)).toMatch(/^doc\.[0-9a-f-]{36}$/);
    });

    it('generateIdentifier: DOI, ARK and unknown schemes are InvalidRequest; an anonymous caller NotAuthorized', async () => {
      for (const scheme of ['DOI', 'ARK', 'ISBN']) expectError(await client.form('POST', '/v2/generate', { scheme }, { token: alice }), 'InvalidRequest', 400, '4200');
      expectError(await client.form('POST', '/v2/generate', { scheme: 'UUID' }, { token: null }), 'NotAuthorized', 401, '4180');
    });
  });

  describe('CN-private create, registerSystemMetadata, updateSystemMetadata, setObsoletedBy, archive, delete', () => {
    it.each(VERSIONS)('create (%s): the CN holds the bytes of science metadata', async (version) => {
      const id = pid('meta');
      const bytes = emlBytes(`Title ${id}`);
      const r = await createObject(client, admin, { pid: id, bytes, rightsHolder: ALICE, formatId: EML, version });
      expect(r.status, r.text).toBe(200);
      expect(identifierOf(r)).toBe(id);
      const got = await client.get(`/${version}/object/${id}`);
      expect(got.status).toBe(200);
      expect(got.text).toBe(bytes);
      const sm = SystemMetadataCodec.decode((await client.get(`/${version}/meta/${id}`)).text);
      expect(sm.authoritativeMemberNode).toBe('urn:node:CNLOCAL');
      expect(sm.serialVersion).toBe(1);
    });

    it('create: callers other than CN subjects and administrators are NotAuthorized', async () => {
      const id = pid('meta');
      expectError(await createObject(client, alice, { pid: id, bytes: emlBytes('x'), rightsHolder: ALICE, formatId: EML }), 'NotAuthorized', 401, '1100');
      expectError(await createObject(client, '', { pid: id, bytes: emlBytes('x'), rightsHolder: ALICE, formatId: EML }), 'NotAuthorized', 401, '1100');
    });

    it('create: a duplicate is IdentifierNotUnique; a bad checksum or an unknown format InvalidSystemMetadata; no object part InvalidRequest', async () => {
      const id = pid('meta');
      expect((await createObject(client, admin, { pid: id, bytes: emlBytes('a'), rightsHolder: ALICE, formatId: EML })).status).toBe(200);
      expectError(await createObject(client, admin, { pid: id, bytes: emlBytes('a'), rightsHolder: ALICE, formatId: EML }), 'IdentifierNotUnique', 409, '1120');
      expectError(await createObject(client, admin, { pid: pid('meta'), bytes: emlBytes('b'), rightsHolder: ALICE, formatId: EML, overrides: { checksum: { algorithm: 'SHA-1', value: '0'.repeat(40) } } }), 'InvalidSystemMetadata', 400, '4896');
      expectError(await createObject(client, admin, { pid: pid('meta'), bytes: 'x', rightsHolder: ALICE, formatId: 'no/such-format' }), 'InvalidSystemMetadata', 400, '4896');
      const other = pid('meta');
      const sysmeta = encodeSysmeta(buildUploadSysmeta({ pid: other, bytes: 'x', rightsHolder: ALICE }));
      expectError(await client.form('POST', '/v2/object', { pid: other, sysmeta: xml(sysmeta) }, { token: admin }), 'InvalidRequest', 400, '4891');
    });

    it("create and registerSystemMetadata of a reserved identifier: only for its holder's objects (the submitter)", async () => {
      const held = pid('held');
      expect((await client.form('POST', '/v2/reserve', { pid: held }, { token: alice })).status).toBe(200);
      expectError(await createObject(client, admin, { pid: held, bytes: emlBytes('x'), rightsHolder: BOB, formatId: EML, overrides: { submitter: BOB } }), 'NotAuthorized', 401, '1100');
      expect((await createObject(client, admin, { pid: held, bytes: emlBytes('x'), rightsHolder: ALICE, formatId: EML, overrides: { submitter: ALICE } })).status).toBe(200);
      const data = pid('held-data');
      expect((await client.form('POST', '/v2/reserve', { pid: data }, { token: alice })).status).toBe(200);
      expectError(await registerSysmeta(client, admin, memberNodeSysmeta(data, 'urn:node:MNA', { submitter: BOB })), 'NotAuthorized', 401, '4861');
      await registered(client, admin, memberNodeSysmeta(data, 'urn:node:MNA', { submitter: ALICE }));
    });

    it('create: an object larger than limits.maxObjectBytes is InsufficientResources', async () => {
      const big = 'x'.repeat(64 * 1024 + 1);
      expectError(await createObject(client, admin, { pid: pid('big'), bytes: big, rightsHolder: ALICE, formatId: 'text/plain' }), 'InsufficientResources', 413, '4897');
    });

    it.each(VERSIONS)('registerSystemMetadata (%s): system metadata only; get answers NotFound (no bytes here), describe and getSystemMetadata answer', async (version) => {
      const id = pid('data');
      const sm = memberNodeSysmeta(id, 'urn:node:MNA', { serialVersion: 3 });
      const r = await registerSysmeta(client, admin, sm, version);
      expect(r.status, r.text).toBe(200);
      expect(identifierOf(r)).toBe(id);
      const back = SystemMetadataCodec.decode((await client.get(`/${version}/meta/${id}`)).text);
      expect(back.authoritativeMemberNode).toBe('urn:node:MNA');
      expect(back.serialVersion).toBe(3);
      expect(back.checksum.value).toBe(sm.checksum.value);
      expectError(await client.get(`/${version}/object/${id}`), 'NotFound', 404, '1020');
      const head = await client.request('HEAD', `/${version}/object/${id}`);
      expect(head.status).toBe(200);
      expect(head.headers.get('content-length')).toBe(String(sm.size));
    });

    it('registerSystemMetadata: NotAuthorized for others, InvalidRequest for a duplicate, InvalidSystemMetadata without an authoritative node', async () => {
      const id = pid('data');
      expectError(await registerSysmeta(client, alice, memberNodeSysmeta(id, 'urn:node:MNA')), 'NotAuthorized', 401, '4861');
      await registered(client, admin, memberNodeSysmeta(id, 'urn:node:MNA'));
      expectError(await registerSysmeta(client, admin, memberNodeSysmeta(id, 'urn:node:MNA')), 'InvalidRequest', 400, '4863');
      const { authoritativeMemberNode: _a, originMemberNode: _o, ...orphan } = memberNodeSysmeta(pid('data'), 'x');
      expectError(await registerSysmeta(client, admin, orphan), 'InvalidSystemMetadata', 400, '4864');
      expectError(await client.form('POST', '/v2/meta', { pid: pid('data'), sysmeta: xml('<not-sysmeta/>') }, { token: admin }), 'InvalidSystemMetadata', 400, '4864');
    });

    it('updateSystemMetadata (v2): the CN changes its copy; a serialVersion other than the current one is VersionMismatch; fixed fields stay', async () => {
      const id = pid('data');
      await registered(client, admin, memberNodeSysmeta(id, 'urn:node:MNA'));
      const read = await client.get(`/v2/meta/${id}`);
      expect(read.status, read.text).toBe(200);
      const current = SystemMetadataCodec.decode(read.text);
      const changed = { ...current, accessPolicy: { allow: [{ subject: [BOB], permission: ['write' as const] }] } };
      const put = (sm: typeof current, token = admin) => client.form('PUT', '/v2/meta', { pid: id, sysmeta: xml(encodeSysmeta(sm)) }, { token });
      const ok = await put(changed);
      expect(ok.status, ok.text).toBe(200);
      const after = SystemMetadataCodec.decode((await client.get(`/v2/meta/${id}`, { token: admin })).text);
      expect(after.serialVersion).toBe(current.serialVersion! + 1);
      expect(after.accessPolicy?.allow[0]?.subject).toEqual([BOB]);
      expectError(await put({ ...after, serialVersion: current.serialVersion }), 'VersionMismatch', 409);
      expectError(await put({ ...after, size: after.size + 1 }), 'InvalidSystemMetadata', 400, '4956');
      expectError(await put(after, alice), 'NotAuthorized', 401, '4867');
      expectError(await client.form('PUT', '/v2/meta', { pid: pid('missing'), sysmeta: xml(encodeSysmeta(after)) }, { token: admin }), 'NotFound', 404);
    });

    it.each(VERSIONS)('setObsoletedBy (%s): serialVersion checked (VersionMismatch), set once', async (version) => {
      const id = pid('old');
      await registered(client, admin, memberNodeSysmeta(id, 'urn:node:MNA'));
      const next = pid('new');
      const set = (by: string, serialVersion: string, token = admin, target = id) => client.form('PUT', `/${version}/obsoletedBy/${target}`, { obsoletedByPid: by, serialVersion }, { token });
      expectError(await set(next, '7'), 'VersionMismatch', 409, '4946');
      expectError(await set(next, '1', alice), 'NotAuthorized', 401, '4945');
      expectError(await set(next, '1', admin, pid('missing')), 'NotFound', 404, '4944');
      expectError(await client.form('PUT', `/${version}/obsoletedBy/${id}`, { obsoletedByPid: next }, { token: admin }), 'InvalidRequest', 400, '4942');
      const ok = await set(next, '1');
      expect(ok.status, ok.text).toBe(200);
      const sm = SystemMetadataCodec.decode((await client.get(`/${version}/meta/${id}`)).text);
      expect(sm.obsoletedBy).toBe(next);
      expectError(await set(pid('other'), String(sm.serialVersion)), 'InvalidRequest', 400, '4942');
    });

    it.each(VERSIONS)('archive (%s): archived and still readable; twice is InvalidRequest; others NotAuthorized', async (version) => {
      const id = pid('arch');
      await registered(client, admin, memberNodeSysmeta(id, 'urn:node:MNA'));
      expectError(await client.request('PUT', `/${version}/archive/${id}`, { token: alice }), 'NotAuthorized', 401, '4970');
      const r = await client.request('PUT', `/${version}/archive/${id}`, { token: admin });
      expect(r.status, r.text).toBe(200);
      expect(identifierOf(r)).toBe(id);
      expect(SystemMetadataCodec.decode((await client.get(`/${version}/meta/${id}`)).text).archived).toBe(true);
      expectError(await client.request('PUT', `/${version}/archive/${id}`, { token: admin }), 'InvalidRequest', 400);
      expectError(await client.request('PUT', `/${version}/archive/${pid('missing')}`, { token: admin }), 'NotFound', 404, '4971');
    });

    it.each(VERSIONS)('delete (%s): gone from the CN, the identifier stays in use; administrators only', async (version) => {
      const id = pid('del');
      await registered(client, admin, memberNodeSysmeta(id, 'urn:node:MNA'));
      expectError(await client.request('DELETE', `/${version}/object/${id}`, { token: alice }), 'NotAuthorized', 401, '4960');
      const r = await client.request('DELETE', `/${version}/object/${id}`, { token: admin });
      expect(r.status, r.text).toBe(200);
      expect(identifierOf(r)).toBe(id);
      expectError(await client.get(`/${version}/meta/${id}`), 'NotFound', 404);
      expectError(await client.form('POST', '/v2/reserve', { pid: id }, { token: alice }), 'IdentifierNotUnique', 409);
      expectError(await registerSysmeta(client, admin, memberNodeSysmeta(id, 'urn:node:MNA')), 'InvalidRequest', 400, '4863');
      expectError(await client.request('DELETE', `/${version}/object/${pid('missing')}`, { token: admin }), 'NotFound', 404, '4961');
    });
  });

  describe('getLogRecords', () => {
    const log = async (version: ApiVersion, query: string, token: string | null) => {
      const r = await client.get(`/${version}/log${query}`, { token });
      expect(r.status, r.text).toBe(200);
      return LogCodec.decode(r.text);
    };

    it.each(VERSIONS)("getLogRecords (%s): the CN's events; fromDate exclusive, toDate inclusive", async (version) => {
      const id = pid('logged');
      await registered(client, admin, memberNodeSysmeta(id, 'urn:node:MNA', { accessPolicy: undefined }));
      const all = await log(version, `?idFilter=${id}&pidFilter=${id}`, admin);
      expect(all.logEntry.length).toBeGreaterThanOrEqual(1);
      const entry = all.logEntry[0]!;
      expect(entry.identifier).toBe(id);
      expect(entry.nodeIdentifier).toBe('urn:node:CNLOCAL');
      const at = entry.dateLogged.toISOString();
      const from = await log(version, `?idFilter=${id}&pidFilter=${id}&fromDate=${at}`, admin);
      expect(from.logEntry.map((e) => e.entryId)).not.toContain(entry.entryId);
      const to = await log(version, `?idFilter=${id}&pidFilter=${id}&toDate=${at}`, admin);
      expect(to.logEntry.map((e) => e.entryId)).toContain(entry.entryId);
      const before = new Date(entry.dateLogged.getTime() - 1).toISOString();
      expect((await log(version, `?idFilter=${id}&pidFilter=${id}&fromDate=${before}&toDate=${at}`, admin)).logEntry.map((e) => e.entryId)).toContain(entry.entryId);
    });

    it("getLogRecords: a caller sees only the entries of objects it may read", async () => {
      const secret = pid('secret');
      await registered(client, admin, memberNodeSysmeta(secret, 'urn:node:MNA', { rightsHolder: ALICE, accessPolicy: undefined }));
      expect((await log('v2', `?idFilter=${secret}`, null)).total).toBe(0);
      expect((await log('v2', `?idFilter=${secret}`, bob)).total).toBe(0);
      expect((await log('v2', `?idFilter=${secret}`, alice)).total).toBeGreaterThanOrEqual(1);
    });

    it('getLogRecords: a bad date or a v1 event outside the v1 list is InvalidRequest', async () => {
      expectError(await client.get('/v2/log?fromDate=yesterday', { token: admin }), 'InvalidRequest', 400, '1480');
      expectError(await client.get('/v1/log?event=updateSystemMetadata', { token: admin }), 'InvalidRequest', 400, '1480');
    });
  });
});

describe('credentials the CN cannot verify', () => {
  let cn: CnProcess;
  let client: CnClient;
  beforeAll(async () => {
    cn = await startCn();
    client = new CnClient(cn.baseUrl);
  });
  afterAll(async () => {
    await cn?.stop();
  });
  afterEach(async () => {
    await client.validate();
  });

  it("a bearer token the CN did not sign is InvalidToken, with each operation's detail code", async () => {
    const { generateTokenKeyPair, mintToken } = await import('@memberkit/core');
    const stranger = await mintToken(generateTokenKeyPair().privateKeyPem, { subject: ALICE });
    expectError(await client.form('POST', '/v2/reserve', { pid: 'x' }, { token: stranger }), 'InvalidToken', 401, '4190');
    expectError(await client.form('POST', '/v2/generate', { scheme: 'UUID' }, { token: stranger }), 'InvalidToken', 401, '4190');
    expectError(await client.get('/v2/log', { token: stranger }), 'InvalidToken', 401, '1470');
    expectError(await client.get('/v2/reserve/x?subject=y', { token: stranger }), 'InvalidToken', 401, '4922');
    expectError(await client.get('/v2/object/x', { token: stranger }), 'InvalidToken', 401, '1010');
    expectError(await client.get('/v2/meta/x', { token: stranger }), 'InvalidToken', 401, '1050');
    expectError(await client.get('/v2/resolve/x', { token: stranger }), 'InvalidToken', 401, '4130');
    expectError(await client.request('PUT', '/v2/archive/x', { token: stranger }), 'InvalidToken', 401, '4973');
    expectError(await client.request('DELETE', '/v2/object/x', { token: stranger }), 'InvalidToken', 401, '4963');
    expectError(await client.form('POST', '/v2/meta', { pid: 'x' }, { token: stranger }), 'InvalidToken', 401, '4865');
  });
});

describe('reservations expire (cn.reservationTtlSeconds)', () => {
  let cn: CnProcess;
  let client: CnClient;
  beforeAll(async () => {
    cn = await startCn({ config: { cn: { reservationTtlSeconds: 1 } } });
    client = new CnClient(cn.baseUrl);
  });
  afterAll(async () => {
    await cn?.stop();
  });
  afterEach(async () => {
    await client.validate();
  });

  it('an expired reservation is as good as none: hasReservation NotFound, another subject may reserve', async () => {
    const [alice, bob] = await Promise.all([cn.token(ALICE), cn.token(BOB)]);
    expect((await client.form('POST', '/v2/reserve', { pid: 'short-lived' }, { token: alice })).status).toBe(200);
    expectError(await client.form('POST', '/v2/reserve', { pid: 'short-lived' }, { token: bob }), 'IdentifierNotUnique', 409);
    await new Promise((r) => setTimeout(r, 1200));
    expectError(await client.get(`/v2/reserve/short-lived?subject=${encodeURIComponent(ALICE)}`), 'NotFound', 404, '4923');
    expect((await client.form('POST', '/v2/reserve', { pid: 'short-lived' }, { token: bob })).status).toBe(200);
    expect((await client.get(`/v2/reserve/short-lived/${encodeURIComponent(BOB)}`)).status).toBe(200);
  });
});
