// CNDiagnostic end to end (coordinating-node-interface.md, "CNDiagnostic (v2.0)"): a CN started
// by the CLI on a fresh folder, on SQLite and on PostgreSQL, real HTTP, every XML body validated
// against the XSDs. echoCredentials with equivalent identities and groups is also covered in
// identity-http.test.ts.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { PersonCodec, SubjectInfoCodec, SystemMetadataCodec } from '@memberkit/types';
import { CN_ADMIN, CnClient, DATABASES, errorOf, startCn, type CnProcess, type Received } from './harness.js';

const SYSMETA = `<?xml version="1.0" encoding="UTF-8"?>
<ns1:systemMetadata xmlns:ns1="http://ns.dataone.org/service/types/v2.0">
  <serialVersion>1</serialVersion>
  <identifier>echo/../1?x#y&amp;z</identifier>
  <formatId>text/csv</formatId>
  <size>17</size>
  <checksum algorithm="SHA-1">2ef7bde608ce5404e97d5f042f95f89f1c232871</checksum>
  <submitter>CN=Alice,DC=example,DC=org</submitter>
  <rightsHolder>CN=Alice,DC=example,DC=org</rightsHolder>
  <accessPolicy><allow><subject>public</subject><permission>read</permission></allow></accessPolicy>
  <seriesId>echo-series</seriesId>
  <fileName>echo.csv</fileName>
</ns1:systemMetadata>`;

function expectError(r: Received, name: string, status: number, detailCode: string): void {
  const e = errorOf(r);
  expect(`${r.status} ${e.name} ${e.detailCode}`, r.text).toBe(`${status} ${name} ${detailCode}`);
}

describe.each(DATABASES)('CNDiagnostic over HTTP on %s', (database) => {
  let cn: CnProcess;
  let client: CnClient;

  beforeAll(async () => {
    cn = await startCn({ database });
    client = new CnClient(cn.baseUrl);
  });
  afterAll(async () => {
    await cn?.stop();
  });
  afterEach(async () => {
    await client.validate();
  });

  it('echoCredentials: GET /v2/diag/subject answers the caller\'s SubjectInfo (empty for public); InvalidToken 4967', async () => {
    const admin = await cn.token(CN_ADMIN);
    const register = await client.form('POST', '/v2/accounts', { person: new Blob([PersonCodec.encode({ subject: CN_ADMIN, givenName: ['memberkit'], familyName: 'developer', email: ['dev@example.org'], isMemberOf: [], equivalentIdentity: [] })]) }, { token: admin });
    expect(register.status, register.text).toBe(200);
    const echoed = await client.get('/v2/diag/subject', { token: admin });
    expect(echoed.status, echoed.text).toBe(200);
    const info = SubjectInfoCodec.decode(echoed.text);
    expect(info.person.map((p) => [p.subject, p.email])).toEqual([[CN_ADMIN, ['dev@example.org']]]);
    const anonymous = await client.get('/v2/diag/subject', { token: null });
    expect(SubjectInfoCodec.decode(anonymous.text)).toEqual({ person: [], group: [] });
    expectError(await client.get('/v2/diag/subject', { token: 'not-a-jwt' }), 'InvalidToken', 401, '4967');
  });

  it('echoSystemMetadata: POST /v2/diag/sysmeta answers the system metadata, from a `sysmeta` or a `sysMeta` part', async () => {
    for (const [name, value] of [['sysmeta', new Blob([SYSMETA])], ['sysMeta', SYSMETA]] as const) {
      const r = await client.form('POST', '/v2/diag/sysmeta', { [name]: value });
      expect(r.status, r.text).toBe(200);
      expect(r.headers.get('content-type')).toMatch(/xml/);
      expect(SystemMetadataCodec.decode(r.text)).toEqual(SystemMetadataCodec.decode(SYSMETA));
      expect(r.text).toContain('xmlns:d1="http://ns.dataone.org/service/types/v2.0"');
    }
  });

  it('echoSystemMetadata: InvalidSystemMetadata 4976 for what cannot be parsed or used; InvalidRequest 4974 without the part', async () => {
    const post = (sysmeta: string) => client.form('POST', '/v2/diag/sysmeta', { sysmeta });
    expectError(await post('<systemMetadata>'), 'InvalidSystemMetadata', 400, '4976');
    expectError(await post(SYSMETA.replace('<size>17</size>', '<size>seventeen</size>')), 'InvalidSystemMetadata', 400, '4976');
    expectError(await post(SYSMETA.replace(/\s*<formatId>text\/csv<\/formatId>/, '')), 'InvalidSystemMetadata', 400, '4976');
    expectError(await post(SYSMETA.replace('<formatId>text/csv</formatId>', '<formatId>no/such-format</formatId>')), 'InvalidSystemMetadata', 400, '4976');
    expectError(await post(SYSMETA.replace('algorithm="SHA-1"', 'algorithm="CRC32"')), 'InvalidSystemMetadata', 400, '4976');
    expectError(await client.form('POST', '/v2/diag/sysmeta', { other: SYSMETA }), 'InvalidRequest', 400, '4974');
    expectError(await client.request('POST', '/v2/diag/sysmeta', { body: SYSMETA, headers: { 'Content-Type': 'text/xml' } }), 'InvalidRequest', 400, '4974');
  });

  it('echoIndexedObject: POST /v2/diag/object is NotImplemented 4980 until the CN has its search index', async () => {
    expectError(await client.form('POST', '/v2/diag/object', { queryEngine: 'solr', sysmeta: SYSMETA, object: 'a,b\n1,2\n' }), 'NotImplemented', 501, '4980');
  });

  it('CNDiagnostic is a v2 API: its v1 paths are unknown (NotFound)', async () => {
    for (const [method, path] of [['GET', '/v1/diag/subject'], ['POST', '/v1/diag/sysmeta'], ['POST', '/v1/diag/object']] as const) {
      const r = await client.request(method, path);
      expect(r.status, path).toBe(404);
      expect(errorOf(r).name).toBe('NotFound');
    }
    expect(client.validated).toBeGreaterThan(10);
  });
});
