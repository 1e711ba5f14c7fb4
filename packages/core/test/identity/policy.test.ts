// Create policy variants, JWT verification details and CN lookups, in process (app.request).
import 'reflect-metadata';
import { createHash } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Keyv } from 'keyv';
import { createFilesystemStorage } from '@memberkit/adapter-filesystem';
import { createSqlCatalogue } from '@memberkit/adapter-sql';
import { createMemberNode, DEFAULT_SCHEDULE, generateTokenKeyPair, JwtError, JwtVerifier, mintToken, silentLogger, SubjectInfoLookup, type CoreConfig, type MemberNode } from '@memberkit/core';
import { SubjectInfoCodec, SystemMetadataCodec } from '@memberkit/types';

const LAB = 'CN=lab-group,DC=dataone,DC=org';
let work: string;
let stub: Server;
let cn: string;
let hits = 0;
const keys = generateTokenKeyPair();
const token = (subject: string) => mintToken(keys.privateKeyPem, { subject });

beforeAll(async () => {
  work = await mkdtemp(join(tmpdir(), 'memberkit-policy-'));
  stub = createServer((req, res) => {
    hits++;
    const subject = decodeURIComponent((req.url ?? '').replace('/cn/v2/accounts/', ''));
    if (subject === 'CN=member') {
      res.setHeader('Content-Type', 'text/xml');
      res.end(SubjectInfoCodec.encode({ person: [{ subject, givenName: ['M'], familyName: 'M', email: [], isMemberOf: [LAB], equivalentIdentity: [] }], group: [] }, 'v1'));
    } else if (subject === 'CN=broken') {
      res.statusCode = 500;
      res.end('boom');
    } else {
      res.statusCode = 404;
      res.end();
    }
  });
  await new Promise<void>((r) => stub.listen(0, '127.0.0.1', r));
  cn = `http://127.0.0.1:${(stub.address() as AddressInfo).port}/cn`;
});
afterAll(async () => {
  await new Promise((r) => stub.close(r));
  await rm(work, { recursive: true, force: true });
});

async function nodeWith(createPolicy: CoreConfig['access']['createPolicy'], name: string): Promise<MemberNode> {
  const store = createSqlCatalogue({ dialect: 'sqlite', connection: join(work, `${name}.sqlite`) });
  const config: CoreConfig = {
    node: { identifier: 'urn:node:P', name: 'p', description: 'p', baseURL: 'http://127.0.0.1/mn', subject: 'CN=urn:node:P,DC=dataone,DC=org', contactSubject: ['CN=admin'], replicate: false, synchronize: true, schedule: DEFAULT_SCHEDULE },
    access: { administrators: ['CN=admin'], cnSubjects: [], createPolicy },
    auth: { jwt: { keys: [keys.publicKeyPem] }, identity: { cnBaseUrl: cn, cnSubjectsFromNodeList: false } },
    basePath: '/mn',
  };
  return createMemberNode(config, { storage: createFilesystemStorage({ root: join(work, name) }), metadata: store.catalogue, eventLog: store.eventLog }, { logger: silentLogger });
}

async function create(node: MemberNode, pid: string, subject?: string): Promise<number> {
  const bytes = Buffer.from(pid);
  const sm = SystemMetadataCodec.encode({ identifier: pid, formatId: 'application/octet-stream', size: bytes.length, checksum: { algorithm: 'SHA-1', value: createHash('sha1').update(bytes).digest('hex') }, rightsHolder: 'CN=x', replica: [] } as never, 'v2');
  const form = new FormData();
  form.append('pid', pid);
  form.append('object', new Blob([bytes]), 'object');
  form.append('sysmeta', new Blob([sm]), 'sysmeta.xml');
  const res = await node.app.request('/mn/v2/object', { method: 'POST', body: form, headers: subject ? { Authorization: `Bearer ${await token(subject)}` } : {} });
  return res.status;
}

describe('create policy', () => {
  it("'authenticated': any authenticated caller, never public", async () => {
    const node = await nodeWith('authenticated', 'auth');
    expect(await create(node, 'a1', 'CN=anyone')).toBe(200);
    expect(await create(node, 'a2')).toBe(401);
    await node.close();
  });
  it('listed subjects and groups (groups from the CN), administrators always', async () => {
    const node = await nodeWith(['CN=listed', LAB], 'list');
    expect(await create(node, 'l1', 'CN=listed')).toBe(200);
    expect(await create(node, 'l2', 'CN=member')).toBe(200);
    expect(await create(node, 'l3', 'CN=admin')).toBe(200);
    expect(await create(node, 'l4', 'CN=stranger')).toBe(401);
    expect(await create(node, 'l5', 'CN=broken')).toBe(401); // CN failure: no groups, not an error
    expect(await create(node, 'l6')).toBe(401);
    await node.close();
  });
});

describe('JwtVerifier', () => {
  it('refuses symmetric algorithms in its whitelist', () => {
    expect(() => new JwtVerifier({ keys: [keys.publicKeyPem], algorithms: ['HS256'] })).toThrow(/symmetric/);
  });
  it('accepts a PEM certificate, SPKI PEM or JWK as key; falls back to userId', async () => {
    const { createPublicKey } = await import('node:crypto');
    const jwk = JSON.stringify(createPublicKey(keys.publicKeyPem).export({ format: 'jwk' }));
    const v = new JwtVerifier({ keys: [generateTokenKeyPair().publicKeyPem, jwk] });
    const t = await mintToken(keys.privateKeyPem, { subject: 'CN=a' });
    expect((await v.verify(t)).subject).toBe('CN=a');
    await expect(new JwtVerifier({ keys: [] }).verify(t)).rejects.toBeInstanceOf(JwtError);
  });
  it('remembers a verified token only while it is acceptable', async () => {
    const v = new JwtVerifier({ keys: [keys.publicKeyPem], clockToleranceSeconds: 0 });
    const issued = new Date(Date.now() - 5_000);
    const t = await mintToken(keys.privateKeyPem, { subject: 'CN=a', ttlSeconds: 60, now: issued });
    const first = await v.verify(t);
    expect(await v.verify(t)).toBe(first); // the remembered result, not a second signature check
    await expect(v.verify(t, new Date(issued.getTime() + 61_000))).rejects.toThrow(/expired/);
    expect((await v.verify(t)).subject).toBe('CN=a');
    const forged = t.slice(0, -4) + (t.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    await expect(v.verify(forged)).rejects.toBeInstanceOf(JwtError);
    await expect(v.verify(forged)).rejects.toBeInstanceOf(JwtError);
  });
  it('honours clock tolerance', async () => {
    const t = await mintToken(keys.privateKeyPem, { subject: 'CN=a', ttlSeconds: 10, now: new Date(Date.now() - 30_000) });
    await expect(new JwtVerifier({ keys: [keys.publicKeyPem], clockToleranceSeconds: 0 }).verify(t)).rejects.toThrow(/expired/);
    expect((await new JwtVerifier({ keys: [keys.publicKeyPem], clockToleranceSeconds: 60 }).verify(t)).subject).toBe('CN=a');
  });
});

describe('SubjectInfoLookup', () => {
  it('caches answers and misses; a CN failure degrades to nothing', async () => {
    const lookup = new SubjectInfoLookup({ cnBaseUrl: cn, ttlMs: 60_000, timeoutMs: 2000, cache: new Keyv(), logger: silentLogger });
    const before = hits;
    expect((await lookup.lookup('CN=member'))?.person[0]?.isMemberOf).toEqual([LAB]);
    await lookup.lookup('CN=member');
    expect(await lookup.lookup('CN=nobody')).toBeUndefined();
    await lookup.lookup('CN=nobody');
    expect(await lookup.lookup('CN=broken')).toBeUndefined();
    await lookup.lookup('CN=broken');
    expect(hits - before).toBe(3);
    const dead = new SubjectInfoLookup({ cnBaseUrl: 'http://127.0.0.1:9/cn', ttlMs: 60_000, timeoutMs: 500, cache: new Keyv(), logger: silentLogger });
    expect(await dead.lookup('CN=member')).toBeUndefined();
  });
});
