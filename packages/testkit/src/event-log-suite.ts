import { expect } from 'vitest';
import { AdapterError, type EventLogStore, type EventQuery, type EventRecord, type StoredEvent } from '@memberkit/types';
import { describeError } from './adapter-errors.js';
import { buildEventRecord, instant } from './fixtures.js';
import { defineSuite } from './harness.js';
import type { SuiteContext, SuiteOptions } from './suite-context.js';

/**
 * Compare two entryIds. The contract says "unique, increasing with insertion" of a string:
 * ids that are both decimal integers compare numerically ('9' < '10'), others by code unit.
 */
export function compareEntryIds(a: string, b: string): number {
  if (/^\d+$/.test(a) && /^\d+$/.test(b)) {
    const x = BigInt(a);
    const y = BigInt(b);
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return a < b ? -1 : a > b ? 1 : 0;
}

const strip = ({ entryId: _, ...rest }: StoredEvent): EventRecord => rest;

/**
 * The EventLogStore conformance suite (contract: `EventLogStore` in @memberkit/types).
 * `ctx.create()` MUST return an empty log. `readableBy` is only checked for its refusal
 * shape (kind 'unsupported'); its semantics need catalogue data and belong to the store's
 * own tests.
 */
export function runEventLogSuite(name: string, ctx: SuiteContext<EventLogStore>, options?: SuiteOptions): void {
  const all = (log: EventLogStore, query: Partial<EventQuery> = {}) => log.query({ start: 0, count: 10_000, ...query });
  const ids = (entries: StoredEvent[]) => entries.map((e) => e.identifier);

  async function expectEmpty(log: EventLogStore): Promise<void> {
    const page = await log.query({ start: 0, count: 0 });
    if (page.total !== 0) throw new Error(`testkit: SuiteContext.create() MUST return an empty event log (total is ${page.total})`);
  }

  /** Events for the filter tests, appended out of date order across two calls. */
  async function seedLog(log: EventLogStore): Promise<EventRecord[]> {
    await expectEmpty(log);
    const events = [
      buildEventRecord({ identifier: 'doi:10.5063/AA', event: 'create', dateLogged: instant(0) }),
      buildEventRecord({ identifier: 'doi:10.5063/AB', event: 'read', dateLogged: instant(1) }),
      buildEventRecord({ identifier: 'urn:uuid:1', event: 'read', dateLogged: instant(1000) }),
      buildEventRecord({ identifier: 'Doi:10.5063/AC', event: 'update', dateLogged: instant(1000) }),
      buildEventRecord({ identifier: 'ünï/cödé', event: 'delete', dateLogged: instant(2000) }),
      buildEventRecord({ identifier: '100%_done', event: 'replicate', dateLogged: instant(3000) }),
      buildEventRecord({ identifier: '100x_done', event: 'read', dateLogged: instant(3001) }),
    ];
    await log.append([events[4]!, events[2]!, events[0]!]);
    await log.append([events[6]!, events[1]!, events[3]!, events[5]!]);
    return events;
  }

  defineSuite<EventLogStore>(`EventLogStore conformance: ${name}`, ctx, options, (h) => {
    h.test('a fresh log is empty', async (log) => {
      expect(await log.query({ start: 0, count: 10 })).toEqual({ total: 0, entries: [] });
    });

    h.test('append then query returns every field', async (log) => {
      await expectEmpty(log);
      const event = buildEventRecord({ identifier: 'x'.repeat(800), subject: 'CN=Ünïcode Person,DC=org', userAgent: "ua'; DROP TABLE log; --", ipAddress: '2001:db8::1', event: 'synchronization_failed' });
      await log.append([event]);
      const { total, entries } = await all(log);
      expect(total).toBe(1);
      expect(entries).toHaveLength(1);
      expect(entries[0]!.entryId).toBeTypeOf('string');
      expect(entries[0]!.entryId.length).toBeGreaterThan(0);
      expect(strip(entries[0]!)).toEqual(event);
    });

    h.test('append of no events is a no-op', async (log) => {
      await expectEmpty(log);
      await log.append([]);
      expect((await log.query({ start: 0, count: 0 })).total).toBe(0);
    });

    h.test('query orders by dateLogged then entryId', async (log) => {
      const events = await seedLog(log);
      const { entries } = await all(log);
      expect(ids(entries)).toEqual(['doi:10.5063/AA', 'doi:10.5063/AB', 'urn:uuid:1', 'Doi:10.5063/AC', 'ünï/cödé', '100%_done', '100x_done']);
      for (const e of entries) expect(strip(e)).toEqual(events.find((x) => x.identifier === e.identifier));
      // equal dateLogged: insertion order, i.e. increasing entryId
      const same = entries.filter((e) => e.dateLogged.getTime() === instant(1000).getTime());
      expect(compareEntryIds(same[0]!.entryId, same[1]!.entryId)).toBeLessThan(0);
    });

    h.test('entryIds are unique and increase with insertion', async (log) => {
      await expectEmpty(log);
      // Same timestamp for all, so listing order is insertion order; more than 10 so that
      // string-versus-number comparison of decimal ids matters.
      for (let batch = 0; batch < 3; batch++) {
        await log.append(Array.from({ length: 5 }, (_, i) => buildEventRecord({ identifier: `e-${batch * 5 + i}`, dateLogged: instant() })));
      }
      const { entries } = await all(log);
      expect(ids(entries)).toEqual(Array.from({ length: 15 }, (_, i) => `e-${i}`));
      expect(new Set(entries.map((e) => e.entryId)).size, 'entryIds are unique').toBe(15);
      for (let i = 1; i < entries.length; i++) {
        expect(compareEntryIds(entries[i - 1]!.entryId, entries[i]!.entryId), `entryId ${entries[i - 1]!.entryId} < ${entries[i]!.entryId}`).toBeLessThan(0);
      }
    });

    h.test('fromDate is inclusive, toDate exclusive', async (log) => {
      await seedLog(log);
      expect(ids((await all(log, { fromDate: instant(1000) })).entries)).toEqual(['urn:uuid:1', 'Doi:10.5063/AC', 'ünï/cödé', '100%_done', '100x_done']);
      expect(ids((await all(log, { toDate: instant(1000) })).entries)).toEqual(['doi:10.5063/AA', 'doi:10.5063/AB']);
      expect(ids((await all(log, { toDate: instant(1) })).entries), '1 ms before').toEqual(['doi:10.5063/AA']);
      const window = await all(log, { fromDate: instant(1), toDate: instant(3000) });
      expect(ids(window.entries)).toEqual(['doi:10.5063/AB', 'urn:uuid:1', 'Doi:10.5063/AC', 'ünï/cödé']);
      expect(window.total).toBe(4);
    });

    h.test('events filters by event value', async (log) => {
      await seedLog(log);
      expect(ids((await all(log, { events: ['read'] })).entries)).toEqual(['doi:10.5063/AB', 'urn:uuid:1', '100x_done']);
      expect(ids((await all(log, { events: ['create', 'delete'] })).entries)).toEqual(['doi:10.5063/AA', 'ünï/cödé']);
      expect((await all(log, { events: ['archive'] })).total).toBe(0);
      expect((await all(log, { events: ['READ'] })).total, 'event values match exactly').toBe(0);
    });

    h.test('idPrefix matches identifiers starting with it', async (log) => {
      await seedLog(log);
      expect(ids((await all(log, { idPrefix: 'doi:10.5063/' })).entries)).toEqual(['doi:10.5063/AA', 'doi:10.5063/AB']);
      expect(ids((await all(log, { idPrefix: 'doi:10.5063/AA' })).entries), 'a whole identifier is its own prefix').toEqual(['doi:10.5063/AA']);
      expect(ids((await all(log, { idPrefix: 'Doi:' })).entries), 'the prefix is case-sensitive').toEqual(['Doi:10.5063/AC']);
      expect(ids((await all(log, { idPrefix: 'ünï/' })).entries), 'a unicode prefix').toEqual(['ünï/cödé']);
      expect(ids((await all(log, { idPrefix: '100%' })).entries), "'%' is literal").toEqual(['100%_done']);
      expect(ids((await all(log, { idPrefix: '100x_' })).entries), "'_' is literal").toEqual(['100x_done']);
      expect(ids((await all(log, { idPrefix: '1_0' })).entries), "'_' is not a wildcard").toEqual([]);
      expect((await all(log, { idPrefix: '%' })).total, "'%' is not a wildcard").toBe(0);
      expect((await all(log, { idPrefix: 'oi:' })).total, 'a prefix anchors at the start').toBe(0);
      expect((await all(log, { idPrefix: 'doi:10.5063/', events: ['read'] })).total, 'filters combine').toBe(1);
    });

    h.test('start and count page the ordered entries with the total', async (log) => {
      await seedLog(log);
      const whole = ids((await all(log)).entries);
      const pages = [await log.query({ start: 0, count: 3 }), await log.query({ start: 3, count: 3 }), await log.query({ start: 6, count: 3 })];
      for (const p of pages) expect(p.total).toBe(7);
      expect(pages.map((p) => p.entries.length)).toEqual([3, 3, 1]);
      expect(pages.flatMap((p) => ids(p.entries))).toEqual(whole);
      const filtered = await log.query({ events: ['read'], start: 1, count: 1 });
      expect(filtered.total, 'total counts the filtered entries').toBe(3);
      expect(ids(filtered.entries)).toEqual(['urn:uuid:1']);
    });

    h.test('count 0 returns only the total', async (log) => {
      await seedLog(log);
      expect(await log.query({ start: 0, count: 0 })).toEqual({ total: 7, entries: [] });
      expect(await log.query({ start: 2, count: 0, events: ['read'] })).toEqual({ total: 3, entries: [] });
    });

    h.test('start past the total returns no entries and the total', async (log) => {
      await seedLog(log);
      expect(await log.query({ start: 7, count: 10 })).toEqual({ total: 7, entries: [] });
      expect(await log.query({ start: 1000, count: 10 })).toEqual({ total: 7, entries: [] });
    });

    h.test('readableBy is evaluated or refused with unsupported', async (log) => {
      await seedLog(log);
      try {
        const page = await log.query({ readableBy: ['public'], start: 0, count: 100 });
        expect(page.total).toBeTypeOf('number');
        expect(Array.isArray(page.entries)).toBe(true);
        expect(page.entries.length).toBeLessThanOrEqual(page.total);
      } catch (e) {
        if (!AdapterError.is(e, 'unsupported')) expect.fail(`a store that cannot evaluate readableBy MUST throw AdapterError 'unsupported', got ${describeError(e)}`);
      }
    });
  });
}
