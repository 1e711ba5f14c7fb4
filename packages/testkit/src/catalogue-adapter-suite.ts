import { expect, type TestContext } from 'vitest';
import type { CatalogueChange, CatalogueAdapter, ObjectPage, ObjectQuery, ObjectRecord, SeriesMember } from '@memberkit/types';
import { expectAdapterError, describeError } from './adapter-errors.js';
import { buildObjectRecord, buildSystemMetadata, HOSTILE_IDENTIFIERS, instant } from './fixtures.js';
import { defineSuite, requireCapability } from './harness.js';
import type { SuiteContext, SuiteOptions } from './suite-context.js';

const pidsOf = (page: ObjectPage): string[] => page.items.map((r) => r.sysmeta.identifier);

function memberView(m: SeriesMember): SeriesMember {
  return { pid: m.pid, obsoletes: m.obsoletes, obsoletedBy: m.obsoletedBy, dateUploaded: m.dateUploaded };
}

/**
 * The CatalogueAdapter conformance suite (contract: `CatalogueAdapter` and `CatalogueChange`
 * in @memberkit/types). Lookups of absent identifiers run for every adapter; everything
 * that needs data runs when capabilities.write is true, on a catalogue that `ctx.create()`
 * MUST return empty. A read-only catalogue is asserted to leave `apply` out (or refuse it
 * with 'unsupported'); its data-bearing behaviour belongs to the adapter's own tests.
 */
export function runCatalogueAdapterSuite(name: string, ctx: SuiteContext<CatalogueAdapter>, options?: SuiteOptions): void {
  const apply = (m: CatalogueAdapter, change: CatalogueChange): Promise<void> => {
    expect(m.apply, 'capabilities.write is true, so apply MUST be implemented').toBeTypeOf('function');
    return m.apply!(change).then(() => undefined);
  };
  const insert = (m: CatalogueAdapter, ...records: ObjectRecord[]): Promise<void> => apply(m, { insert: records });
  const needWrite = (tc: TestContext, m: CatalogueAdapter): void => requireCapability(tc, m.capabilities.write, 'capabilities.write is false (read-only catalogue)');
  const all = (m: CatalogueAdapter, query: Partial<ObjectQuery> = {}): Promise<ObjectPage> => m.list({ start: 0, count: 1000, ...query });

  /** Precondition of the data-bearing tests: create() returned an empty catalogue. */
  async function expectEmpty(m: CatalogueAdapter): Promise<void> {
    const page = await m.list({ start: 0, count: 0 });
    if (page.total !== 0) throw new Error(`testkit: SuiteContext.create() MUST return an empty catalogue (list total is ${page.total})`);
  }

  /** Several records for the list tests, inserted in shuffled order. */
  async function seedListing(m: CatalogueAdapter): Promise<ObjectRecord[]> {
    await expectEmpty(m);
    const at = (ms: number) => instant(ms);
    const records = [
      buildObjectRecord('obj-e', { sysmeta: { dateSysMetadataModified: at(0), formatId: 'text/csv' } }),
      buildObjectRecord('obj-a', { sysmeta: { dateSysMetadataModified: at(1), formatId: 'text/csv', seriesId: 'series-1' } }),
      // three with one timestamp: ordered by PID
      buildObjectRecord('obj-c', { sysmeta: { dateSysMetadataModified: at(1000), formatId: 'eml://ecoinformatics.org/eml-2.1.1', seriesId: 'series-1' } }),
      buildObjectRecord('obj-b', { sysmeta: { dateSysMetadataModified: at(1000), formatId: 'text/csv' }, isReplica: true }),
      buildObjectRecord('obj-d', { sysmeta: { dateSysMetadataModified: at(1000), formatId: 'text/csv' } }),
      buildObjectRecord('obj-0', { sysmeta: { dateSysMetadataModified: at(86_400_000), formatId: 'image/png' }, isReplica: true }),
      buildObjectRecord('obj-f', { sysmeta: { dateSysMetadataModified: at(86_400_001), formatId: 'text/csv' } }),
    ];
    for (const i of [3, 0, 6, 2, 5, 1, 4]) await insert(m, records[i]!);
    return records;
  }
  const ORDER = ['obj-e', 'obj-a', 'obj-b', 'obj-c', 'obj-d', 'obj-0', 'obj-f'];

  defineSuite<CatalogueAdapter>(`CatalogueAdapter conformance: ${name}`, ctx, options, (h) => {
    h.group('capabilities', () => {
      h.test('declares capabilities.write', async (m) => {
        expect(m.capabilities.write).toBeTypeOf('boolean');
        for (const fn of ['get', 'seriesMembers', 'identifierUse', 'list'] as const) expect(m[fn], fn).toBeTypeOf('function');
        if (m.capabilities.write) expect(m.apply, 'capabilities.write: apply').toBeTypeOf('function');
      });

      h.test('declares capabilities.overlay as a boolean, with apply, when present', async (m) => {
        const overlay = m.capabilities.overlay;
        if (overlay === undefined) return;
        expect(overlay, 'capabilities.overlay').toBeTypeOf('boolean');
        if (overlay) expect(m.apply, 'capabilities.overlay: apply (replace of overlay fields)').toBeTypeOf('function');
      });

      h.test('an overlay catalogue refuses insert and remove with unsupported', async (m, tc) => {
        requireCapability(tc, !m.capabilities.write && m.capabilities.overlay === true, 'not an overlay-only catalogue');
        await expectAdapterError(() => m.apply!({ insert: [buildObjectRecord('testkit:overlay-insert')] }), 'unsupported', 'insert into an overlay catalogue');
        await expectAdapterError(() => m.apply!({ remove: [{ pid: 'testkit:overlay-remove' }] }), 'unsupported', 'remove from an overlay catalogue');
      });

      h.test('apply is absent or refused with unsupported when write is not declared', async (m, tc) => {
        requireCapability(tc, !m.capabilities.write, 'capabilities.write is true');
        if (m.apply === undefined) return;
        await expectAdapterError(() => m.apply!({ insert: [buildObjectRecord('testkit:refused')] }), 'unsupported', 'apply on a read-only catalogue');
      });
    });

    h.group('lookups of absent identifiers', () => {
      h.test('get of an absent pid is undefined', async (m) => {
        expect(await m.get('testkit:absent')).toBeUndefined();
        for (const pid of HOSTILE_IDENTIFIERS) expect(await m.get(pid)).toBeUndefined();
      });

      h.test('identifierUse of an unknown identifier is undefined', async (m) => {
        expect(await m.identifierUse('testkit:absent')).toBeUndefined();
        for (const id of HOSTILE_IDENTIFIERS) expect(await m.identifierUse(id)).toBeUndefined();
      });

      h.test('seriesMembers of an unknown sid is empty', async (m) => {
        expect(await m.seriesMembers('testkit:absent-series')).toEqual([]);
      });
    });

    h.group('insert', () => {
      h.test('round-trips a record with every field set', async (m, tc) => {
        needWrite(tc, m);
        const record = buildObjectRecord('testkit:full', { full: true, storageKey: 'ab/cd/0123456789abcdef', isReplica: true });
        await insert(m, record);
        expect(await m.get('testkit:full')).toEqual(record);
        expect(await m.identifierUse('testkit:full')).toBe('pid');
      });

      h.test('round-trips a record with only the required fields', async (m, tc) => {
        needWrite(tc, m);
        const record = buildObjectRecord('testkit:minimal');
        await insert(m, record);
        const got = await m.get('testkit:minimal');
        expect(got).toEqual(record);
        for (const field of ['accessPolicy', 'replicationPolicy', 'obsoletes', 'obsoletedBy', 'seriesId', 'mediaType', 'fileName', 'originMemberNode', 'authoritativeMemberNode'] as const) {
          expect(got!.sysmeta[field], `an absent ${field} stays absent`).toBeUndefined();
        }
      });

      h.test('round-trips archived, dates and zero-valued fields exactly', async (m, tc) => {
        needWrite(tc, m);
        const record = buildObjectRecord('testkit:exact', {
          full: true,
          sysmeta: {
            archived: true, serialVersion: 0, size: 0,
            dateUploaded: new Date('1970-01-01T00:00:00.001Z'), dateSysMetadataModified: new Date('2099-12-31T23:59:59.999Z'),
            replicationPolicy: { replicationAllowed: false, numberReplicas: 0, preferredMemberNode: [], blockedMemberNode: [] },
            accessPolicy: { allow: [] },
          },
        });
        await insert(m, record);
        expect(await m.get('testkit:exact')).toEqual(record);
      });

      h.test('round-trips hostile and unicode pids', async (m, tc) => {
        needWrite(tc, m);
        for (const pid of HOSTILE_IDENTIFIERS) {
          const record = buildObjectRecord(pid, { full: true });
          try {
            await insert(m, record);
          } catch (e) {
            throw new Error(`insert of pid ${JSON.stringify(pid.slice(0, 60))} failed: ${describeError(e)}`, { cause: e });
          }
        }
        for (const pid of HOSTILE_IDENTIFIERS) {
          const got = await m.get(pid);
          expect(got?.sysmeta.identifier, `get(${JSON.stringify(pid.slice(0, 60))})`).toBe(pid);
          expect(got).toEqual(buildObjectRecord(pid, { full: true, storageKey: got!.storageKey }));
          expect(await m.identifierUse(pid)).toBe('pid');
          expect(await m.identifierUse(`${pid}.series`)).toBe('sid');
          expect(pidsOf(await all(m, { identifier: pid })), `list({ identifier: ${JSON.stringify(pid.slice(0, 60))} })`).toEqual([pid]);
        }
        expect((await m.list({ start: 0, count: 0 })).total).toBe(HOSTILE_IDENTIFIERS.length);
      });

      h.test('keeps NFC/NFD twins and case twins apart', async (m, tc) => {
        needWrite(tc, m);
        const twins = ['caf\u00e9', 'cafe\u0301', 'Cafe', 'cafe', 'CAFE'];
        for (const pid of twins) await insert(m, buildObjectRecord(pid));
        for (const pid of twins) {
          expect((await m.get(pid))?.sysmeta.identifier).toBe(pid);
          expect(pidsOf(await all(m, { identifier: pid }))).toEqual([pid]);
        }
      });

      h.test('insert of an existing pid fails with already-exists', async (m, tc) => {
        needWrite(tc, m);
        const first = buildObjectRecord('testkit:dup', { sysmeta: { formatId: 'text/csv' } });
        await insert(m, first);
        await expectAdapterError(() => insert(m, buildObjectRecord('testkit:dup', { sysmeta: { formatId: 'image/png' } })), 'already-exists', 'insert of a pid in use');
        expect(await m.get('testkit:dup'), 'the first record is untouched').toEqual(first);
      });

      h.test('insert of a pid in use as a sid fails with already-exists', async (m, tc) => {
        needWrite(tc, m);
        await insert(m, buildObjectRecord('testkit:p1', { sysmeta: { seriesId: 'testkit:s1' } }));
        await expectAdapterError(() => insert(m, buildObjectRecord('testkit:s1')), 'already-exists', 'insert of a pid equal to an existing sid');
        expect(await m.identifierUse('testkit:s1')).toBe('sid');
      });

      h.test('insert of a seriesId in use as a pid fails with already-exists', async (m, tc) => {
        needWrite(tc, m);
        await insert(m, buildObjectRecord('testkit:p1'));
        await expectAdapterError(() => insert(m, buildObjectRecord('testkit:p2', { sysmeta: { seriesId: 'testkit:p1' } })), 'already-exists', 'insert of a seriesId equal to an existing pid');
        expect(await m.get('testkit:p2')).toBeUndefined();
        expect(await m.identifierUse('testkit:p1')).toBe('pid');
      });

      h.test('two records with one pid in one change fail with already-exists', async (m, tc) => {
        needWrite(tc, m);
        await expectAdapterError(() => insert(m, buildObjectRecord('testkit:twice'), buildObjectRecord('testkit:twice')), 'already-exists', 'a change inserting one pid twice');
        expect(await m.get('testkit:twice')).toBeUndefined();
      });

      h.test('a change inserting many records stores every one as given', async (m, tc) => {
        needWrite(tc, m);
        // More records than one multi-row statement holds; every fifth with a seriesId, some public.
        const batch = Array.from({ length: 130 }, (_, i) =>
          buildObjectRecord(`testkit:many-${String(i).padStart(3, '0')}`, {
            full: i % 3 === 0,
            sysmeta: {
              size: i,
              ...(i % 5 === 0 ? { seriesId: `testkit:many-series-${i}` } : i % 3 === 0 ? { seriesId: undefined } : {}),
              ...(i % 2 === 0 ? { accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] } } : {}),
            },
          }),
        );
        await insert(m, ...batch);
        expect((await m.list({ start: 0, count: 0 })).total).toBe(130);
        for (const record of [batch[0]!, batch[1]!, batch[64]!, batch[65]!, batch[129]!]) {
          const stored = await m.get(record.sysmeta.identifier);
          expect(stored?.sysmeta.size, record.sysmeta.identifier).toBe(record.sysmeta.size);
          expect(stored?.sysmeta.seriesId, record.sysmeta.identifier).toBe(record.sysmeta.seriesId);
          expect(stored?.sysmeta.accessPolicy, record.sysmeta.identifier).toEqual(record.sysmeta.accessPolicy);
          expect(stored?.storageKey).toBe(record.storageKey);
        }
        expect(await m.identifierUse('testkit:many-129')).toBe('pid');
        expect(await m.identifierUse('testkit:many-series-125')).toBe('sid');
        const isPublic = (r: ObjectRecord) => r.sysmeta.accessPolicy?.allow.some((rule) => rule.subject.includes('public')) ?? false;
        expect((await m.list({ start: 0, count: 0, readableBy: ['public'] })).total, 'the public records').toBe(batch.filter(isPublic).length);
      });

      h.test('a change inserting many records, one with a pid in use, fails with already-exists and stores none', async (m, tc) => {
        needWrite(tc, m);
        await insert(m, buildObjectRecord('testkit:taken'));
        const batch = Array.from({ length: 90 }, (_, i) => buildObjectRecord(`testkit:batch-${String(i).padStart(3, '0')}`));
        batch.splice(70, 0, buildObjectRecord('testkit:taken', { sysmeta: { formatId: 'image/png' } }));
        await expectAdapterError(() => insert(m, ...batch), 'already-exists', 'a change with a pid in use among many');
        expect(await m.get('testkit:batch-000')).toBeUndefined();
        expect(await m.identifierUse('testkit:batch-089')).toBeUndefined();
        expect((await m.list({ start: 0, count: 0 })).total).toBe(1);
        expect((await m.get('testkit:taken'))?.sysmeta.formatId, 'the record in use is untouched').not.toBe('image/png');
      });

      h.test('several objects may share a seriesId', async (m, tc) => {
        needWrite(tc, m);
        const v1 = buildObjectRecord('testkit:v1', { sysmeta: { seriesId: 'testkit:series', obsoletedBy: 'testkit:v2', dateUploaded: instant(1) } });
        const v2 = buildObjectRecord('testkit:v2', { sysmeta: { seriesId: 'testkit:series', obsoletes: 'testkit:v1', obsoletedBy: 'testkit:v3', dateUploaded: instant(2) } });
        const v3 = buildObjectRecord('testkit:v3', { sysmeta: { seriesId: 'testkit:series', obsoletes: 'testkit:v2', dateUploaded: instant(3) } });
        await insert(m, v1);
        await insert(m, v2, v3);
        expect(await m.identifierUse('testkit:series')).toBe('sid');
        const members = (await m.seriesMembers('testkit:series')).map(memberView).sort((x, y) => (x.pid < y.pid ? -1 : 1));
        expect(members).toEqual([
          { pid: 'testkit:v1', obsoletedBy: 'testkit:v2', dateUploaded: instant(1) },
          { pid: 'testkit:v2', obsoletes: 'testkit:v1', obsoletedBy: 'testkit:v3', dateUploaded: instant(2) },
          { pid: 'testkit:v3', obsoletes: 'testkit:v2', dateUploaded: instant(3) },
        ]);
        expect(await m.seriesMembers('testkit:v1'), 'a pid is not a series').toEqual([]);
      });

      h.test('concurrent inserts of one pid: exactly one succeeds', async (m, tc) => {
        needWrite(tc, m);
        const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => insert(m, buildObjectRecord('testkit:race', { sysmeta: { size: i } }))));
        const ok = results.filter((r) => r.status === 'fulfilled');
        expect(ok.length, 'exactly one concurrent insert succeeds').toBe(1);
        for (const r of results) if (r.status === 'rejected') await expectAdapterError(Promise.reject(r.reason), 'already-exists', 'a losing concurrent insert');
        expect((await m.list({ start: 0, count: 0 })).total).toBe(1);
      });

      h.test('a burst of changes sent at once is applied in the order sent: a replace and a remove of objects the same burst creates, one PID used twice', async (m, tc) => {
        needWrite(tc, m);
        // Sent without waiting, so a catalogue that groups concurrent writes gets them in one
        // group: each must see the ones sent before it, and only the second use of a PID fails.
        const pids = Array.from({ length: 12 }, (_, i) => `testkit:burst-${String(i).padStart(2, '0')}`);
        const sent = [
          ...pids.map((pid) => insert(m, buildObjectRecord(pid, { sysmeta: { accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] } } }))),
          apply(m, { replace: [{ pid: pids[3]!, expectedSerialVersion: 1, sysmeta: buildSystemMetadata(pids[3]!, { serialVersion: 2, size: 333 }) }] }),
          apply(m, { remove: [{ pid: pids[5]! }] }),
          insert(m, buildObjectRecord(pids[7]!, { sysmeta: { size: 777 } })),
          insert(m, buildObjectRecord('testkit:burst-last')),
        ];
        const results = await Promise.allSettled(sent);
        results.forEach((r, i) => {
          if (i !== pids.length + 2) expect(r.status, `change ${i} of the burst: ${r.status === 'rejected' ? describeError(r.reason) : ''}`).toBe('fulfilled');
        });
        await expectAdapterError(sent[pids.length + 2]!, 'already-exists', 'the second insert of one PID');
        expect((await m.get(pids[3]!))?.sysmeta).toMatchObject({ serialVersion: 2, size: 333 });
        expect(await m.get(pids[5]!), 'removed in the burst that created it').toBeUndefined();
        expect((await m.get(pids[7]!))?.sysmeta.size, 'the first insert of the PID stands').not.toBe(777);
        const page = await all(m, { readableBy: ['public'] });
        expect(pidsOf(page).filter((p) => p.startsWith('testkit:burst-0') || p.startsWith('testkit:burst-1')).sort()).toEqual(pids.filter((_, i) => i !== 5));
        expect((await m.list({ start: 0, count: 0 })).total).toBe(pids.length - 1 + 1);
      });

      h.test('a burst of 40 changes of 30 new public objects each sent at once: every object stored, listed and counted', async (m, tc) => {
        needWrite(tc, m);
        const changes = Array.from({ length: 40 }, (_, c) =>
          Array.from({ length: 30 }, (_, i) => buildObjectRecord(`testkit:many-${String(c).padStart(2, '0')}-${String(i).padStart(2, '0')}`, {
            sysmeta: { accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] } },
          })));
        await Promise.all(changes.map((records) => insert(m, ...records)));
        expect((await m.list({ start: 0, count: 0 })).total).toBe(1200);
        expect((await m.list({ start: 0, count: 0, readableBy: ['public'] })).total).toBe(1200);
        const listed = new Set<string>();
        for (let start = 0; start < 1200; start += 500) for (const r of (await m.list({ start, count: 500 })).items) listed.add(r.sysmeta.identifier);
        expect(listed.size).toBe(1200);
        expect((await m.get('testkit:many-39-29'))?.sysmeta.identifier).toBe('testkit:many-39-29');
      });

      h.test('concurrent inserts of a pid and a sid with one value: exactly one succeeds', async (m, tc) => {
        needWrite(tc, m);
        const results = await Promise.allSettled([
          insert(m, buildObjectRecord('testkit:contested')),
          insert(m, buildObjectRecord('testkit:other', { sysmeta: { seriesId: 'testkit:contested' } })),
        ]);
        expect(results.filter((r) => r.status === 'fulfilled').length, 'exactly one succeeds').toBe(1);
        for (const r of results) if (r.status === 'rejected') await expectAdapterError(Promise.reject(r.reason), 'already-exists', 'the losing insert');
      });
    });

    h.group('replace', () => {
      h.test('replace with the expected serialVersion stores the new system metadata', async (m, tc) => {
        needWrite(tc, m);
        const original = buildObjectRecord('testkit:r', { full: true });
        await insert(m, original);
        const next = buildSystemMetadata('testkit:r', {
          serialVersion: 2, formatId: 'image/png', archived: true, dateSysMetadataModified: instant(5000),
          seriesId: undefined, obsoletedBy: undefined, replica: [], accessPolicy: { allow: [{ subject: ['CN=new'], permission: ['read'] }] },
        });
        await apply(m, { replace: [{ pid: 'testkit:r', expectedSerialVersion: 1, sysmeta: next }] });
        const got = await m.get('testkit:r');
        expect(got?.sysmeta, 'the whole system metadata is replaced (left-out fields are gone)').toEqual(next);
        expect(got?.sysmeta.seriesId).toBeUndefined();
        expect(got?.storageKey, 'replace keeps the storage key').toBe(original.storageKey);
        expect(await m.identifierUse('testkit:r.series'), 'the dropped seriesId is no longer in use').toBeUndefined();
        expect(await m.seriesMembers('testkit:r.series')).toEqual([]);
      });

      h.test('replace with a stale serialVersion fails with conflict', async (m, tc) => {
        needWrite(tc, m);
        const original = buildObjectRecord('testkit:r', { sysmeta: { serialVersion: 3 } });
        await insert(m, original);
        for (const expectedSerialVersion of [2, 4]) {
          await expectAdapterError(
            () => apply(m, { replace: [{ pid: 'testkit:r', expectedSerialVersion, sysmeta: buildSystemMetadata('testkit:r', { serialVersion: 4 }) }] }),
            'conflict', `replace expecting serialVersion ${expectedSerialVersion} of a record at 3`);
        }
        expect(await m.get('testkit:r')).toEqual(original);
      });

      h.test('replace of an absent pid fails with not-found', async (m, tc) => {
        needWrite(tc, m);
        await expectAdapterError(
          () => apply(m, { replace: [{ pid: 'testkit:absent', expectedSerialVersion: 1, sysmeta: buildSystemMetadata('testkit:absent', { serialVersion: 2 }) }] }),
          'not-found', 'replace of an absent pid');
        expect(await m.get('testkit:absent')).toBeUndefined();
      });

      h.test('replace may add a seriesId', async (m, tc) => {
        needWrite(tc, m);
        await insert(m, buildObjectRecord('testkit:r'));
        const next = { ...(await m.get('testkit:r'))!.sysmeta, serialVersion: 2, seriesId: 'testkit:new-series' };
        await apply(m, { replace: [{ pid: 'testkit:r', expectedSerialVersion: 1, sysmeta: next }] });
        expect(await m.identifierUse('testkit:new-series')).toBe('sid');
        expect((await m.seriesMembers('testkit:new-series')).map((x) => x.pid)).toEqual(['testkit:r']);
      });

      h.test('replace setting a seriesId in use as a pid fails with already-exists', async (m, tc) => {
        needWrite(tc, m);
        await insert(m, buildObjectRecord('testkit:a'), buildObjectRecord('testkit:b'));
        const next = { ...(await m.get('testkit:b'))!.sysmeta, serialVersion: 2, seriesId: 'testkit:a' };
        await expectAdapterError(() => apply(m, { replace: [{ pid: 'testkit:b', expectedSerialVersion: 1, sysmeta: next }] }), 'already-exists', 'replace with a seriesId equal to an existing pid');
        expect((await m.get('testkit:b'))?.sysmeta.serialVersion).toBe(1);
      });

      h.test('replace updates isReplica when given', async (m, tc) => {
        needWrite(tc, m);
        await insert(m, buildObjectRecord('testkit:r'));
        const next = { ...(await m.get('testkit:r'))!.sysmeta, serialVersion: 2 };
        await apply(m, { replace: [{ pid: 'testkit:r', expectedSerialVersion: 1, sysmeta: next, isReplica: true }] });
        expect((await m.get('testkit:r'))?.isReplica).toBe(true);
      });

      h.test('concurrent replaces expecting one serialVersion: exactly one succeeds', async (m, tc) => {
        needWrite(tc, m);
        await insert(m, buildObjectRecord('testkit:r'));
        const results = await Promise.allSettled(Array.from({ length: 10 }, (_, i) =>
          apply(m, { replace: [{ pid: 'testkit:r', expectedSerialVersion: 1, sysmeta: buildSystemMetadata('testkit:r', { serialVersion: 2, size: i }) }] })));
        expect(results.filter((r) => r.status === 'fulfilled').length, 'exactly one compare-and-set wins').toBe(1);
        for (const r of results) if (r.status === 'rejected') await expectAdapterError(Promise.reject(r.reason), 'conflict', 'a losing compare-and-set');
        const winner = results.findIndex((r) => r.status === 'fulfilled');
        expect((await m.get('testkit:r'))?.sysmeta.size).toBe(winner);
      });
    });

    h.group('remove', () => {
      h.test('remove deletes the record', async (m, tc) => {
        needWrite(tc, m);
        await insert(m, buildObjectRecord('testkit:gone', { sysmeta: { seriesId: 'testkit:gone-series' } }), buildObjectRecord('testkit:kept'));
        await apply(m, { remove: [{ pid: 'testkit:gone' }] });
        expect(await m.get('testkit:gone')).toBeUndefined();
        expect(await m.identifierUse('testkit:gone')).toBeUndefined();
        expect(await m.identifierUse('testkit:gone-series')).toBeUndefined();
        expect(await m.seriesMembers('testkit:gone-series')).toEqual([]);
        expect(pidsOf(await all(m))).toEqual(['testkit:kept']);
        await insert(m, buildObjectRecord('testkit:gone'));
        expect(await m.identifierUse('testkit:gone'), 'a removed pid may be inserted again').toBe('pid');
      });

      h.test('remove of an absent pid fails with not-found', async (m, tc) => {
        needWrite(tc, m);
        await expectAdapterError(() => apply(m, { remove: [{ pid: 'testkit:absent' }] }), 'not-found', 'remove of an absent pid');
      });
    });

    h.group('atomic changes', () => {
      h.test('a change whose second insert collides applies nothing', async (m, tc) => {
        needWrite(tc, m);
        await insert(m, buildObjectRecord('testkit:existing'));
        await expectAdapterError(() => insert(m, buildObjectRecord('testkit:new'), buildObjectRecord('testkit:existing')), 'already-exists', 'the colliding change');
        expect(await m.get('testkit:new'), 'the first insert of a failed change is not visible').toBeUndefined();
        expect(await m.identifierUse('testkit:new')).toBeUndefined();
      });

      h.test('a change whose replace conflicts applies none of its inserts', async (m, tc) => {
        needWrite(tc, m);
        await insert(m, buildObjectRecord('testkit:old'));
        await expectAdapterError(() => apply(m, {
          insert: [buildObjectRecord('testkit:new')],
          replace: [{ pid: 'testkit:old', expectedSerialVersion: 7, sysmeta: buildSystemMetadata('testkit:old', { serialVersion: 8 }) }],
        }), 'conflict', 'the conflicting change');
        expect(await m.get('testkit:new')).toBeUndefined();
        expect((await m.get('testkit:old'))?.sysmeta.serialVersion).toBe(1);
      });

      h.test('a change whose insert collides applies none of its replaces and removes', async (m, tc) => {
        needWrite(tc, m);
        await insert(m, buildObjectRecord('testkit:existing'), buildObjectRecord('testkit:to-remove'), buildObjectRecord('testkit:to-replace'));
        await expectAdapterError(() => apply(m, {
          insert: [buildObjectRecord('testkit:existing')],
          replace: [{ pid: 'testkit:to-replace', expectedSerialVersion: 1, sysmeta: buildSystemMetadata('testkit:to-replace', { serialVersion: 2 }) }],
          remove: [{ pid: 'testkit:to-remove' }],
        }), 'already-exists', 'the colliding change');
        expect(await m.get('testkit:to-remove')).toBeDefined();
        expect((await m.get('testkit:to-replace'))?.sysmeta.serialVersion).toBe(1);
      });

      h.test('a change with insert, replace and remove applies all of them', async (m, tc) => {
        needWrite(tc, m);
        await insert(m, buildObjectRecord('testkit:to-remove'), buildObjectRecord('testkit:to-replace'));
        await apply(m, {
          insert: [buildObjectRecord('testkit:new')],
          replace: [{ pid: 'testkit:to-replace', expectedSerialVersion: 1, sysmeta: buildSystemMetadata('testkit:to-replace', { serialVersion: 2 }) }],
          remove: [{ pid: 'testkit:to-remove' }],
        });
        expect(await m.get('testkit:new')).toBeDefined();
        expect((await m.get('testkit:to-replace'))?.sysmeta.serialVersion).toBe(2);
        expect(await m.get('testkit:to-remove')).toBeUndefined();
      });
    });

    h.group('list', () => {
      h.test('list orders by dateSysMetadataModified then pid', async (m, tc) => {
        needWrite(tc, m);
        await seedListing(m);
        const page = await all(m);
        expect(pidsOf(page)).toEqual(ORDER);
        expect(page.total).toBe(7);
      });

      h.test('list items are complete records', async (m, tc) => {
        needWrite(tc, m);
        const records = await seedListing(m);
        const page = await all(m);
        for (const item of page.items) expect(item).toEqual(records.find((r) => r.sysmeta.identifier === item.sysmeta.identifier));
      });

      h.test('list: fromDate is inclusive, toDate exclusive', async (m, tc) => {
        needWrite(tc, m);
        await seedListing(m);
        expect(pidsOf(await all(m, { fromDate: instant(1000) }))).toEqual(['obj-b', 'obj-c', 'obj-d', 'obj-0', 'obj-f']);
        expect(pidsOf(await all(m, { fromDate: instant(1) }))).toEqual(ORDER.slice(1));
        expect(pidsOf(await all(m, { toDate: instant(1000) }))).toEqual(['obj-e', 'obj-a']);
        expect(pidsOf(await all(m, { toDate: instant(1) })), '1 ms before').toEqual(['obj-e']);
        expect(pidsOf(await all(m, { fromDate: instant(1000), toDate: instant(86_400_001) }))).toEqual(['obj-b', 'obj-c', 'obj-d', 'obj-0']);
        const page = await m.list({ fromDate: instant(1000), toDate: instant(1000), start: 0, count: 10 });
        expect(page).toEqual({ total: 0, items: [] });
      });

      h.test('list filters by formatId', async (m, tc) => {
        needWrite(tc, m);
        await seedListing(m);
        expect(pidsOf(await all(m, { formatId: 'text/csv' }))).toEqual(['obj-e', 'obj-a', 'obj-b', 'obj-d', 'obj-f']);
        expect(pidsOf(await all(m, { formatId: 'image/png' }))).toEqual(['obj-0']);
        expect(pidsOf(await all(m, { formatId: 'text/%' })), 'formatId is an exact match').toEqual([]);
      });

      h.test('list filters by identifier as a pid and as a sid', async (m, tc) => {
        needWrite(tc, m);
        await seedListing(m);
        expect(pidsOf(await all(m, { identifier: 'obj-b' }))).toEqual(['obj-b']);
        expect(pidsOf(await all(m, { identifier: 'series-1' }))).toEqual(['obj-a', 'obj-c']);
        expect(pidsOf(await all(m, { identifier: 'obj-%' })), 'identifier is an exact match').toEqual([]);
        expect((await all(m, { identifier: 'absent' })).total).toBe(0);
      });

      h.test('list leaves out replicas when replicas is false', async (m, tc) => {
        needWrite(tc, m);
        await seedListing(m);
        expect(pidsOf(await all(m, { replicas: false }))).toEqual(['obj-e', 'obj-a', 'obj-c', 'obj-d', 'obj-f']);
        expect(pidsOf(await all(m, { replicas: true }))).toEqual(ORDER);
        expect(pidsOf(await all(m, { replicas: undefined }))).toEqual(ORDER);
      });

      h.test('list filters by readableBy', async (m, tc) => {
        needWrite(tc, m);
        await expectEmpty(m);
        const owner = 'CN=owner,DC=dataone,DC=org';
        const rule = (subject: string[], permission: Array<'read' | 'write' | 'changePermission'>) => ({ allow: [{ subject, permission }] });
        await insert(m,
          buildObjectRecord('acl-a', { sysmeta: { rightsHolder: 'CN=alice', dateSysMetadataModified: instant(1) } }),
          buildObjectRecord('acl-b', { sysmeta: { rightsHolder: owner, accessPolicy: rule(['CN=bob'], ['read']), dateSysMetadataModified: instant(2) } }),
          buildObjectRecord('acl-c', { sysmeta: { rightsHolder: owner, accessPolicy: rule(['public'], ['read']), dateSysMetadataModified: instant(3) } }),
          buildObjectRecord('acl-d', { sysmeta: { rightsHolder: owner, accessPolicy: rule(['CN=carol'], ['write']), dateSysMetadataModified: instant(4) } }),
          buildObjectRecord('acl-e', { sysmeta: { rightsHolder: owner, accessPolicy: { allow: [{ subject: ['CN=x'], permission: ['read'] }, { subject: ['CN=dave', 'CN=erin'], permission: ['changePermission'] }] }, dateSysMetadataModified: instant(5) } }),
          buildObjectRecord('acl-f', { sysmeta: { rightsHolder: owner, accessPolicy: rule(['CN=alice-admin', 'CN=Alice'], ['read']), dateSysMetadataModified: instant(6) } }),
        );
        const readable = async (subjects: string[]) => pidsOf(await all(m, { readableBy: subjects }));
        expect(await readable(['CN=alice']), 'the rightsHolder (and not CN=alice-admin or CN=Alice)').toEqual(['acl-a']);
        expect(await readable(['CN=bob']), 'a read grant').toEqual(['acl-b']);
        expect(await readable(['public']), 'the public grant').toEqual(['acl-c']);
        expect(await readable(['CN=carol']), 'a subject with only write').toEqual(['acl-d']);
        expect(await readable(['CN=erin']), 'the second subject of a changePermission rule').toEqual(['acl-e']);
        expect(await readable(['CN=alice', 'public']), 'any of several subjects').toEqual(['acl-a', 'acl-c']);
        expect(await readable([owner])).toEqual(['acl-b', 'acl-c', 'acl-d', 'acl-e', 'acl-f']);
        expect(await readable(['CN=nobody'])).toEqual([]);
        expect(await readable(['CN=%'])).toEqual([]);
        expect(await readable([]), 'no subjects read nothing').toEqual([]);
        expect((await m.list({ readableBy: ['CN=alice', 'public'], start: 0, count: 0 })).total).toBe(2);
      });

      h.test('list pages with start and count', async (m, tc) => {
        needWrite(tc, m);
        await seedListing(m);
        const pages = [await m.list({ start: 0, count: 3 }), await m.list({ start: 3, count: 3 }), await m.list({ start: 6, count: 3 })];
        for (const page of pages) expect(page.total).toBe(7);
        expect(pages.map((p) => p.items.length)).toEqual([3, 3, 1]);
        expect(pages.flatMap(pidsOf), 'pages concatenate to the ordered list').toEqual(ORDER);
        const filtered = await m.list({ formatId: 'text/csv', start: 1, count: 2 });
        expect(filtered.total, 'total counts the filtered objects').toBe(5);
        expect(pidsOf(filtered)).toEqual(['obj-a', 'obj-b']);
      });

      h.test('list with start past the total returns no items and the total', async (m, tc) => {
        needWrite(tc, m);
        await seedListing(m);
        expect(await m.list({ start: 7, count: 5 })).toEqual({ total: 7, items: [] });
        expect(await m.list({ start: 100, count: 5 })).toEqual({ total: 7, items: [] });
      });

      h.test('list with count 0 returns only the total', async (m, tc) => {
        needWrite(tc, m);
        await seedListing(m);
        expect(await m.list({ start: 0, count: 0 })).toEqual({ total: 7, items: [] });
        expect(await m.list({ start: 3, count: 0, replicas: false })).toEqual({ total: 5, items: [] });
      });

      h.test('listSummaries (when implemented) answers the same pages as list, with the ObjectInfo fields', async (m, tc) => {
        needWrite(tc, m);
        requireCapability(tc, m.listSummaries !== undefined, 'listSummaries is not implemented (optional)');
        await seedListing(m);
        const queries: ObjectQuery[] = [
          { start: 0, count: 1000 },
          { start: 2, count: 3 },
          { start: 0, count: 0 },
          { start: 0, count: 1000, fromDate: instant(1), toDate: instant(86_400_001) },
          { start: 1, count: 2, formatId: 'text/csv' },
          { start: 0, count: 1000, identifier: 'series-1' },
          { start: 0, count: 1000, replicas: false },
          { start: 0, count: 1000, readableBy: ['public'] },
          { start: 1, count: 1000, readableBy: ['CN=nobody', 'public'] },
        ];
        for (const query of queries) {
          const full = await m.list(query);
          const summaries = await m.listSummaries!(query);
          expect(summaries.total, JSON.stringify(query)).toBe(full.total);
          expect(summaries.items, JSON.stringify(query)).toEqual(full.items.map(({ sysmeta: s }) => ({
            identifier: s.identifier, formatId: s.formatId, checksum: s.checksum, dateSysMetadataModified: s.dateSysMetadataModified, size: s.size,
          })));
        }
      });
    });
  });
}
