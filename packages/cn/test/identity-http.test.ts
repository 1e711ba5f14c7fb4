// CNIdentity end to end (coordinating-node-interface.md, "CNIdentity"): a CN started by the CLI
// on a fresh folder, on SQLite and on PostgreSQL, real HTTP, v1 and v2, every operation's happy
// path and documented exceptions with their detail codes (detail-codes.tsv), every XML body
// validated against the XSDs; the wire shapes of the federation's Python client (requestMapIdentity
// as POST /accounts with a `subject` part, verifyAccount as a bodiless PUT /accounts/{subject},
// subjects sent as Subject documents).
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GroupCodec, PersonCodec, SubjectInfoCodec, type Group, type Person, type SubjectInfo } from '@memberkit/types';
import { CN_ADMIN, CnClient, DATABASES, errorOf, startCn, type CnProcess, type Received } from './harness.js';

const VERIFIER = 'CN=identity verifier,DC=dataone,DC=org';
const MAPPER = 'CN=identity mapper,DC=dataone,DC=org';

const enc = encodeURIComponent;

function person(subject: string, given: string, family: string, email: string[] = []): Person {
  return { subject, givenName: [given], familyName: family, email, isMemberOf: [], equivalentIdentity: [] };
}

/** A Subject document as the Python client sends one (`subject.toxml('utf-8')`). */
function subjectXml(subject: string): string {
  return `<?xml version="1.0" encoding="utf-8"?><ns1:subject xmlns:ns1="http://ns.dataone.org/service/types/v1">${subject}</ns1:subject>`;
}

function expectError(r: Received, name: string, status: number, detailCode: string, description?: RegExp): void {
  const e = errorOf(r);
  expect(`${r.status} ${e.name} ${e.detailCode}`, r.text).toBe(`${status} ${name} ${detailCode}`);
  const unescaped = e.description.replaceAll('&apos;', "'").replaceAll('&quot;', '"').replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&');
  if (description) expect(unescaped).toMatch(description);
}

function subjectInfo(r: Received): SubjectInfo {
  expect(r.status, r.text).toBe(200);
  expect(r.headers.get('content-type')).toMatch(/xml/);
  return SubjectInfoCodec.decode(r.text);
}

function subjectAnswer(r: Received): string {
  expect(r.status, r.text).toBe(200);
  const m = /^<\?xml[^>]*\?><d1:subject xmlns:d1="http:\/\/ns\.dataone\.org\/service\/types\/v1">([^<]*)<\/d1:subject>$/.exec(r.text);
  expect(m, r.text).not.toBeNull();
  return m![1]!.replaceAll('&amp;', '&');
}

describe.each(DATABASES)('CNIdentity over HTTP on %s', (database) => {
  let cn: CnProcess;
  let client: CnClient;
  const tokens = new Map<string, string>();
  const token = async (subject: string) => {
    let t = tokens.get(subject);
    if (!t) tokens.set(subject, (t = await cn.token(subject)));
    return t;
  };

  beforeAll(async () => {
    cn = await startCn({ database, config: { cn: { identity: { verifiers: [VERIFIER], mappers: [MAPPER] } } } });
    client = new CnClient(cn.baseUrl);
  });
  afterAll(async () => {
    await cn?.stop();
  });
  afterEach(async () => {
    await client.validate();
  });

  describe.each(['v1', 'v2'] as const)('%s', (v) => {
    // Subjects of their own per API version: both versions share one CN.
    const ALICE = `CN=Alice Smith ${v},O=Example,C=US,DC=cilogon,DC=org`;
    const ALICE_SPACED = `CN=Alice Smith ${v}, O=Example, C=US, DC=cilogon, DC=org`;
    const ALICE_ORCID = v === 'v1' ? 'https://orcid.org/0000-0002-1825-0097' : 'https://orcid.org/0000-0001-5109-3700';
    const BOB = `CN=Bob Jones ${v},O=Example,C=US,DC=cilogon,DC=org`;
    const CAROL = `CN=Carol Nguyen ${v},O=Example,C=US,DC=cilogon,DC=org`;
    const MALLORY = `CN=Mallory ${v},O=Elsewhere,DC=org`;
    const GROUP = `CN=ocean-team-${v},DC=dataone,DC=org`;

    const as = async (subject: string | null) => (subject === null ? { token: null } : { token: await token(subject) });
    const register = async (subject: string, p: Person, caller: string | null = subject) =>
      client.form('POST', `/${v}/accounts`, { person: new Blob([PersonCodec.encode(p, v)]) }, await as(caller));
    const getInfo = async (subject: string, caller: string | null) => client.get(`/${v}/accounts/${enc(subject)}`, await as(caller));

    it('registerAccount: POST /accounts with a person part answers the subject; InvalidToken 4526, NotAuthorized 4525, IdentifierNotUnique 4521, InvalidRequest 4524', async () => {
      expect(subjectAnswer(await register(ALICE_SPACED, person(ALICE_SPACED, 'Alice', 'Smith', ['alice@example.org'])))).toBe(ALICE);
      expect(subjectAnswer(await register(BOB, person(BOB, 'Bob', 'Jones', ['bob@example.org'])))).toBe(BOB);
      expect(subjectAnswer(await register(CAROL, person(CAROL, 'Carol', 'Nguyen', ['carol@example.org']), CN_ADMIN))).toBe(CAROL);
      // The ORCID as the http URL some clients write: stored (and answered) as https.
      const http = ALICE_ORCID.replace('https:', 'http:');
      expect(subjectAnswer(await register(http, person(http, 'Alice', 'Smith', ['alice@orcid.example'])))).toBe(ALICE_ORCID);

      expectError(await register(MALLORY, person(MALLORY, 'M', 'M'), null), 'NotAuthorized', 401, '4525', /authenticated caller/);
      expectError(await register(ALICE, person(ALICE, 'Alice', 'Smith'), MALLORY), 'NotAuthorized', 401, '4525', /only for your own subject/);
      expectError(await register(ALICE, person(ALICE, 'Alice', 'Smith')), 'IdentifierNotUnique', 409, '4521');
      expectError(await register('jane', person('jane', 'Jane', 'Doe'), CN_ADMIN), 'InvalidRequest', 400, '4524', /neither a distinguished name/);
      expectError(await client.form('POST', `/${v}/accounts`, { person: '<person><subject>x</subject></person>' }, await as(MALLORY)), 'InvalidRequest', 400, '4524', /not a valid Person/);
      expectError(await client.form('POST', `/${v}/accounts`, { other: 'x' }, await as(MALLORY)), 'InvalidRequest', 400, '4524', /no 'person' part/);
      expectError(await client.form('POST', `/${v}/accounts`, { person: new Blob([PersonCodec.encode(person(MALLORY, 'M', 'M'), v)]) }, { token: 'not-a-jwt' }), 'InvalidToken', 401, '4526');
    });

    it('getSubjectInfo: GET /accounts/{subject}; e-mail hidden from others; NotFound 4564', async () => {
      const seenByPublic = subjectInfo(await getInfo(ALICE, null));
      expect(seenByPublic.person).toEqual([{ subject: ALICE, givenName: ['Alice'], familyName: 'Smith', email: [], isMemberOf: [], equivalentIdentity: [], verified: false }]);
      expect(subjectInfo(await getInfo(ALICE, BOB)).person[0]!.email).toEqual([]);
      expect(subjectInfo(await getInfo(ALICE_SPACED, ALICE)).person[0]!.email).toEqual(['alice@example.org']);
      expect(subjectInfo(await getInfo(ALICE, CN_ADMIN)).person[0]!.email).toEqual(['alice@example.org']);
      // An ORCID subject percent-encoded as one path segment, written as http.
      expect(subjectInfo(await getInfo(ALICE_ORCID.replace('https:', 'http:'), null)).person[0]!.subject).toBe(ALICE_ORCID);
      expectError(await getInfo(MALLORY, null), 'NotFound', 404, '4564');
    });

    it('updateAccount: PUT /accounts/{subject} with a person part; InvalidRequest 4533, NotAuthorized 4534, NotFound 4535', async () => {
      const put = async (path: string, p: Person, caller: string | null) => client.form('PUT', `/${v}/accounts/${enc(path)}`, { person: new Blob([PersonCodec.encode(p, v)]) }, await as(caller));
      expect(subjectAnswer(await put(ALICE, person(ALICE, 'Alicia', 'Smith', ['alice@example.org']), ALICE))).toBe(ALICE);
      expect(subjectInfo(await getInfo(ALICE, null)).person[0]!.givenName).toEqual(['Alicia']);
      expectError(await put(ALICE, person(BOB, 'Bob', 'Jones'), ALICE), 'InvalidRequest', 400, '4533', /differs from the subject of the path/);
      expectError(await put(ALICE, person(ALICE, 'Mallory', 'M'), MALLORY), 'NotAuthorized', 401, '4534');
      expectError(await put(MALLORY, person(MALLORY, 'Mallory', 'M'), MALLORY), 'NotFound', 404, '4535');
      expectError(await put(ALICE, person(ALICE, 'Alice', 'Smith'), null), 'NotAuthorized', 401, '4534');
    });

    it('verifyAccount: PUT /accounts/verification/{subject}, and a bodiless PUT /accounts/{subject} (the Python client); NotAuthorized 4541', async () => {
      expectError(await client.request('PUT', `/${v}/accounts/verification/${enc(ALICE)}`, await as(ALICE)), 'NotAuthorized', 401, '4541', /cn\.identity\.verifiers/);
      expectError(await client.request('PUT', `/${v}/accounts/${enc(ALICE)}`, await as(BOB)), 'NotAuthorized', 401, '4541');
      const verified = await client.request('PUT', `/${v}/accounts/verification/${enc(ALICE)}`, await as(VERIFIER));
      expect(verified.status, verified.text).toBe(200);
      expect(subjectInfo(await getInfo(ALICE, null)).person[0]!.verified).toBe(true);
      const bodiless = await client.request('PUT', `/${v}/accounts/${enc(BOB)}`, await as(CN_ADMIN));
      expect(bodiless.status, bodiless.text).toBe(200);
      expect(subjectInfo(await getInfo(BOB, null)).person[0]!.verified).toBe(true);
      // An empty multipart body is no update either.
      const empty = await client.form('PUT', `/${v}/accounts/${enc(CAROL)}`, {}, await as(CN_ADMIN));
      expect(empty.status, empty.text).toBe(200);
      expect(subjectInfo(await getInfo(CAROL, null)).person[0]!.verified).toBe(true);
      const unknown = await client.request('PUT', `/${v}/accounts/verification/${enc(MALLORY)}`, await as(CN_ADMIN));
      expectError(unknown, 'NotFound', 404, '0', /must be registered/);
    });

    it('listSubjects: GET /accounts?query=&status=&start=&count=; InvalidRequest 2262', async () => {
      const list = async (query: string, caller: string | null = null) => subjectInfo(await client.get(`/${v}/accounts?${query}`, await as(caller)));
      const mine = await list(`query=${enc(`smith ${v}`)}`);
      expect(mine.person.map((p) => p.subject)).toEqual([ALICE]);
      expect(mine.person[0]!.email).toEqual([]);
      expect((await list(`query=${enc(`nguyen ${v}`)}&status=verified`)).person.map((p) => p.subject)).toEqual([CAROL]);
      expect((await list(`query=${enc(`nguyen ${v}`)}&status=unverified`)).person).toEqual([]);
      const page = await list(`query=${enc(` ${v},o=example`)}&start=1&count=1`);
      expect(page.person.map((p) => p.subject)).toEqual([[ALICE, BOB, CAROL].sort()[1]]);
      expectError(await client.get(`/${v}/accounts?status=pending`), 'InvalidRequest', 400, '2262');
      expectError(await client.get(`/${v}/accounts?count=-1`), 'InvalidRequest', 400, '2262');
    });

    it('mapIdentity: POST /accounts/map (primarySubject, secondarySubject as text or Subject documents); NotAuthorized 2360, NotFound 2340, IdentifierNotUnique 2343, InvalidRequest 2342', async () => {
      const map = async (primary: string, secondary: string, caller: string) =>
        client.form('POST', `/${v}/accounts/map`, { primarySubject: primary, secondarySubject: subjectXml(secondary) }, await as(caller));
      expectError(await map(ALICE, ALICE_ORCID, ALICE), 'NotAuthorized', 401, '2360', /cn\.identity\.mappers/);
      expectError(await map(ALICE, MALLORY, MAPPER), 'NotFound', 404, '2340');
      expectError(await map(ALICE, ALICE, MAPPER), 'InvalidRequest', 400, '2342');
      expectError(await client.form('POST', `/${v}/accounts/map`, { primarySubject: ALICE }, await as(MAPPER)), 'InvalidRequest', 400, '2342', /secondarySubject/);
      const mapped = await map(ALICE_SPACED, ALICE_ORCID, MAPPER);
      expect(mapped.status, mapped.text).toBe(200);
      expectError(await map(ALICE_ORCID, ALICE, CN_ADMIN), 'IdentifierNotUnique', 409, '2343');
      const info = subjectInfo(await getInfo(ALICE_ORCID, ALICE));
      expect(info.person.map((p) => [p.subject, p.equivalentIdentity])).toEqual([
        [ALICE_ORCID, [ALICE]],
        [ALICE, [ALICE_ORCID]],
      ]);
      // The ORCID's owner sees the e-mail of its equivalent identity: sessions expand through the CN's identity store.
      expect(info.person.map((p) => p.email)).toEqual([['alice@orcid.example'], ['alice@example.org']]);
    });

    it('removeMapIdentity: DELETE /accounts/map/{subject} removes both directions; NotFound 2340, NotAuthorized 2360', async () => {
      expectError(await client.request('DELETE', `/${v}/accounts/map/${enc(ALICE)}`, await as(BOB)), 'NotFound', 404, '2340');
      expectError(await client.request('DELETE', `/${v}/accounts/map/${enc(ALICE)}`, { token: null }), 'NotAuthorized', 401, '2360');
      const removed = await client.request('DELETE', `/${v}/accounts/map/${enc(ALICE)}`, await as(ALICE_ORCID));
      expect(removed.status, removed.text).toBe(200);
      expect(subjectInfo(await getInfo(ALICE, null)).person[0]!.equivalentIdentity).toEqual([]);
      expect(subjectInfo(await getInfo(ALICE_ORCID, null)).person[0]!.equivalentIdentity).toEqual([]);
    });

    it('requestMapIdentity, getPendingMapIdentity, confirmMapIdentity: the two-step mapping, also as the Python client sends it', async () => {
      const request = await client.form('POST', `/${v}/accounts/pendingmap`, { subject: ALICE_ORCID }, await as(ALICE));
      expect(request.status, request.text).toBe(200);
      expectError(await client.form('POST', `/${v}/accounts/pendingmap`, { subject: ALICE_ORCID }, await as(ALICE)), 'IdentifierNotUnique', 409, '2343', /already pending/);
      // The Python client's requestMapIdentity: POST /accounts with a Subject document part.
      expectError(await client.form('POST', `/${v}/accounts`, { subject: subjectXml(ALICE) }, await as(ALICE_ORCID)), 'InvalidRequest', 400, '2342', /confirm that request/);
      const pending = subjectInfo(await client.get(`/${v}/accounts/pendingmap/${enc(ALICE_ORCID)}`, await as(ALICE_ORCID)));
      expect(pending.person.map((p) => p.subject)).toEqual([ALICE_ORCID, ALICE]);
      expectError(await client.get(`/${v}/accounts/pendingmap/${enc(ALICE_ORCID)}`, await as(BOB)), 'NotAuthorized', 401, '2360');
      expectError(await client.get(`/${v}/accounts/pendingmap/${enc(BOB)}`, await as(BOB)), 'NotFound', 404, '2340');
      expectError(await client.request('PUT', `/${v}/accounts/pendingmap/${enc(ALICE)}`, await as(BOB)), 'NotFound', 404, '2340');
      const confirmed = await client.request('PUT', `/${v}/accounts/pendingmap/${enc(ALICE)}`, await as(ALICE_ORCID));
      expect(confirmed.status, confirmed.text).toBe(200);
      expect(subjectInfo(await getInfo(ALICE, null)).person[0]!.equivalentIdentity).toEqual([ALICE_ORCID]);
      expectError(await client.request('PUT', `/${v}/accounts/pendingmap/${enc(ALICE)}`, await as(ALICE_ORCID)), 'NotFound', 404, '2340');
      expectError(await client.form('POST', `/${v}/accounts/pendingmap`, { subject: MALLORY }, await as(ALICE)), 'NotFound', 404, '2340');
      expectError(await client.form('POST', `/${v}/accounts/pendingmap`, { subject: BOB }, { token: null }), 'NotAuthorized', 401, '2360');
      // The Python client's shape, accepted: Bob asks, through POST /accounts.
      const python = await client.form('POST', `/${v}/accounts`, { subject: subjectXml(CAROL) }, await as(BOB));
      expect(python.status, python.text).toBe(200);
    });

    it('denyMapIdentity: DELETE /accounts/pendingmap/{subject}; NotFound 2340, NotAuthorized 2360', async () => {
      expectError(await client.request('DELETE', `/${v}/accounts/pendingmap/${enc(BOB)}`, { token: null }), 'NotAuthorized', 401, '2360');
      expectError(await client.request('DELETE', `/${v}/accounts/pendingmap/${enc(BOB)}`, await as(ALICE)), 'NotFound', 404, '2340');
      const denied = await client.request('DELETE', `/${v}/accounts/pendingmap/${enc(BOB)}`, await as(CAROL));
      expect(denied.status, denied.text).toBe(200);
      expectError(await client.request('PUT', `/${v}/accounts/pendingmap/${enc(BOB)}`, await as(CAROL)), 'NotFound', 404, '2340');
    });

    it('createGroup and updateGroup: POST and PUT /groups with a group part; IdentifierNotUnique 2400, NotAuthorized 2460/2560, NotFound 2540, InvalidRequest 2542', async () => {
      const group = (g: Group) => new Blob([GroupCodec.encode(g, v)]);
      const create = async (g: Group, caller: string | null) => client.form('POST', `/${v}/groups`, { group: group(g) }, await as(caller));
      const update = async (g: Group, caller: string | null) => client.form('PUT', `/${v}/groups`, { group: group(g) }, await as(caller));
      expect(subjectAnswer(await create({ subject: GROUP.replaceAll(',', ', '), groupName: 'Ocean team', hasMember: [BOB], rightsHolder: [ALICE] }, ALICE))).toBe(GROUP);
      expectError(await create({ subject: GROUP, groupName: 'Again', hasMember: [], rightsHolder: [BOB] }, BOB), 'IdentifierNotUnique', 409, '2400');
      expectError(await create({ subject: `CN=other-${v},DC=org`, groupName: 'x', hasMember: [], rightsHolder: [BOB] }, null), 'NotAuthorized', 401, '2460');
      const info = subjectInfo(await getInfo(GROUP, null));
      expect(info.group).toEqual([{ subject: GROUP, groupName: 'Ocean team', hasMember: [BOB], rightsHolder: [ALICE] }]);
      expect(info.person.map((p) => p.subject)).toEqual([BOB]);
      expect(subjectInfo(await getInfo(BOB, null)).person[0]!.isMemberOf).toEqual([GROUP]);

      expectError(await update({ subject: GROUP, groupName: 'Mine', hasMember: [BOB], rightsHolder: [BOB] }, BOB), 'NotAuthorized', 401, '2560');
      expectError(await update({ subject: `CN=none-${v},DC=org`, groupName: 'x', hasMember: [], rightsHolder: [ALICE] }, ALICE), 'NotFound', 404, '2540');
      expectError(await update({ subject: GROUP, groupName: 'x', hasMember: [GROUP], rightsHolder: [ALICE] }, ALICE), 'InvalidRequest', 400, '2542', /is the group itself/);
      const OTHER = `CN=other-team-${v},DC=dataone,DC=org`;
      expect(subjectAnswer(await create({ subject: OTHER, groupName: 'Other team', hasMember: [], rightsHolder: [ALICE] }, ALICE))).toBe(OTHER);
      expectError(await update({ subject: GROUP, groupName: 'x', hasMember: [OTHER], rightsHolder: [ALICE] }, ALICE), 'InvalidRequest', 400, '2542', /cannot be members of groups/);
      expectError(await client.form('PUT', `/${v}/groups`, { group: '<group/>' }, await as(ALICE)), 'InvalidRequest', 400, '2542');
      // Alice's ORCID is an equivalent identity of the group's rightsHolder: it may update.
      const updated = await update({ subject: GROUP, groupName: 'Ocean crew', hasMember: [CAROL], rightsHolder: [ALICE] }, ALICE_ORCID);
      expect(updated.status, updated.text).toBe(200);
      const after = subjectInfo(await getInfo(GROUP, null));
      expect([after.group[0]!.groupName, after.group[0]!.hasMember]).toEqual(['Ocean crew', [CAROL]]);
      expect(subjectInfo(await getInfo(BOB, null)).person[0]!.isMemberOf).toEqual([]);
    });

    it('every operation: a bearer token the CN cannot verify is InvalidToken with the operation\'s detail code', async () => {
      const s = enc(ALICE);
      const calls: Array<[string, string, string]> = [
        ['POST', '/accounts', '4526'],
        ['PUT', `/accounts/${s}`, '4536'],
        ['PUT', `/accounts/verification/${s}`, '4543'],
        ['GET', `/accounts/${s}`, '4564'],
        ['GET', '/accounts?query=x', '2270'],
        ['POST', '/accounts/map', '2370'],
        ['DELETE', `/accounts/map/${s}`, '2370'],
        ['POST', '/accounts/pendingmap', '2370'],
        ['GET', `/accounts/pendingmap/${s}`, '4961'],
        ['PUT', `/accounts/pendingmap/${s}`, '2370'],
        ['DELETE', `/accounts/pendingmap/${s}`, '2370'],
        ['POST', '/groups', '2470'],
        ['PUT', '/groups', '2570'],
      ];
      for (const [method, path, detailCode] of calls) {
        const r = await client.request(method, `/${v}${path}`, { token: 'not-a-jwt' });
        expectError(r, 'InvalidToken', 401, detailCode);
      }
    });

    if (v === 'v2') {
      it('echoCredentials: GET /diag/subject answers the expanded SubjectInfo of the session', async () => {
        const alice = subjectInfo(await client.get('/v2/diag/subject', await as(ALICE_ORCID)));
        expect(alice.person.map((p) => p.subject)).toEqual([ALICE_ORCID, ALICE]);
        const carol = subjectInfo(await client.get('/v2/diag/subject', await as(CAROL)));
        expect(carol.group.map((g) => g.subject)).toEqual([GROUP]);
        expect(subjectInfo(await client.get('/v2/diag/subject', { token: null }))).toEqual({ person: [], group: [] });
        expectError(await client.get('/v2/diag/subject', { token: 'not-a-jwt' }), 'InvalidToken', 401, '4967');
      });

      it('sessions expand through the identity store: an administrator\'s equivalent identity acts as administrator', async () => {
        const ADMIN_ORCID = 'https://orcid.org/0000-0003-1419-2405';
        expect(subjectAnswer(await register(CN_ADMIN, person(CN_ADMIN, 'memberkit', 'developer'), CN_ADMIN))).toBe(CN_ADMIN);
        expect(subjectAnswer(await register(ADMIN_ORCID, person(ADMIN_ORCID, 'memberkit', 'developer'), CN_ADMIN))).toBe(ADMIN_ORCID);
        const target = `CN=Dave ${v},DC=org`;
        expect(subjectAnswer(await register(target, person(target, 'Dave', 'D'), CN_ADMIN))).toBe(target);
        expectError(await client.request('PUT', `/v2/accounts/verification/${enc(target)}`, await as(ADMIN_ORCID)), 'NotAuthorized', 401, '4541');
        expect((await client.form('POST', '/v2/accounts/map', { primarySubject: CN_ADMIN, secondarySubject: ADMIN_ORCID }, await as(CN_ADMIN))).status).toBe(200);
        const verified = await client.request('PUT', `/v2/accounts/verification/${enc(target)}`, await as(ADMIN_ORCID));
        expect(verified.status, verified.text).toBe(200);
      });
      it('every XML body received so far was validated against the XSDs', () => {
        expect(client.validated).toBeGreaterThan(100);
      });
    } else {
      it('CNDiagnostic is a v2 API: /v1/diag/subject is an unknown path (NotFound)', async () => {
        const r = await client.get('/v1/diag/subject');
        expect(r.status).toBe(404);
        expect(errorOf(r).name).toBe('NotFound');
      });
    }
  });
});
