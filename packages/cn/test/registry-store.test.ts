// The node registry's store (NodeRegistry over mk_cn_nodes) and CNRegister's rules on real
// databases: SQLite, PostgreSQL and MariaDB, a fresh database each, concurrent registrations
// decided by the database's UNIQUE constraints. The wire is in registry.test.ts.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authenticatedSession, DEFAULT_SCHEDULE, publicSession, silentLogger, type Session } from '@memberkit/core';
import { DataONEException, type Node } from '@memberkit/types';
import type { SqlDialectName } from '@memberkit/adapter-sql';
import { migrateCnAreas } from '../src/store/cn-migrations.js';
import { registrySchema } from '../src/registry/schema.js';
import { NodeRegistry } from '../src/registry/node-registry.js';
import { CnRegisterService } from '../src/registry/register-service.js';
import { identityFixture, type IdentityFixture } from './identity-fixtures.js';

const SELF: Node = {
  replicate: false, synchronize: false, type: 'cn', state: 'up', identifier: 'urn:node:CNTEST', name: 'CN', description: 'the CN',
  baseURL: 'https://cn.example.org/cn', subject: ['CN=urn:node:CNTEST,DC=dataone,DC=org'], contactSubject: ['CN=op'], property: [],
};
const ADMIN = 'CN=admin,DC=test';

function node(id: string, baseURL: string, over: Partial<Node> = {}): Node {
  return {
    replicate: false, synchronize: true, type: 'mn', state: 'up', identifier: id, name: id, description: 'd', baseURL,
    synchronization: { schedule: DEFAULT_SCHEDULE }, services: { service: [{ name: 'MNCore', version: 'v2', available: true, restriction: [] }] },
    subject: [`CN=${id},DC=dataone,DC=org`], contactSubject: ['CN=Jane Doe,O=Example,C=US'], property: [], ...over,
  };
}

async function refused(p: Promise<unknown>): Promise<DataONEException> {
  try {
    await p;
  } catch (err) {
    if (err instanceof DataONEException) return err;
    throw err;
  }
  throw new Error('expected a DataONE exception');
}

describe.each<SqlDialectName>(['sqlite', 'postgres', 'mysql'])('node registry on %s', (dialect) => {
  let f: IdentityFixture;
  let registry: NodeRegistry;
  let service: CnRegisterService;
  let now = 1_700_000_000_000;

  beforeAll(async () => {
    f = await identityFixture(dialect);
    await migrateCnAreas(f.store, [registrySchema]);
    // A second run of the migrations changes nothing.
    await migrateCnAreas(f.store, [registrySchema]);
    registry = new NodeRegistry(f.store, () => now);
    // The contact's account, verified, stored under its normalised subject.
    await f.identities.insertAccount({ subject: 'CN=Jane Doe,O=Example,C=US', givenName: ['Jane'], familyName: 'Doe', email: ['jane@example.org'], verified: true, created: now, updated: now });
    service = new CnRegisterService({
      registry,
      selfNode: () => SELF,
      subjects: f.directory,
      isAdministrator: (s: Session) => s.subjects.has(ADMIN),
      registration: { autoApprove: false, allowLoopback: false },
      logger: silentLogger,
    });
  });
  afterAll(async () => {
    await f?.close();
  });
  beforeEach(async () => {
    await f.store.write('clear nodes', (trx) => trx.deleteFrom('mk_cn_nodes').execute());
  });

  it('insert, get, list (approved only unless asked), approve', async () => {
    const a = node('urn:node:A1', 'https://a.example.org/mn');
    expect(await registry.insert({ node: a, registeredBy: 'CN=someone', approved: false })).toBeUndefined();
    now += 1000;
    expect(await registry.insert({ node: node('urn:node:B1', 'https://b.example.org/mn'), registeredBy: 'CN=other', approved: true })).toBeUndefined();
    const got = await registry.get('urn:node:A1');
    expect(got).toMatchObject({ approved: false, registeredBy: 'CN=someone', node: { identifier: 'urn:node:A1', baseURL: a.baseURL, type: 'mn' } });
    expect(got?.approvedAt).toBeUndefined();
    expect((await registry.list()).map((e) => e.node.identifier)).toEqual(['urn:node:B1']);
    expect((await registry.list({ includeUnapproved: true })).map((e) => e.node.identifier)).toEqual(['urn:node:A1', 'urn:node:B1']);
    expect(await registry.approve('urn:node:A1')).toBe('approved');
    expect(await registry.approve('urn:node:A1')).toBe('already');
    expect(await registry.approve('urn:node:NONE')).toBe('missing');
    expect((await registry.get('urn:node:A1'))?.approvedAt).toBeInstanceOf(Date);
    expect(await registry.get('urn:node:NONE')).toBeUndefined();
  });

  it('identifier and normalised baseURL are unique; the conflict names its holder', async () => {
    await registry.insert({ node: node('urn:node:A1', 'https://a.example.org/mn'), registeredBy: 'x', approved: false });
    expect(await registry.insert({ node: node('urn:node:A1', 'https://other.example.org/mn'), registeredBy: 'x', approved: false })).toEqual({ field: 'identifier', holder: 'urn:node:A1' });
    expect(await registry.insert({ node: node('urn:node:A2', 'HTTPS://A.Example.org:443/mn/'), registeredBy: 'x', approved: false })).toEqual({ field: 'baseURL', holder: 'urn:node:A1' });
    // A path differing in case is another service.
    expect(await registry.insert({ node: node('urn:node:A3', 'https://a.example.org/MN'), registeredBy: 'x', approved: false })).toBeUndefined();
  });

  it('concurrent registrations: exactly one per identifier and one per baseURL', async () => {
    const sameId = await Promise.all(Array.from({ length: 16 }, (_, i) => registry.insert({ node: node('urn:node:RACE', `https://race${i}.example.org/mn`), registeredBy: 'x', approved: false })));
    expect(sameId.filter((c) => c === undefined)).toHaveLength(1);
    expect(sameId.filter((c) => c?.field === 'identifier')).toHaveLength(15);
    const sameUrl = await Promise.all(Array.from({ length: 16 }, (_, i) => registry.insert({ node: node(`urn:node:URL${i}`, 'https://shared.example.org/mn'), registeredBy: 'x', approved: false })));
    expect(sameUrl.filter((c) => c === undefined)).toHaveLength(1);
    expect(sameUrl.filter((c) => c?.field === 'baseURL')).toHaveLength(15);
  });

  it('replace: the document and its baseURL, refused onto another node\'s baseURL, missing for an unknown node', async () => {
    await registry.insert({ node: node('urn:node:A1', 'https://a.example.org/mn'), registeredBy: 'x', approved: true });
    await registry.insert({ node: node('urn:node:B1', 'https://b.example.org/mn'), registeredBy: 'x', approved: true });
    expect(await registry.replace('urn:node:A1', node('urn:node:A1', 'https://a2.example.org/mn', { name: 'moved' }))).toBe('replaced');
    expect((await registry.get('urn:node:A1'))).toMatchObject({ approved: true, node: { name: 'moved', baseURL: 'https://a2.example.org/mn' } });
    expect(await registry.replace('urn:node:A1', node('urn:node:A1', 'https://b.example.org/mn/'))).toEqual({ field: 'baseURL', holder: 'urn:node:B1' });
    expect(await registry.replace('urn:node:NONE', node('urn:node:NONE', 'https://n.example.org/mn'))).toBe('missing');
    // The freed baseURL can be registered again.
    expect(await registry.insert({ node: node('urn:node:C1', 'https://a.example.org/mn'), registeredBy: 'x', approved: false })).toBeUndefined();
  });

  it('documents round-trip with text the XML and SQL must keep as is', async () => {
    const tricky = node('urn:node:TRICKY', "https://tricky.example.org/mn/o'brien", {
      name: "O'Brien & Sons <archive> \u00e9\u0301 \ud83d\udcda", description: "a ' \" \\ ; DROP TABLE mk_cn_nodes; --",
      property: [{ key: 'k', value: 'v\u00a0w' }],
    });
    expect(await registry.insert({ node: tricky, registeredBy: "CN=O'Brien,O=\u00c9cole", approved: false })).toBeUndefined();
    const got = await registry.get('urn:node:TRICKY');
    expect(got?.node).toMatchObject({ name: tricky.name, description: tricky.description, baseURL: tricky.baseURL, property: tricky.property });
    expect(got?.registeredBy).toBe("CN=O'Brien,O=\u00c9cole");
  });

  it('register: contact subjects compared in normalised form; an unverified or unknown contact is refused', async () => {
    const session = authenticatedSession('CN=urn:node:N1,DC=dataone,DC=org');
    // The account was stored as "CN=Jane Doe,O=Example,C=US"; the document spells it with spaces.
    const spaced = node('urn:node:N1', 'https://n1.example.org/mn', { contactSubject: ['CN=Jane Doe, O=Example, C=US'] });
    expect(await service.register(session, spaced)).toBe('urn:node:N1');
    expect((await registry.get('urn:node:N1'))?.approved).toBe(false);
    await f.identities.insertAccount({ subject: 'CN=Pending,O=Example,C=US', givenName: ['P'], familyName: 'P', email: [], verified: false, created: now, updated: now });
    const e1 = await refused(service.register(session, node('urn:node:N2', 'https://n2.example.org/mn', { contactSubject: ['CN=Pending,O=Example,C=US'] })));
    expect(e1).toMatchObject({ name: 'InvalidRequest', detailCode: '4843' });
    expect(e1.description).toMatch(/not verified yet/);
    const e2 = await refused(service.register(session, node('urn:node:N3', 'https://n3.example.org/mn', { contactSubject: ['CN=Nobody,O=Example,C=US'] })));
    expect(e2.description).toMatch(/has no account/);
    const e3 = await refused(service.register(publicSession(), node('urn:node:N4', 'https://n4.example.org/mn')));
    expect(e3).toMatchObject({ name: 'NotAuthorized', detailCode: '4841' });
  });

  it('cn.registration.autoApprove: a new node is listed at once', async () => {
    const auto = new CnRegisterService({
      registry, selfNode: () => SELF, subjects: f.directory, isAdministrator: () => false,
      registration: { autoApprove: true, allowLoopback: true }, logger: silentLogger,
    });
    await auto.register(authenticatedSession('CN=x'), node('urn:node:AUTO', 'http://127.0.0.1:9999/mn'));
    expect((await registry.get('urn:node:AUTO'))?.approved).toBe(true);
    expect((await auto.listNodes()).node.map((n) => n.identifier)).toEqual(['urn:node:CNTEST', 'urn:node:AUTO']);
  });

  it('register drops the CN-owned fields a document carries and an empty services list; listNodes puts the CN first', async () => {
    const session = authenticatedSession('CN=urn:node:N5,DC=dataone,DC=org');
    const claimed = node('urn:node:N5', 'https://n5.example.org/mn', {
      services: { service: [] },
      ping: { success: true, lastSuccess: new Date('2020-01-01T00:00:00Z') },
      synchronization: { schedule: DEFAULT_SCHEDULE, lastHarvested: new Date('2020-01-01T00:00:00Z'), lastCompleteHarvest: new Date('2020-01-01T00:00:00Z') },
    });
    await service.register(session, claimed);
    const stored = (await registry.get('urn:node:N5'))!.node;
    expect(stored.ping).toBeUndefined();
    expect(stored.services).toBeUndefined();
    expect(stored.synchronization).toEqual({ schedule: DEFAULT_SCHEDULE });
    expect((await service.listNodes()).node.map((n) => n.identifier)).toEqual(['urn:node:CNTEST']);
    await registry.approve('urn:node:N5');
    expect((await service.listNodes()).node.map((n) => n.identifier)).toEqual(['urn:node:CNTEST', 'urn:node:N5']);
  });
});
