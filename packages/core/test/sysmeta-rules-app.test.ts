// System metadata rules through the app, in process (app.request, no socket): what a client
// may set on create and update, what updateSystemMetadata may change, and how serialVersion
// and dateSysMetadataModified move. Exceptions and detail codes come from the API reference's
// table (spec/detail-codes.tsv). The node is real: SQL catalogue on SQLite, managed files.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checksumOf, expectIdentifierDocument, expectStatus } from '@memberkit/testkit';
import type { SystemMetadata } from '@memberkit/types';
import { expectSpecError, startInProcessNode, SUBJECTS, type InProcessNode } from './helpers/in-process-node.js';

let n: InProcessNode;
let seq = 0;
const pid = (label: string) => `rules-${label}-${++seq}`;
const DAY = 24 * 3600 * 1000;

beforeAll(async () => {
  n = await startInProcessNode();
});
afterAll(async () => {
  await n?.close();
});

async function created(label: string, o: Parameters<InProcessNode['create']>[2] = {}): Promise<SystemMetadata> {
  const id = pid(label);
  expectIdentifierDocument(await n.create('v2', id, o), id);
  return n.meta('v2', id);
}

async function expectUnchanged(before: SystemMetadata): Promise<void> {
  const now = await n.meta('v2', before.identifier);
  expect(now.serialVersion, 'a refused change leaves serialVersion').toBe(before.serialVersion);
  expect(now.dateSysMetadataModified!.getTime(), 'a refused change leaves dateSysMetadataModified').toBe(before.dateSysMetadataModified!.getTime());
}

describe('MNStorage.create: the node sets serialVersion, submitter, dateUploaded and dateSysMetadataModified', () => {
  it('values a client sends for node-set fields are replaced', async () => {
    const before = Date.now();
    const sm = await created('node-set', {
      overrides: { serialVersion: 42, submitter: 'CN=someone else', dateUploaded: new Date('2001-01-01T00:00:00Z'), dateSysMetadataModified: new Date('2001-01-01T00:00:00Z') },
    });
    expect(sm.serialVersion).toBe(1);
    expect(sm.submitter).toBe(SUBJECTS.writer);
    expect(sm.dateUploaded!.getTime()).toBeGreaterThanOrEqual(before - 1000);
    expect(sm.dateSysMetadataModified!.getTime()).toBe(sm.dateUploaded!.getTime());
    expect(sm.originMemberNode).toBe('urn:node:MEMBERKITAPP');
    expect(sm.authoritativeMemberNode).toBe('urn:node:MEMBERKITAPP');
  });

  const refused: Array<[string, (id: string) => Parameters<InProcessNode['create']>[2]]> = [
    ['identifier differs from the pid', (id) => ({ overrides: { identifier: `${id}-other` } })],
    ['size differs from the bytes', () => ({ bytes: 'abc', overrides: { size: 4 } })],
    ['checksum differs from the bytes', () => ({ overrides: { checksum: { algorithm: 'SHA-1', value: checksumOf('other bytes') } } })],
    ['checksum algorithm unknown', () => ({ overrides: { checksum: { algorithm: 'CRC-32', value: '00000000' } } })],
    ['formatId not in the format list', () => ({ formatId: 'application/x-no-such-format' })],
    ['obsoletes set', (id) => ({ obsoletes: `${id}-older` })],
    ['obsoletedBy set', (id) => ({ obsoletedBy: `${id}-newer` })],
    ['seriesId equal to the pid', (id) => ({ seriesId: id })],
  ];
  for (const [what, options] of refused) {
    it(`${what} -> InvalidSystemMetadata (MNStorage.create), nothing stored`, async () => {
      const id = pid('refused');
      expectSpecError(await n.create('v2', id, options(id)), 'MNStorage.create', 'InvalidSystemMetadata');
      expectSpecError(await n.call('GET', `/v2/meta/${id}`, { as: 'admin' }), 'MNRead.getSystemMetadata', 'NotFound');
    });
  }

  it('a seriesId already used as a PID, or a pid already used as a SID -> IdentifierNotUnique (MNStorage.create)', async () => {
    const holder = await created('sid-holder', { seriesId: pid('sid') });
    expectSpecError(await n.create('v2', pid('sid-clash'), { seriesId: holder.identifier }), 'MNStorage.create', 'IdentifierNotUnique');
    expectSpecError(await n.create('v2', holder.seriesId!), 'MNStorage.create', 'IdentifierNotUnique');
  });
});

describe('MNStorage.update: obsoletes equals the pid updated; serialVersion and dates move on the old object', () => {
  it('the old object gets obsoletedBy, serialVersion + 1 and a later dateSysMetadataModified; the new one starts at 1', async () => {
    const old = await created('upd');
    const next = pid('upd-next');
    expectIdentifierDocument(await n.update('v2', old.identifier, next), next);
    const after = await n.meta('v2', old.identifier);
    const made = await n.meta('v2', next);
    expect(after.obsoletedBy).toBe(next);
    expect(after.serialVersion).toBe(old.serialVersion! + 1);
    expect(after.dateSysMetadataModified!.getTime()).toBeGreaterThan(old.dateSysMetadataModified!.getTime());
    expect(made.obsoletes).toBe(old.identifier);
    expect(made.serialVersion).toBe(1);
    expect(made.submitter).toBe(SUBJECTS.writer);
    expect(made.dateSysMetadataModified!.getTime()).toBe(after.dateSysMetadataModified!.getTime());
  });

  it('obsoletes missing or naming another object -> InvalidSystemMetadata (MNStorage.update); the old object unchanged', async () => {
    const old = await created('upd-obs');
    expectSpecError(await n.update('v2', old.identifier, pid('upd-obs-n'), { obsoletes: `${old.identifier}-x` }), 'MNStorage.update', 'InvalidSystemMetadata');
    expectSpecError(await n.update('v2', old.identifier, pid('upd-obs-n'), { obsoletes: undefined }), 'MNStorage.update', 'InvalidSystemMetadata');
    await expectUnchanged(old);
  });

  it('an object already obsoleted -> InvalidSystemMetadata; an archived one -> InvalidRequest (MNStorage.update)', async () => {
    const old = await created('upd-twice');
    expectIdentifierDocument(await n.update('v2', old.identifier, `${old.identifier}-n1`), `${old.identifier}-n1`);
    const obsoleted = await n.meta('v2', old.identifier);
    expectSpecError(await n.update('v2', old.identifier, `${old.identifier}-n2`), 'MNStorage.update', 'InvalidSystemMetadata');
    await expectUnchanged(obsoleted);

    const arch = await created('upd-arch');
    expectIdentifierDocument(await n.call('PUT', `/v2/archive/${arch.identifier}`, { as: 'writer' }), arch.identifier);
    const archived = await n.meta('v2', arch.identifier);
    expectSpecError(await n.update('v2', arch.identifier, `${arch.identifier}-n`), 'MNStorage.update', 'InvalidRequest');
    await expectUnchanged(archived);
  });

  it('a seriesId of another series -> InvalidSystemMetadata (MNStorage.update); continuing its own series is accepted', async () => {
    const other = await created('upd-other-series', { seriesId: pid('sid-other') });
    const old = await created('upd-series', { seriesId: pid('sid-own') });
    expectSpecError(await n.update('v2', old.identifier, pid('upd-series-n'), { seriesId: other.seriesId! }), 'MNStorage.update', 'InvalidSystemMetadata');
    await expectUnchanged(old);
    const next = pid('upd-series-ok');
    expectIdentifierDocument(await n.update('v2', old.identifier, next, { seriesId: old.seriesId! }), next);
    expect((await n.meta('v2', next)).seriesId).toBe(old.seriesId);
  });
});

describe('MNStorage.updateSystemMetadata: field ownership (SystemMetadata.txt)', () => {
  it('mutable fields change: accessPolicy, rightsHolder, formatId, replicationPolicy; serialVersion + 1, dateSysMetadataModified forward', async () => {
    const sm = await created('usm-mutable');
    const next: SystemMetadata = {
      ...sm,
      rightsHolder: SUBJECTS.other,
      formatId: 'text/plain',
      accessPolicy: { allow: [{ subject: [SUBJECTS.other], permission: ['write'] }] },
      replicationPolicy: { replicationAllowed: true, numberReplicas: 2, preferredMemberNode: [], blockedMemberNode: [] },
    };
    expectStatus(await n.updateSystemMetadata(sm.identifier, next), 200);
    const after = await n.meta('v2', sm.identifier);
    expect(after.rightsHolder).toBe(SUBJECTS.other);
    expect(after.formatId).toBe('text/plain');
    expect(after.accessPolicy?.allow).toEqual([{ subject: [SUBJECTS.other], permission: ['write'] }]);
    expect(after.replicationPolicy?.replicationAllowed).toBe(true);
    expect(after.serialVersion).toBe(sm.serialVersion! + 1);
    expect(after.dateSysMetadataModified!.getTime()).toBeGreaterThan(sm.dateSysMetadataModified!.getTime());
    expect(after.dateUploaded!.getTime()).toBe(sm.dateUploaded!.getTime());
  });

  it('immutable fields (size, checksum, submitter, dateUploaded, originMemberNode) -> InvalidSystemMetadata', async () => {
    const sm = await created('usm-immutable');
    const changes: Array<Partial<SystemMetadata>> = [
      { size: sm.size + 1 },
      { checksum: { algorithm: 'SHA-1', value: checksumOf('different') } },
      { submitter: 'CN=someone-else,DC=example,DC=org' },
      { dateUploaded: new Date(sm.dateUploaded!.getTime() - DAY) },
      { originMemberNode: 'urn:node:ELSEWHERE' },
    ];
    for (const change of changes) {
      expectSpecError(await n.updateSystemMetadata(sm.identifier, { ...sm, ...change }), 'MNStorage.updateSystemMetadata', 'InvalidSystemMetadata');
    }
    await expectUnchanged(sm);
  });

  it('an identifier other than the pid -> InvalidRequest', async () => {
    const sm = await created('usm-identifier');
    expectSpecError(await n.updateSystemMetadata(sm.identifier, { ...sm, identifier: `${sm.identifier}-other` }), 'MNStorage.updateSystemMetadata', 'InvalidRequest');
    await expectUnchanged(sm);
  });

  it('seriesId, obsoletes and obsoletedBy are set once; a seriesId may be added when there is none', async () => {
    const sm = await created('usm-once');
    const sid = pid('usm-sid');
    expectStatus(await n.updateSystemMetadata(sm.identifier, { ...sm, seriesId: sid }), 200);
    const withSid = await n.meta('v2', sm.identifier);
    expect(withSid.seriesId).toBe(sid);
    expectSpecError(await n.updateSystemMetadata(sm.identifier, { ...withSid, seriesId: pid('usm-sid-2') }), 'MNStorage.updateSystemMetadata', 'InvalidSystemMetadata');

    const old = await created('usm-chain');
    const next = pid('usm-chain-n');
    expectIdentifierDocument(await n.update('v2', old.identifier, next), next);
    const obsoleted = await n.meta('v2', old.identifier);
    expectSpecError(await n.updateSystemMetadata(old.identifier, { ...obsoleted, obsoletedBy: `${next}-x` }), 'MNStorage.updateSystemMetadata', 'InvalidSystemMetadata');
    const successor = await n.meta('v2', next);
    expectSpecError(await n.updateSystemMetadata(next, { ...successor, obsoletes: `${old.identifier}-x` }), 'MNStorage.updateSystemMetadata', 'InvalidSystemMetadata');
    await expectUnchanged(obsoleted);
    await expectUnchanged(successor);
  });

  it('a seriesId already in use by another object -> InvalidSystemMetadata', async () => {
    const holder = await created('usm-sid-holder', { seriesId: pid('usm-taken') });
    const sm = await created('usm-sid-taker');
    expectSpecError(await n.updateSystemMetadata(sm.identifier, { ...sm, seriesId: holder.seriesId! }), 'MNStorage.updateSystemMetadata', 'InvalidSystemMetadata');
    expectSpecError(await n.updateSystemMetadata(sm.identifier, { ...sm, seriesId: holder.identifier }), 'MNStorage.updateSystemMetadata', 'InvalidSystemMetadata');
    await expectUnchanged(sm);
  });

  it('archived goes from false to true only', async () => {
    const sm = await created('usm-archived');
    expectStatus(await n.updateSystemMetadata(sm.identifier, { ...sm, archived: true }), 200);
    const archived = await n.meta('v2', sm.identifier);
    expect(archived.archived).toBe(true);
    expectSpecError(await n.updateSystemMetadata(sm.identifier, { ...archived, archived: false }), 'MNStorage.updateSystemMetadata', 'InvalidSystemMetadata');
    await expectUnchanged(archived);
  });

  it('a formatId outside the format list -> InvalidSystemMetadata', async () => {
    const sm = await created('usm-format');
    expectSpecError(await n.updateSystemMetadata(sm.identifier, { ...sm, formatId: 'application/x-no-such-format' }), 'MNStorage.updateSystemMetadata', 'InvalidSystemMetadata');
    await expectUnchanged(sm);
  });

  it('serialVersion: an older one than stored -> InvalidRequest; the stored one or none is accepted; each change adds 1', async () => {
    const sm = await created('usm-serial');
    expectStatus(await n.updateSystemMetadata(sm.identifier, { ...sm, formatId: 'text/plain' }), 200);
    const v2 = await n.meta('v2', sm.identifier);
    expect(v2.serialVersion).toBe(sm.serialVersion! + 1);
    // sent with the serialVersion read before the first change: the client's copy is stale
    expectSpecError(await n.updateSystemMetadata(sm.identifier, { ...v2, serialVersion: sm.serialVersion! }), 'MNStorage.updateSystemMetadata', 'InvalidRequest');
    await expectUnchanged(v2);
    const { serialVersion: _drop, ...unversioned } = v2;
    expectStatus(await n.updateSystemMetadata(sm.identifier, { ...unversioned, formatId: 'text/csv' } as SystemMetadata), 200);
    const v3 = await n.meta('v2', sm.identifier);
    expect(v3.serialVersion).toBe(v2.serialVersion! + 1);
    expect(v3.dateSysMetadataModified!.getTime()).toBeGreaterThan(v2.dateSysMetadataModified!.getTime());
  });

  it('a caller without changePermission -> NotAuthorized; nothing changes', async () => {
    const sm = await created('usm-auth');
    expectSpecError(await n.updateSystemMetadata(sm.identifier, { ...sm, rightsHolder: SUBJECTS.other }, 'other'), 'MNStorage.updateSystemMetadata', 'NotAuthorized');
    expectSpecError(await n.updateSystemMetadata(sm.identifier, { ...sm, rightsHolder: SUBJECTS.other }, 'public'), 'MNStorage.updateSystemMetadata', 'NotAuthorized');
    await expectUnchanged(sm);
  });
});
