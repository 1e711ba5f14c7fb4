// Identity and access control end to end (issue #4): a Member Node serving HTTPS itself
// with a generated CA, client certificates (valid, untrusted CA, expired, with the DataONE
// SubjectInfo extension), certificates forwarded by a proxy (trusted and untrusted
// addresses), bearer JWTs (valid, expired, wrong signature, wrong issuer, alg none,
// algorithm confusion), and a CN stub for getSubjectInfo and the node list.
import 'reflect-metadata';
import { createHash, createPrivateKey, createHmac } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SignJWT } from 'jose';
import { createFilesystemStorage } from '@memberkit/adapter-filesystem';
import { createSqlCatalogue } from '@memberkit/adapter-sql';
import { createMemberNode, DEFAULT_SCHEDULE, generateTokenKeyPair, mintToken, serveNode, silentLogger, type CoreConfig, type RunningServer } from '@memberkit/core';
import { LogCodec, NodeListCodec, ObjectListCodec, SubjectInfoCodec, SystemMetadataCodec, type SubjectInfo, type SystemMetadata } from '@memberkit/types';
import { createCa, dn, issue, type Issued } from '../../packages/core/test/identity/pki.js';

const JANE = 'CN=Jane Doe A123,O=Google,C=US,DC=cilogon,DC=org';
const JANE_ORCID = 'http://orcid.org/0000-0002-1111-2222';
const BOB = 'http://orcid.org/0000-0003-3333-4444';
const LAB = 'CN=lab-group,DC=dataone,DC=org';
const ADMIN = 'CN=Node Admin,O=Memberkit Test,C=US,DC=cilogon,DC=org';
const OTHER = 'CN=Other Person,O=Memberkit Test,C=US,DC=cilogon,DC=org';
const CN_SUBJECT = 'CN=urn:node:CNTEST,DC=dataone,DC=org';
const ISSUER = 'https://cn.test.dataone.org/portal';

interface Answer {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

interface Caller {
  cert?: Issued;
  token?: string;
  headers?: Record<string, string>;
  localAddress?: string;
}

let work: string;
let running: RunningServer;
let base: string;
let rootCa: Issued;
let caPem: string;
let cnStub: Server;
let cnBase: string;
const cnHits: Record<string, number> = {};
const certs: Record<string, Issued> = {};
let jwtKeys: { privateKeyPem: string; publicKeyPem: string };
const tokens: Record<string, string> = {};

function send(method: string, path: string, caller: Caller = {}, body?: { data: Buffer; contentType: string }): Promise<Answer> {
  const url = new URL(base + path);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: url.hostname, port: url.port, path: url.pathname + url.search, method, ca: caPem,
        ...(caller.cert ? { cert: caller.cert.pem, key: caller.cert.keyPem } : {}),
        ...(caller.localAddress ? { localAddress: caller.localAddress } : {}),
        headers: {
          ...(caller.token ? { Authorization: `Bearer ${caller.token}` } : {}),
          ...(body ? { 'Content-Type': body.contentType, 'Content-Length': body.data.length } : {}),
          ...caller.headers,
        },
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), headers: res.headers }));
      },
    );
    req.on('error', reject);
    req.end(body?.data);
  });
}

async function multipart(fields: Record<string, string | Buffer>): Promise<{ data: Buffer; contentType: string }> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) {
    if (typeof v === 'string') form.append(k, v);
    else form.append(k, new Blob([v]), k);
  }
  const r = new Request('http://x/', { method: 'POST', body: form });
  return { data: Buffer.from(await r.arrayBuffer()), contentType: r.headers.get('content-type')! };
}

function sysmeta(pid: string, bytes: Buffer, extra: Partial<SystemMetadata>): string {
  return SystemMetadataCodec.encode({
    identifier: pid, formatId: 'application/octet-stream', size: bytes.length,
    checksum: { algorithm: 'SHA-1', value: createHash('sha1').update(bytes).digest('hex') },
    rightsHolder: JANE_ORCID, replica: [], ...extra,
  } as SystemMetadata, 'v2');
}

async function create(caller: Caller, pid: string, extra: Partial<SystemMetadata> = {}): Promise<Answer> {
  const bytes = Buffer.from(`bytes of ${pid}\n`);
  return send('POST', '/v2/object', caller, await multipart({ pid, object: bytes, sysmeta: Buffer.from(sysmeta(pid, bytes, extra)) }));
}

const exceptionOf = (a: Answer) => /<error[^>]*name="([^"]+)"/.exec(a.body)?.[1] ?? (a.headers['dataone-exception-name'] as string | undefined);

function subjectInfo(info: Partial<SubjectInfo>): string {
  return SubjectInfoCodec.encode({ person: [], group: [], ...info }, 'v1');
}

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'memberkit-identity-'));
  // CN stub: getSubjectInfo for BOB (member of LAB) and a node list naming one CN.
  cnStub = createServer((req, res) => {
    const path = decodeURIComponent(req.url ?? '');
    cnHits[path] = (cnHits[path] ?? 0) + 1;
    res.setHeader('Content-Type', 'text/xml');
    if (path === `/cn/v2/accounts/${BOB}`) {
      res.end(subjectInfo({ person: [{ subject: BOB, givenName: ['Bob'], familyName: 'Member', email: [], isMemberOf: [LAB], equivalentIdentity: [] }] }));
    } else if (path === '/cn/v2/node') {
      res.end(NodeListCodec.encode({ node: [{
        identifier: 'urn:node:CNTEST', name: 'CN', description: 'CN', baseURL: 'https://cn.test/cn', replicate: false, synchronize: false, type: 'cn', state: 'up',
        subject: [CN_SUBJECT], contactSubject: [CN_SUBJECT], property: [],
      } as never] }, 'v2'));
    } else {
      res.statusCode = 404;
      res.end('<error name="NotFound" errorCode="404" detailCode="0"><description>no such subject</description></error>');
    }
  });
  await new Promise<void>((r) => cnStub.listen(0, '127.0.0.1', r));
  cnBase = `http://127.0.0.1:${(cnStub.address() as AddressInfo).port}/cn`;

  rootCa = await createCa(dn(['CN', 'Memberkit Test CA'], ['O', 'Memberkit Test'], ['C', 'US'], ['DC', 'cilogon'], ['DC', 'org']));
  const rogueCa = await createCa(dn(['CN', 'Memberkit Test CA'], ['O', 'Memberkit Test'], ['C', 'US'], ['DC', 'cilogon'], ['DC', 'org']));
  const serverCa = await createCa(dn(['CN', 'Server CA']));
  caPem = serverCa.pem;
  const server = await issue(serverCa, dn(['CN', 'localhost']), { serverIps: ['127.0.0.1'] });
  const janeInfo = subjectInfo({
    person: [
      { subject: JANE, givenName: ['Jane'], familyName: 'Doe', email: [], isMemberOf: [LAB], equivalentIdentity: [JANE_ORCID], verified: true },
      { subject: JANE_ORCID, givenName: ['Jane'], familyName: 'Doe', email: [], isMemberOf: [], equivalentIdentity: [JANE] },
      { subject: 'CN=Unrelated,DC=org', givenName: ['U'], familyName: 'U', email: [], isMemberOf: ['CN=unrelated-group,DC=org'], equivalentIdentity: [] },
    ],
  });
  const name = (cn: string) => dn(['CN', cn], ['O', 'Memberkit Test'], ['C', 'US'], ['DC', 'cilogon'], ['DC', 'org']);
  certs.jane = await issue(rootCa, dn(['CN', 'Jane Doe A123'], ['O', 'Google'], ['C', 'US'], ['DC', 'cilogon'], ['DC', 'org']), { subjectInfoXml: janeInfo });
  certs.janePlain = await issue(rootCa, dn(['CN', 'Jane Doe A123'], ['O', 'Google'], ['C', 'US'], ['DC', 'cilogon'], ['DC', 'org']));
  certs.admin = await issue(rootCa, name('Node Admin'));
  certs.other = await issue(rootCa, name('Other Person'));
  certs.rogue = await issue(rogueCa, name('Node Admin'));
  certs.expired = await issue(rootCa, name('Node Admin'), { notBefore: new Date(Date.now() - 10 * 86_400_000), notAfter: new Date(Date.now() - 86_400_000) });

  jwtKeys = generateTokenKeyPair();
  const mint = (subject: string, opts: { ttlSeconds?: number; now?: Date; issuer?: string } = {}) => mintToken(jwtKeys.privateKeyPem, { subject, issuer: ISSUER, ...opts });
  tokens.bob = await mint(BOB);
  tokens.other = await mint(OTHER);
  tokens.cn = await mint(CN_SUBJECT);
  tokens.admin = await mint(ADMIN);
  tokens.expired = await mint(OTHER, { ttlSeconds: 60, now: new Date(Date.now() - 3600_000) });
  tokens.wrongIssuer = await mint(OTHER, { issuer: 'https://evil.example.org' });
  tokens.wrongSignature = await mintToken(generateTokenKeyPair().privateKeyPem, { subject: ADMIN, issuer: ISSUER });
  const b64 = (o: object) => Buffer.from(JSON.stringify(o)).toString('base64url');
  const now = Math.floor(Date.now() / 1000);
  const claims = { sub: ADMIN, iss: ISSUER, iat: now, exp: now + 3600 };
  tokens.algNone = `${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims)}.`;
  const hsInput = `${b64({ alg: 'HS256', typ: 'JWT' })}.${b64(claims)}`;
  tokens.confusion = `${hsInput}.${createHmac('sha256', jwtKeys.publicKeyPem).update(hsInput).digest('base64url')}`;
  // DataONE-style token without exp: issuedAt + ttl
  const key = createPrivateKey(jwtKeys.privateKeyPem);
  tokens.d1Style = await new SignJWT({ userId: OTHER, issuedAt: new Date().toISOString(), ttl: 3600, iss: ISSUER }).setProtectedHeader({ alg: 'ES256' }).sign(key);
  tokens.d1StyleExpired = await new SignJWT({ userId: OTHER, issuedAt: new Date(Date.now() - 7200_000).toISOString(), ttl: 3600, iss: ISSUER }).setProtectedHeader({ alg: 'ES256' }).sign(key);
  tokens.noExpiry = await new SignJWT({ sub: OTHER, iss: ISSUER }).setProtectedHeader({ alg: 'ES256' }).sign(key);

  const store = createSqlCatalogue({ dialect: 'sqlite', connection: join(work, 'catalogue.sqlite') });
  const storage = createFilesystemStorage({ root: join(work, 'objects') });
  const config: CoreConfig = {
    node: {
      identifier: 'urn:node:IDENTITY', name: 'identity test node', description: 'identity tests', baseURL: 'https://127.0.0.1/mn',
      subject: 'CN=urn:node:IDENTITY,DC=dataone,DC=org', contactSubject: [ADMIN], replicate: false, synchronize: true, schedule: DEFAULT_SCHEDULE,
    },
    access: { administrators: [ADMIN], cnSubjects: [], createPolicy: 'authenticated' },
    auth: {
      clientCa: [rootCa.pem],
      proxy: { header: 'x-ssl-client-cert', trustedProxies: ['127.0.0.1/32', '::1'] },
      jwt: { keys: [jwtKeys.publicKeyPem], issuer: ISSUER },
      identity: { cnBaseUrl: cnBase, cacheTtlSeconds: 600 },
    },
    basePath: '/mn',
  };
  const node = await createMemberNode(config, { storage, metadata: store.catalogue, eventLog: store.eventLog }, { logger: silentLogger });
  running = await serveNode(node, { port: 0, hostname: '127.0.0.1', tls: { cert: server.pem, key: server.keyPem, ca: [rootCa.pem] } });
  base = `https://127.0.0.1:${running.port}/mn`;

  // The private object: rightsHolder is Jane's ORCID, readable by the lab group only.
  const created = await create({ cert: certs.jane }, 'private-1', { accessPolicy: { allow: [{ subject: [LAB], permission: ['read'] }] } });
  expect(created.status, created.body).toBe(200);
  const pub = await create({ token: tokens.bob }, 'public-1', { rightsHolder: BOB, accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] } });
  expect(pub.status, pub.body).toBe(200);
}, 60_000);

afterAll(async () => {
  await running?.close();
  await new Promise((r) => cnStub?.close(r));
  await rm(work, { recursive: true, force: true });
});

const proxied = (cert: Issued, localAddress?: string): Caller => ({ headers: { 'x-ssl-client-cert': encodeURIComponent(cert.pem) }, ...(localAddress ? { localAddress } : {}) });

describe('sessions', () => {
  it('a TLS client certificate gives its RFC 2253 subject (recorded as the submitter and in the log)', async () => {
    const meta = await send('GET', '/v2/meta/private-1', { cert: certs.jane });
    expect(meta.status, meta.body).toBe(200);
    expect(meta.body).toContain(`<submitter>${JANE}</submitter>`);
    const log = await send('GET', '/v2/log?idFilter=private-1', { cert: certs.admin });
    expect(log.status, log.body).toBe(200);
    const entries = LogCodec.decode(log.body).logEntry;
    expect(entries.find((e) => e.event === 'create')?.subject).toBe(JANE);
    expect(entries.find((e) => e.event === 'read' || e.subject === JANE)).toBeDefined();
  });

  it('a certificate from an untrusted CA, or expired, is InvalidToken, never public', async () => {
    for (const cert of [certs.rogue!, certs.expired!]) {
      for (const path of ['/v2/object/public-1', '/v2/object?count=1', '/v2/meta/private-1']) {
        const a = await send('GET', path, { cert });
        expect(a.status, `${path}: ${a.body}`).toBe(401);
        expect(exceptionOf(a)).toBe('InvalidToken');
      }
    }
    const detail = await send('GET', '/v2/object/public-1', { cert: certs.rogue! });
    expect(detail.body).toContain('detailCode="1010"'); // MNRead.get's InvalidToken
  });

  it('a proxy-forwarded certificate counts only from a trusted proxy address', async () => {
    const trusted = await send('GET', '/v2/meta/private-1', proxied(certs.admin!));
    expect(trusted.status, trusted.body).toBe(200);
    // the same header from 127.0.0.2 (not a trusted proxy) is ignored: the caller is public
    const forged = await send('GET', '/v2/meta/private-1', proxied(certs.admin!, '127.0.0.2'));
    expect(forged.status).toBe(401);
    expect(exceptionOf(forged)).toBe('NotAuthorized');
    const forgedList = ObjectListCodec.decode((await send('GET', '/v2/object', proxied(certs.admin!, '127.0.0.2'))).body);
    expect(forgedList.objectInfo.map((o) => o.identifier)).toEqual(['public-1']);
    // a forwarded certificate that does not verify is InvalidToken
    for (const cert of [certs.rogue!, certs.expired!]) {
      const bad = await send('GET', '/v2/object/public-1', proxied(cert));
      expect(bad.status).toBe(401);
      expect(exceptionOf(bad)).toBe('InvalidToken');
    }
    const garbage = await send('GET', '/v2/object/public-1', { headers: { 'x-ssl-client-cert': 'not a certificate' } });
    expect(exceptionOf(garbage)).toBe('InvalidToken');
  });

  it('the logged address is the client a trusted proxy names in X-Forwarded-For, never one an untrusted peer claims', async () => {
    const viaProxy = await send('GET', '/v2/object/public-1', { token: tokens.bob!, headers: { 'x-forwarded-for': '203.0.113.7, 127.0.0.1' } });
    expect(viaProxy.status, viaProxy.body).toBe(200);
    const forged = await send('GET', '/v2/object/public-1', { token: tokens.bob!, headers: { 'x-forwarded-for': '198.51.100.9' }, localAddress: '127.0.0.2' });
    expect(forged.status, forged.body).toBe(200);
    const log = await send('GET', '/v2/log?idFilter=public-1&event=read', { token: tokens.admin! });
    const addresses = LogCodec.decode(log.body).logEntry.map((e) => e.ipAddress);
    expect(addresses).toContain('203.0.113.7');
    expect(addresses).toContain('127.0.0.2');
    expect(addresses).not.toContain('198.51.100.9');
  });

  it('bearer JWTs: valid ones authenticate; expired, wrong signature, wrong issuer, alg none, HS256 with the public key and no expiry are InvalidToken', async () => {
    expect((await send('GET', '/v2/meta/private-1', { token: tokens.admin })).status).toBe(200);
    expect((await send('GET', '/v2/object?count=0', { token: tokens.d1Style })).status).toBe(200);
    for (const name of ['expired', 'wrongSignature', 'wrongIssuer', 'algNone', 'confusion', 'noExpiry', 'd1StyleExpired']) {
      const a = await send('GET', '/v2/object/public-1', { token: tokens[name] });
      expect(a.status, `${name}: ${a.body}`).toBe(401);
      expect(exceptionOf(a), name).toBe('InvalidToken');
    }
    const malformed = await send('GET', '/v2/object/public-1', { headers: { Authorization: 'Basic abc' } });
    expect(exceptionOf(malformed)).toBe('InvalidToken');
  });

  it('conflicting credentials: any invalid one fails; with several valid ones the certificate decides', async () => {
    const a = await send('GET', '/v2/meta/private-1', { cert: certs.other, token: tokens.admin });
    expect(exceptionOf(a)).toBe('NotAuthorized');
    const b = await send('GET', '/v2/meta/private-1', { cert: certs.admin, token: tokens.expired });
    expect(exceptionOf(b)).toBe('InvalidToken');
    const c = await send('GET', '/v2/meta/private-1', { cert: certs.admin, token: tokens.other });
    expect(c.status).toBe(200);
  });
});

describe('authorization of a private object', () => {
  const read = ['/v2/object/private-1', '/v2/meta/private-1', '/v2/checksum/private-1?checksumAlgorithm=MD5'];
  const callers: Record<string, () => Caller> = {
    owner: () => ({ cert: certs.jane }), // the rightsHolder through an equivalent identity in the certificate
    group: () => ({ token: tokens.bob }), // a lab member through the CN's SubjectInfo
    admin: () => proxied(certs.admin!),
    cn: () => ({ token: tokens.cn }), // a CN subject from the CN's node list
    other: () => ({ cert: certs.other }),
    otherJwt: () => ({ token: tokens.other }),
    janeNoExtension: () => ({ cert: certs.janePlain }), // Jane without the extension: neither the ORCID nor the group
    public: () => ({}),
  };
  const expected: Record<string, { read: boolean; write: boolean; changePermission: boolean }> = {
    owner: { read: true, write: true, changePermission: true },
    group: { read: true, write: false, changePermission: false },
    admin: { read: true, write: true, changePermission: true },
    cn: { read: true, write: true, changePermission: true },
    other: { read: false, write: false, changePermission: false },
    otherJwt: { read: false, write: false, changePermission: false },
    janeNoExtension: { read: false, write: false, changePermission: false },
    public: { read: false, write: false, changePermission: false },
  };

  for (const [who, caller] of Object.entries(callers)) {
    it(`${who}: describe/get/getSystemMetadata/getChecksum and isAuthorized`, async () => {
      const want = expected[who]!;
      for (const path of read) {
        const a = await send('GET', path, caller());
        expect(a.status, `${who} ${path}: ${a.body}`).toBe(want.read ? 200 : 401);
        if (!want.read) expect(exceptionOf(a)).toBe('NotAuthorized');
      }
      const head = await send('HEAD', '/v2/object/private-1', caller());
      expect(head.status).toBe(want.read ? 200 : 401);
      for (const action of ['read', 'write', 'changePermission'] as const) {
        const a = await send('GET', `/v2/isAuthorized/private-1?action=${action}`, caller());
        expect(a.status, `${who} isAuthorized ${action}`).toBe(want[action] ? 200 : 401);
        if (!want[action]) expect(exceptionOf(a)).toBe('NotAuthorized');
      }
    });
  }

  it('listObjects shows each caller only what it may read; administrators and CNs see everything', async () => {
    const ids = async (c: Caller) => {
      const a = await send('GET', '/v2/object?count=100', c);
      expect(a.status, a.body).toBe(200);
      return ObjectListCodec.decode(a.body).objectInfo.map((o) => o.identifier).sort();
    };
    expect(await ids(callers.public!())).toEqual(['public-1']);
    expect(await ids(callers.other!())).toEqual(['public-1']);
    expect(await ids(callers.group!())).toEqual(['private-1', 'public-1']);
    expect(await ids(callers.owner!())).toEqual(['private-1', 'public-1']);
    expect(await ids(callers.admin!())).toEqual(['private-1', 'public-1']);
    expect(await ids(callers.cn!())).toEqual(['private-1', 'public-1']);
    const total = await send('GET', '/v2/object?count=0', callers.other!());
    expect(ObjectListCodec.decode(total.body).total).toBe(1);
  });

  it("getLogRecords shows only entries of objects the caller may read, with the acting subject", async () => {
    const pids = async (c: Caller) => {
      const a = await send('GET', '/v2/log?count=1000', c);
      expect(a.status, a.body).toBe(200);
      return new Set(LogCodec.decode(a.body).logEntry.map((e) => e.identifier));
    };
    expect([...(await pids(callers.public!()))]).toEqual(['public-1']);
    expect([...(await pids(callers.other!()))]).toEqual(['public-1']);
    expect(await pids(callers.group!())).toEqual(new Set(['private-1', 'public-1']));
    expect(await pids(callers.cn!())).toEqual(new Set(['private-1', 'public-1']));
    const log = LogCodec.decode((await send('GET', '/v2/log?count=1000&idFilter=public-1', callers.admin!())).body);
    expect(log.logEntry.find((e) => e.event === 'create')?.subject).toBe(BOB);
  });

  it('update needs write on the old object; updateSystemMetadata needs changePermission; archive needs write', async () => {
    const bytes = Buffer.from('new version\n');
    const update = async (c: Caller, newPid: string) =>
      send('PUT', '/v2/object/private-1', c, await multipart({ newPid, object: bytes, sysmeta: Buffer.from(sysmeta(newPid, bytes, { obsoletes: 'private-1', accessPolicy: { allow: [{ subject: [LAB], permission: ['read'] }] } })) }));
    for (const who of ['group', 'other', 'public'] as const) {
      const a = await update(callers[who]!(), `private-2-${who}`);
      expect(a.status, `${who}: ${a.body}`).toBe(401);
      expect(exceptionOf(a)).toBe('NotAuthorized');
    }
    // updateSystemMetadata (changePermission): the group member may not; the owner may
    const current = SystemMetadataCodec.decode((await send('GET', '/v2/meta/private-1', callers.owner!())).body);
    const changed = { ...current, accessPolicy: { allow: [{ subject: [LAB], permission: ['read' as const] }, { subject: [OTHER], permission: ['read' as const] }] } };
    const upd = async (c: Caller) => send('PUT', '/v2/meta', c, await multipart({ pid: 'private-1', sysmeta: Buffer.from(SystemMetadataCodec.encode(changed, 'v2')) }));
    expect(exceptionOf(await upd(callers.group!()))).toBe('NotAuthorized');
    const ok = await upd(callers.owner!());
    expect(ok.status, ok.body).toBe(200);
    expect((await send('GET', '/v2/meta/private-1', callers.other!())).status).toBe(200);
    // the owner (through its equivalent identity) may update
    const mine = await update(callers.owner!(), 'private-2');
    expect(mine.status, mine.body).toBe(200);
    // archive needs write: other may read private-1 now, but not archive it
    expect(exceptionOf(await send('PUT', '/v2/archive/private-2', callers.group!()))).toBe('NotAuthorized');
    expect((await send('PUT', '/v2/archive/private-2', callers.owner!())).status).toBe(200);
  });

  it('delete is for administrators and CNs; CN-only operations refuse others', async () => {
    expect((await create(callers.owner!(), 'to-delete-1')).status).toBe(200);
    expect((await create(callers.owner!(), 'to-delete-2')).status).toBe(200);
    for (const who of ['owner', 'group', 'other', 'public'] as const) {
      const a = await send('DELETE', '/v2/object/to-delete-1', callers[who]!());
      expect(a.status, who).toBe(401);
      expect(exceptionOf(a)).toBe('NotAuthorized');
    }
    expect((await send('DELETE', '/v2/object/to-delete-1', callers.admin!())).status).toBe(200);
    expect((await send('DELETE', '/v2/object/to-delete-2', callers.cn!())).status).toBe(200);
    for (const who of ['owner', 'group', 'public'] as const) {
      const form = await multipart({ pid: 'public-1', serialVersion: '1', dateSysMetadataLastModified: new Date().toISOString() });
      const a = await send('POST', '/v2/dirtySystemMetadata', callers[who]!(), form);
      expect(a.status, `${who}: ${a.body}`).toBe(401);
      expect(exceptionOf(a)).toBe('NotAuthorized');
      const f = await multipart({ message: '<error name="SynchronizationFailed" errorCode="500" detailCode="0" pid="public-1"><description>x</description></error>' });
      const b = await send('POST', '/v2/error', callers[who]!(), f);
      expect(b.status, `${who}: ${b.body}`).toBe(401);
    }
  });

  it('CN lookups are cached: getSubjectInfo and the node list are each asked once', () => {
    expect(cnHits[`/cn/v2/accounts/${BOB}`]).toBe(1);
    expect(cnHits['/cn/v2/node']).toBe(1);
    // Jane's certificate with the SubjectInfo extension needs no lookup; the one without asked once
    expect(cnHits[`/cn/v2/accounts/${JANE}`]).toBe(1);
  });
});
