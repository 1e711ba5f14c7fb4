// CNIdentity's store and service on real databases (SQLite file, PostgreSQL schema, MariaDB
// database), no HTTP: every operation's rules and documented exceptions, and the one
// expansion function (SubjectDirectory.expand) that every CN authorization decision uses.
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { authenticatedSession, publicSession, type Session } from '@memberkit/core';
import { DataONEException, type ExceptionName, type Person } from '@memberkit/types';
import type { SqlDialectName } from '@memberkit/adapter-sql';
import { clearIdentityTables, identityFixture, type IdentityFixture } from './identity-fixtures.js';
import type { IdentityService } from '../src/identity/identity-service.js';

const ADMIN = 'CN=cn admin,DC=dataone,DC=org';
const VERIFIER = 'CN=verifier,DC=dataone,DC=org';
const MAPPER = 'CN=mapper,DC=dataone,DC=org';
const ALICE = 'CN=Alice Smith A1,O=Example,C=US,DC=cilogon,DC=org';
const ALICE_SPACED = 'CN=Alice Smith A1, O=Example, C=US, DC=cilogon, DC=org';
const ALICE_ORCID = 'https://orcid.org/0000-0002-1825-0097';
const BOB = 'CN=Bob Jones B2,O=Example,C=US,DC=cilogon,DC=org';
const BOB_SPACED = 'CN=Bob Jones B2, O=Example, C=US, DC=cilogon, DC=org';
const CAROL = 'https://orcid.org/0000-0001-5109-3700';
const MALLORY = 'CN=Mallory,O=Elsewhere,DC=org';
const GROUP = 'CN=ocean-team,DC=dataone,DC=org';

const session = (subject: string): Session => authenticatedSession(subject);
const person = (subject: string, given: string, family: string, email: string[] = []): Person => ({ subject, givenName: [given], familyName: family, email, isMemberOf: [], equivalentIdentity: [] });

async function failure(p: Promise<unknown>): Promise<DataONEException> {
  try {
    await p;
  } catch (e) {
    if (DataONEException.is(e)) return e;
    throw e;
  }
  throw new Error('expected a DataONE exception, the call succeeded');
}

async function expectFailure(p: Promise<unknown>, name: ExceptionName, detailCode: string, message?: RegExp): Promise<void> {
  const e = await failure(p);
  expect(`${e.exceptionName} ${e.detailCode}`, e.description).toBe(`${name} ${detailCode}`);
  if (message) expect(e.description).toMatch(message);
}

const DIALECTS: SqlDialectName[] = ['sqlite', 'postgres', 'mysql'];

describe.each(DIALECTS)('CNIdentity store and service on %s', (dialect) => {
  let fx: IdentityFixture;
  let svc: IdentityService;

  beforeAll(async () => {
    fx = await identityFixture(dialect);
    svc = fx.service({ administrators: [ADMIN], verifiers: [VERIFIER], mappers: [MAPPER] });
  });
  afterAll(async () => fx?.close());
  beforeEach(async () => clearIdentityTables(fx.store));

  const register = (subject: string, given: string, family: string, email: string[] = []) => svc.registerAccount(session(subject), person(subject, given, family, email));

  describe('registerAccount', () => {
    it('registers an unverified account under the normalised subject', async () => {
      expect(await svc.registerAccount(session(ALICE_SPACED), person(ALICE_SPACED, 'Alice', 'Smith', ['alice@example.org']))).toBe(ALICE);
      const info = await svc.getSubjectInfo(session(ALICE), ALICE_SPACED);
      expect(info.person).toEqual([{ subject: ALICE, givenName: ['Alice'], familyName: 'Smith', email: ['alice@example.org'], isMemberOf: [], equivalentIdentity: [], verified: false }]);
      expect(info.group).toEqual([]);
    });

    it('accepts an ORCID given as http and stores it as https', async () => {
      expect(await svc.registerAccount(session('http://orcid.org/0000-0002-1825-0097'), person('http://orcid.org/0000-0002-1825-0097', 'Alice', 'Smith'))).toBe(ALICE_ORCID);
      expect((await svc.getSubjectInfo(publicSession(), ALICE_ORCID)).person[0]!.subject).toBe(ALICE_ORCID);
    });

    it('refuses anonymous callers and callers registering someone else (NotAuthorized 4525); administrators may', async () => {
      await expectFailure(svc.registerAccount(publicSession(), person(ALICE, 'Alice', 'Smith')), 'NotAuthorized', '4525', /authenticated caller/);
      await expectFailure(svc.registerAccount(session(MALLORY), person(ALICE, 'Alice', 'Smith')), 'NotAuthorized', '4525', /only for your own subject/);
      expect(await svc.registerAccount(session(ADMIN), person(ALICE, 'Alice', 'Smith'))).toBe(ALICE);
    });

    it('refuses a second account for one subject, however spelled (IdentifierNotUnique 4521)', async () => {
      await register(ALICE, 'Alice', 'Smith');
      await expectFailure(svc.registerAccount(session(ALICE_SPACED), person(ALICE_SPACED, 'A', 'S')), 'IdentifierNotUnique', '4521', /already registered/);
    });

    it('races: of concurrent registrations of one subject exactly one succeeds', async () => {
      const results = await Promise.allSettled(Array.from({ length: 8 }, () => register(BOB, 'Bob', 'Jones')));
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      for (const r of results) if (r.status === 'rejected') expect((r.reason as DataONEException).exceptionName).toBe('IdentifierNotUnique');
    });

    it('refuses subjects that are neither DN nor ORCID, bad ORCIDs and bad e-mail addresses (InvalidRequest 4524)', async () => {
      await expectFailure(svc.registerAccount(session('alice'), person('alice', 'Alice', 'Smith')), 'InvalidRequest', '4524', /neither a distinguished name/);
      const badOrcid = 'https://orcid.org/0000-0002-1825-0098';
      await expectFailure(svc.registerAccount(session(badOrcid), person(badOrcid, 'Alice', 'Smith')), 'InvalidRequest', '4524', /check character/);
      await expectFailure(svc.registerAccount(session(ALICE), person(ALICE, 'Alice', 'Smith', ['not-an-address'])), 'InvalidRequest', '4524', /not an e-mail address/);
      await expectFailure(svc.registerAccount(session(ALICE), person(ALICE, ' ', 'Smith')), 'InvalidRequest', '4524', /givenName/);
    });
  });

  describe('updateAccount and verifyAccount', () => {
    it('updates names and e-mail; a change makes the account unverified again, no change keeps it', async () => {
      await register(ALICE, 'Alice', 'Smith', ['a@example.org']);
      await svc.verifyAccount(session(ADMIN), ALICE);
      expect((await svc.getSubjectInfo(session(ALICE), ALICE)).person[0]!.verified).toBe(true);
      expect(await svc.updateAccount(session(ALICE), ALICE_SPACED, person(ALICE, 'Alice', 'Smith', ['a@example.org']))).toBe(ALICE);
      expect((await svc.getSubjectInfo(session(ALICE), ALICE)).person[0]!.verified).toBe(true);
      await svc.updateAccount(session(ALICE), ALICE, person(ALICE, 'Alicia', 'Smith', ['alicia@example.org']));
      const p = (await svc.getSubjectInfo(session(ALICE), ALICE)).person[0]!;
      expect(p).toMatchObject({ givenName: ['Alicia'], email: ['alicia@example.org'], verified: false });
    });

    it('updateAccount: only the subject (or an equivalent) and administrators (NotAuthorized 4534); NotFound 4535; InvalidRequest 4533', async () => {
      await register(ALICE, 'Alice', 'Smith');
      await register(ALICE_ORCID, 'Alice', 'Smith');
      await expectFailure(svc.updateAccount(session(MALLORY), ALICE, person(ALICE, 'M', 'M')), 'NotAuthorized', '4534');
      await expectFailure(svc.updateAccount(publicSession(), ALICE, person(ALICE, 'M', 'M')), 'NotAuthorized', '4534');
      await expectFailure(svc.updateAccount(session(ALICE), ALICE, person(BOB, 'B', 'J')), 'InvalidRequest', '4533', /differs from the subject of the path/);
      await expectFailure(svc.updateAccount(session(BOB), BOB, person(BOB, 'B', 'J')), 'NotFound', '4535');
      await svc.mapIdentity(session(ADMIN), ALICE, ALICE_ORCID);
      await svc.updateAccount(session(ALICE_ORCID), ALICE, person(ALICE, 'Alice', 'Smith-Jones'));
      await svc.updateAccount(session(ADMIN), ALICE, person(ALICE, 'Alice', 'Smith'));
    });

    it('verifyAccount: administrators and cn.identity.verifiers only (NotAuthorized 4541); unknown subject NotFound', async () => {
      await register(ALICE, 'Alice', 'Smith');
      await expectFailure(svc.verifyAccount(session(ALICE), ALICE), 'NotAuthorized', '4541', /cn\.identity\.verifiers/);
      await expectFailure(svc.verifyAccount(publicSession(), ALICE), 'NotAuthorized', '4541');
      await svc.verifyAccount(session(VERIFIER), ALICE_SPACED);
      expect((await svc.getSubjectInfo(session(ALICE), ALICE)).person[0]!.verified).toBe(true);
      await expectFailure(svc.verifyAccount(session(ADMIN), BOB), 'NotFound', '0', /must be registered/);
    });
  });

  describe('getSubjectInfo and listSubjects', () => {
    beforeEach(async () => {
      await register(ALICE, 'Alice', 'Smith', ['alice@example.org']);
      await register(BOB, 'Bob', 'Jones', ['bob@example.org']);
      await register(CAROL, 'Carol', 'Nguyen', ['carol@example.org']);
    });

    it('hides e-mail addresses from everyone but the person, its equivalent identities and administrators', async () => {
      expect((await svc.getSubjectInfo(publicSession(), ALICE)).person[0]!.email).toEqual([]);
      expect((await svc.getSubjectInfo(session(BOB), ALICE)).person[0]!.email).toEqual([]);
      expect((await svc.getSubjectInfo(session(ALICE_SPACED), ALICE)).person[0]!.email).toEqual(['alice@example.org']);
      expect((await svc.getSubjectInfo(session(ADMIN), ALICE)).person[0]!.email).toEqual(['alice@example.org']);
      await svc.mapIdentity(session(ADMIN), ALICE, CAROL);
      const seenByCarol = await svc.getSubjectInfo(session(CAROL), ALICE);
      expect(seenByCarol.person.map((p) => [p.subject, p.email])).toEqual([
        [ALICE, ['alice@example.org']],
        [CAROL, ['carol@example.org']],
      ]);
      expect(seenByCarol.person[0]!.equivalentIdentity).toEqual([CAROL]);
    });

    it('NotFound 4564 for a subject nobody registered', async () => {
      await expectFailure(svc.getSubjectInfo(publicSession(), MALLORY), 'NotFound', '4564');
    });

    it('lists accounts then groups matching a query, by status, paged', async () => {
      await svc.createGroup(session(ALICE), { subject: GROUP, groupName: 'Ocean team', hasMember: [BOB], rightsHolder: [ALICE] });
      await svc.verifyAccount(session(ADMIN), BOB);
      const all = await svc.listSubjects(publicSession(), { start: 0 });
      expect(all.person.map((p) => p.subject)).toEqual([BOB, ALICE, CAROL].sort());
      expect(all.group.map((g) => g.subject)).toEqual([GROUP]);
      expect(all.person.every((p) => p.email.length === 0)).toBe(true);
      expect((await svc.listSubjects(publicSession(), { query: 'jONes', start: 0 })).person.map((p) => p.subject)).toEqual([BOB]);
      expect((await svc.listSubjects(publicSession(), { query: 'ocean', start: 0 })).group.map((g) => g.subject)).toEqual([GROUP]);
      expect((await svc.listSubjects(publicSession(), { query: 'orcid.org/0000-0001', start: 0 })).person.map((p) => p.subject)).toEqual([CAROL]);
      expect((await svc.listSubjects(publicSession(), { query: '100%_!', start: 0 })).person).toEqual([]);
      // E-mail addresses are matched for administrators only (no probing of addresses).
      expect((await svc.listSubjects(session(BOB), { query: 'carol@', start: 0 })).person).toEqual([]);
      expect((await svc.listSubjects(session(ADMIN), { query: 'carol@', start: 0 })).person.map((p) => p.email)).toEqual([['carol@example.org']]);
      const verified = await svc.listSubjects(publicSession(), { status: 'Verified', start: 0 });
      expect([verified.person.map((p) => p.subject), verified.group]).toEqual([[BOB], []]);
      expect((await svc.listSubjects(publicSession(), { status: 'unverified', start: 0 })).person.map((p) => p.subject)).toEqual([ALICE, CAROL].sort());
      const page = await svc.listSubjects(publicSession(), { start: 2, count: 2 });
      expect([...page.person.map((p) => p.subject), ...page.group.map((g) => g.subject)]).toEqual([[BOB, ALICE, CAROL].sort()[2], GROUP]);
      const past = await svc.listSubjects(publicSession(), { start: 10, count: 5 });
      expect([past.person, past.group]).toEqual([[], []]);
      await expectFailure(svc.listSubjects(publicSession(), { status: 'pending', start: 0 }), 'InvalidRequest', '2262');
    });
  });

  describe('identity mappings', () => {
    beforeEach(async () => {
      await register(ALICE, 'Alice', 'Smith');
      await register(ALICE_ORCID, 'Alice', 'Smith');
      await register(BOB, 'Bob', 'Jones');
    });

    it('mapIdentity: administrators and cn.identity.mappers; both directions at once', async () => {
      await expectFailure(svc.mapIdentity(session(ALICE), ALICE, ALICE_ORCID), 'NotAuthorized', '2360', /cn\.identity\.mappers/);
      await svc.mapIdentity(session(MAPPER), ALICE_SPACED, 'http://orcid.org/0000-0002-1825-0097');
      expect(await fx.directory.expand(ALICE)).toContain(ALICE_ORCID);
      expect(await fx.directory.expand(ALICE_ORCID)).toContain(ALICE);
      await expectFailure(svc.mapIdentity(session(ADMIN), ALICE_ORCID, ALICE), 'IdentifierNotUnique', '2343');
      await expectFailure(svc.mapIdentity(session(ADMIN), ALICE, ALICE), 'InvalidRequest', '2342');
      await expectFailure(svc.mapIdentity(session(ADMIN), ALICE, MALLORY), 'NotFound', '2340', /register it first/);
      await expectFailure(svc.mapIdentity(session(ADMIN), ALICE, 'nobody'), 'InvalidRequest', '2342');
    });

    it('request, read, confirm: the two accounts become equivalent; the request is gone', async () => {
      await svc.requestMapIdentity(session(ALICE), ALICE_ORCID);
      const pendingForTarget = await svc.getPendingMapIdentity(session(ALICE_ORCID), ALICE_ORCID);
      expect(pendingForTarget.person.map((p) => p.subject)).toEqual([ALICE_ORCID, ALICE]);
      expect((await svc.getPendingMapIdentity(session(ALICE), ALICE_ORCID)).person.map((p) => p.subject)).toEqual([ALICE_ORCID, ALICE]);
      await expectFailure(svc.getPendingMapIdentity(session(BOB), ALICE_ORCID), 'NotAuthorized', '2360');
      expect((await svc.getPendingMapIdentity(session(ADMIN), ALICE)).person).toHaveLength(2);
      await expectFailure(svc.requestMapIdentity(session(ALICE), ALICE_ORCID), 'IdentifierNotUnique', '2343', /already pending/);
      await expectFailure(svc.requestMapIdentity(session(ALICE_ORCID), ALICE), 'InvalidRequest', '2342', /confirm that request/);
      // Only the target confirms.
      await expectFailure(svc.confirmMapIdentity(session(BOB), ALICE), 'NotFound', '2340');
      expect(await fx.directory.expand(ALICE)).not.toContain(ALICE_ORCID);
      await svc.confirmMapIdentity(session(ALICE_ORCID), ALICE_SPACED);
      expect(await fx.directory.expand(ALICE_ORCID)).toContain(ALICE);
      await expectFailure(svc.getPendingMapIdentity(session(ALICE), ALICE_ORCID), 'NotFound', '2340');
      await expectFailure(svc.confirmMapIdentity(session(ALICE_ORCID), ALICE), 'NotFound', '2340', /requestMapIdentity/);
      await expectFailure(svc.requestMapIdentity(session(ALICE), ALICE_ORCID), 'IdentifierNotUnique', '2343', /already mapped/);
    });

    it('requestMapIdentity: authenticated callers with accounts, naming another account', async () => {
      await expectFailure(svc.requestMapIdentity(publicSession(), ALICE), 'NotAuthorized', '2360');
      await expectFailure(svc.requestMapIdentity(session(MALLORY), ALICE), 'NotFound', '2340', /your subject/);
      await expectFailure(svc.requestMapIdentity(session(ALICE), CAROL), 'NotFound', '2340');
      await expectFailure(svc.requestMapIdentity(session(ALICE), ALICE_SPACED), 'InvalidRequest', '2342', /your own subject/);
      await expectFailure(svc.requestMapIdentity(session(ALICE), 'someone'), 'InvalidRequest', '2342');
    });

    it('denyMapIdentity: the target refuses, or the requester withdraws; NotFound otherwise', async () => {
      await svc.requestMapIdentity(session(ALICE), BOB);
      await svc.denyMapIdentity(session(BOB), ALICE);
      await expectFailure(svc.confirmMapIdentity(session(BOB), ALICE), 'NotFound', '2340');
      await svc.requestMapIdentity(session(ALICE), BOB);
      await svc.denyMapIdentity(session(ALICE), BOB);
      await expectFailure(svc.denyMapIdentity(session(BOB), ALICE), 'NotFound', '2340');
      await expectFailure(svc.denyMapIdentity(publicSession(), ALICE), 'NotAuthorized', '2360');
    });

    it('removeMapIdentity removes the mapping and its reciprocal; NotFound when there is none', async () => {
      await svc.mapIdentity(session(ADMIN), ALICE, ALICE_ORCID);
      await expectFailure(svc.removeMapIdentity(session(BOB), ALICE), 'NotFound', '2340');
      await svc.removeMapIdentity(session(ALICE_ORCID), ALICE);
      expect(await fx.directory.expand(ALICE)).not.toContain(ALICE_ORCID);
      expect(await fx.directory.expand(ALICE_ORCID)).not.toContain(ALICE);
      expect(await fx.identities.equivalencesOf([ALICE, ALICE_ORCID])).toEqual([]);
      await expectFailure(svc.removeMapIdentity(session(ALICE), ALICE_ORCID), 'NotFound', '2340');
      await expectFailure(svc.removeMapIdentity(publicSession(), ALICE), 'NotAuthorized', '2360');
    });
  });

  describe('groups', () => {
    beforeEach(async () => {
      await register(ALICE, 'Alice', 'Smith');
      await register(BOB, 'Bob', 'Jones');
    });

    it('createGroup: the creator becomes a rightsHolder; unique among groups and accounts', async () => {
      expect(await svc.createGroup(session(ALICE), { subject: 'CN=ocean-team, DC=dataone, DC=org', groupName: 'Ocean team', hasMember: [BOB_SPACED, 'CN=urn:node:MN1,DC=dataone,DC=org'], rightsHolder: [BOB] })).toBe(GROUP);
      const info = await svc.getSubjectInfo(publicSession(), GROUP);
      expect(info.group).toEqual([{ subject: GROUP, groupName: 'Ocean team', hasMember: [BOB, 'CN=urn:node:MN1,DC=dataone,DC=org'].sort(), rightsHolder: [ALICE, BOB].sort() }]);
      expect(info.person.map((p) => p.subject)).toEqual([BOB]);
      await expectFailure(svc.createGroup(session(BOB), { subject: GROUP, groupName: 'Other', hasMember: [], rightsHolder: [BOB] }), 'IdentifierNotUnique', '2400', /already exists/);
      await expectFailure(svc.createGroup(session(BOB), { subject: ALICE, groupName: 'Alice?', hasMember: [], rightsHolder: [BOB] }), 'IdentifierNotUnique', '2400', /account/);
      await expectFailure(svc.registerAccount(session(ADMIN), person(GROUP, 'G', 'G')), 'IdentifierNotUnique', '4521', /group/);
      await expectFailure(svc.createGroup(publicSession(), { subject: 'CN=g2,DC=org', groupName: 'g2', hasMember: [], rightsHolder: [BOB] }), 'NotAuthorized', '2460');
      await expectFailure(svc.createGroup(session(BOB), { subject: 'CN=g2,DC=org', groupName: 'g2', hasMember: [GROUP], rightsHolder: [BOB] }), 'InvalidRequest', '0', /cannot be members of groups/);
      await expectFailure(svc.createGroup(session(BOB), { subject: 'CN=g2,DC=org', groupName: 'g2', hasMember: ['public'], rightsHolder: [BOB] }), 'InvalidRequest', '0', /every session has/);
      await expectFailure(svc.createGroup(session(BOB), { subject: ALICE_ORCID, groupName: 'g2', hasMember: [], rightsHolder: [BOB] }), 'InvalidRequest', '0', /ORCID/);
    });

    it('updateGroup: creator, rightsHolders and administrators only; members replace the membership', async () => {
      await svc.createGroup(session(ALICE), { subject: GROUP, groupName: 'Ocean team', hasMember: [BOB], rightsHolder: [ALICE] });
      expect(await fx.directory.expand(BOB)).toContain(GROUP);
      await expectFailure(svc.updateGroup(session(BOB), { subject: GROUP, groupName: 'Mine', hasMember: [BOB], rightsHolder: [BOB] }), 'NotAuthorized', '2560');
      await expectFailure(svc.updateGroup(session(ALICE), { subject: 'CN=nope,DC=org', groupName: 'x', hasMember: [], rightsHolder: [ALICE] }), 'NotFound', '2540');
      await expectFailure(svc.updateGroup(session(ALICE), { subject: GROUP, groupName: 'x', hasMember: [GROUP], rightsHolder: [ALICE] }), 'InvalidRequest', '2542');
      await svc.updateGroup(session(ALICE), { subject: GROUP, groupName: 'Ocean crew', hasMember: [MALLORY], rightsHolder: [BOB] });
      expect(await fx.directory.expand(BOB)).not.toContain(GROUP);
      expect(await fx.directory.expand(MALLORY)).toContain(GROUP);
      // Bob is now a rightsHolder; Alice stays allowed as the creator.
      await svc.updateGroup(session(BOB), { subject: GROUP, groupName: 'Ocean crew', hasMember: [MALLORY, BOB], rightsHolder: [BOB] });
      await svc.updateGroup(session(ALICE), { subject: GROUP, groupName: 'Ocean crew', hasMember: [BOB], rightsHolder: [BOB] });
      await svc.updateGroup(session(ADMIN), { subject: GROUP, groupName: 'Ocean crew', hasMember: [], rightsHolder: [BOB] });
      expect((await svc.getSubjectInfo(publicSession(), GROUP)).group[0]!.hasMember).toEqual([]);
    });
  });

  describe('SubjectDirectory.expand: the one expansion function', () => {
    it('follows equivalences transitively and adds the groups of every equivalent, and verifiedUser', async () => {
      await register(ALICE, 'Alice', 'Smith');
      await register(ALICE_ORCID, 'Alice', 'Smith');
      await register(CAROL, 'Carol', 'Nguyen');
      await svc.mapIdentity(session(ADMIN), ALICE, ALICE_ORCID);
      await svc.mapIdentity(session(ADMIN), ALICE_ORCID, CAROL);
      await svc.createGroup(session(ADMIN), { subject: GROUP, groupName: 'Ocean team', hasMember: [CAROL], rightsHolder: [ADMIN] });
      await svc.verifyAccount(session(ADMIN), ALICE);
      // Every ORCID also as http://orcid.org/..., the spelling the federation's system metadata uses.
      const http = (orcid: string) => orcid.replace('https:', 'http:');
      expect([...(await fx.directory.expand(ALICE_SPACED))].sort()).toEqual([ALICE_SPACED, ALICE, ALICE_ORCID, http(ALICE_ORCID), CAROL, http(CAROL), GROUP, 'verifiedUser'].sort());
      // Carol reaches Alice through the ORCID, but Carol's own account is not verified.
      expect([...(await fx.directory.expand(http(CAROL)))].sort()).toEqual([http(CAROL), ALICE, ALICE_ORCID, http(ALICE_ORCID), CAROL, GROUP].sort());
      // A subject without an account still gets its groups (a node's subject, say).
      await svc.updateGroup(session(ADMIN), { subject: GROUP, groupName: 'Ocean team', hasMember: [CAROL, 'CN=urn:node:MN1,DC=dataone,DC=org'], rightsHolder: [ADMIN] });
      expect([...(await fx.directory.expand('CN=urn:node:MN1, DC=dataone, DC=org'))]).toContain(GROUP);
      expect([...(await fx.directory.expand('public'))]).toEqual(['public']);
      const info = await fx.directory.lookup(CAROL);
      expect(info?.person.map((p) => p.subject)).toEqual([CAROL, ALICE, ALICE_ORCID].slice(0, 1).concat([ALICE, ALICE_ORCID].sort()));
      expect(info?.group.map((g) => g.subject)).toEqual([GROUP]);
      expect((await svc.echoCredentials(session(CAROL))).person[0]!.subject).toBe(CAROL);
      expect(await svc.echoCredentials(publicSession())).toEqual({ person: [], group: [] });
    });
  });
});
