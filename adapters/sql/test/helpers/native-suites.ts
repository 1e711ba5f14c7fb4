// The testkit suites and the adapter's own native-mode tests, for one dialect. Each dialect
// has its own test file (so they run in parallel) calling this with its name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildEventRecord, buildObjectRecord, expectAdapterError, instant, runEventLogSuite, runJobStoreSuite, runMetadataAdapterSuite } from '@memberkit/testkit';
import { createSqlCatalogue, type SqlCatalogue, type SqlDialectName } from '../../src/index.js';
import { freshDatabase, MK_TABLES, type FreshDatabase } from './databases.js';

export function runNativeSuites(dialect: SqlDialectName): void {
  let fresh: FreshDatabase;
  const opened = new WeakMap<object, SqlCatalogue>();

  beforeAll(async () => {
    fresh = await freshDatabase(dialect);
  });
  afterAll(async () => {
    await fresh?.drop();
  });

  /** An opened native store on this file's database, emptied. */
  async function openEmpty(): Promise<SqlCatalogue> {
    const store = createSqlCatalogue({ dialect, connection: fresh.connection });
    await store.open();
    await store.store.write('empty', async (trx) => {
      for (const table of MK_TABLES) await sql`DELETE FROM ${sql.table(table)}`.execute(trx);
    });
    await store.store.reindex();
    return store;
  }

  runMetadataAdapterSuite(`native ${dialect} catalogue`, {
    async create() {
      const store = await openEmpty();
      opened.set(store.catalogue, store);
      return store.catalogue;
    },
    async destroy(catalogue) {
      await opened.get(catalogue)?.close();
    },
  });

  runEventLogSuite(`native ${dialect} event log`, {
    async create() {
      const store = await openEmpty();
      opened.set(store.eventLog, store);
      return store.eventLog;
    },
    async destroy(log) {
      await opened.get(log)?.close();
    },
  });

  runJobStoreSuite(`native ${dialect} jobs`, {
    async create() {
      const store = await openEmpty();
      opened.set(store.jobs, store);
      return store.jobs;
    },
    async destroy(jobs) {
      await opened.get(jobs)?.close();
    },
  });

  describe(`native ${dialect}: store behaviour`, () => {
    it('event log readableBy follows the catalogue access table', async () => {
      const s = await openEmpty();
      try {
        await s.catalogue.apply({
          insert: [
            buildObjectRecord('pub', { sysmeta: { rightsHolder: 'CN=owner', accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] } } }),
            buildObjectRecord('priv', { sysmeta: { rightsHolder: 'CN=owner' } }),
          ],
        });
        await s.eventLog.append([buildEventRecord({ identifier: 'pub' }), buildEventRecord({ identifier: 'priv' }), buildEventRecord({ identifier: 'gone' })]);
        const q = (readableBy?: string[]) => s.eventLog.query({ start: 0, count: 10, readableBy });
        expect((await q(['public'])).entries.map((e) => e.identifier)).toEqual(['pub']);
        expect((await q(['CN=owner'])).entries.map((e) => e.identifier).sort()).toEqual(['priv', 'pub']);
        expect((await q([])).total).toBe(0);
        expect((await q()).total).toBe(3);
      } finally {
        await s.close();
      }
    });

    it('two independent pools racing inserts of one pid: exactly one wins', async () => {
      const a = await openEmpty();
      const b = createSqlCatalogue({ dialect, connection: fresh.connection });
      await b.open();
      try {
        for (let round = 0; round < 5; round++) {
          const pid = `race-${round}`;
          const results = await Promise.allSettled(
            Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? a : b).catalogue.apply({ insert: [buildObjectRecord(pid, { sysmeta: { size: i } })] })),
          );
          expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
          for (const r of results) if (r.status === 'rejected') await expectAdapterError(Promise.reject(r.reason), 'already-exists');
          // a PID against a SID of the same value, across pools
          const sid = `race-sid-${round}`;
          const mixed = await Promise.allSettled([
            a.catalogue.apply({ insert: [buildObjectRecord(sid)] }),
            b.catalogue.apply({ insert: [buildObjectRecord(`holder-${round}`, { sysmeta: { seriesId: sid } })] }),
          ]);
          expect(mixed.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
        }
        expect((await b.catalogue.list({ start: 0, count: 0 })).total).toBe(10);
        // CAS across pools
        const results = await Promise.allSettled(
          [a, b, a, b].map((s, i) => s.catalogue.apply({ replace: [{ pid: 'race-0', expectedSerialVersion: 1, sysmeta: { ...buildObjectRecord('race-0').sysmeta, serialVersion: 2, size: i } }] })),
        );
        expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('migrations are versioned and run once when several stores open at the same time', async () => {
      const stores = Array.from({ length: 3 }, () => createSqlCatalogue({ dialect, connection: fresh.connection }));
      await Promise.all(stores.map((s) => s.open()));
      try {
        const { rows } = await sql<{ version: unknown }>`SELECT version FROM mk_migrations ORDER BY version`.execute(stores[0]!.store.db);
        expect(rows.map((r) => Number(r.version))).toEqual([1, 2]);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });

    it('deep pages and unfiltered totals stay exact after removes (counter and backwards walk)', async () => {
      const s = await openEmpty();
      try {
        const records = Array.from({ length: 40 }, (_, i) => buildObjectRecord(`p${String(i).padStart(3, '0')}`, { sysmeta: { dateSysMetadataModified: instant(i % 7) } }));
        await s.catalogue.apply({ insert: records });
        await s.catalogue.apply({ remove: [{ pid: 'p005' }, { pid: 'p017' }] });
        const all = (await s.catalogue.list({ start: 0, count: 100 })).items.map((r) => r.sysmeta.identifier);
        expect(all).toHaveLength(38);
        for (const start of [0, 5, 19, 20, 30, 37, 38]) {
          const page = await s.catalogue.list({ start, count: 6 });
          expect(page.total).toBe(38);
          expect(page.items.map((r) => r.sysmeta.identifier)).toEqual(all.slice(start, start + 6));
        }
        const filtered = (await s.catalogue.list({ start: 0, count: 100, fromDate: instant(3) })).items.map((r) => r.sysmeta.identifier);
        for (const start of [0, 10, 15]) {
          expect((await s.catalogue.list({ start, count: 4, fromDate: instant(3) })).items.map((r) => r.sysmeta.identifier)).toEqual(filtered.slice(start, start + 4));
        }
        await s.eventLog.append(Array.from({ length: 30 }, (_, i) => buildEventRecord({ identifier: `e${i}`, dateLogged: instant(i % 4) })));
        const log = (await s.eventLog.query({ start: 0, count: 100 })).entries.map((e) => e.entryId);
        for (const start of [0, 14, 15, 25]) {
          const page = await s.eventLog.query({ start, count: 5 });
          expect(page.total).toBe(30);
          expect(page.entries.map((e) => e.entryId)).toEqual(log.slice(start, start + 5));
        }
      } finally {
        await s.close();
      }
    });

    it('the position index stays exact through splits, moved and removed rows, and two writers at once', async () => {
      await (await openEmpty()).close();
      // Buckets of 3 rows: every few writes split one, and deep pages start past the first.
      const [a, b] = [0, 1].map(() => createSqlCatalogue({ dialect, connection: fresh.connection, rankBucketRows: 3 })) as [SqlCatalogue, SqlCatalogue];
      await a.open();
      await b.open();
      try {
        const pub = { allow: [{ subject: ['public'], permission: ['read' as const] }] };
        const pid = (i: number) => `r${String(i).padStart(3, '0')}`;
        const rec = (i: number) => buildObjectRecord(pid(i), {
          sysmeta: { dateSysMetadataModified: instant((i * 37) % 50), ...(i % 3 !== 0 ? { accessPolicy: pub } : {}), ...(i % 4 === 0 ? { rightsHolder: 'CN=mine' } : {}) },
        });
        // Two writers, one object per transaction, in an order that is not the listing order.
        await Promise.all([a, b].map(async (s, w) => {
          for (let i = w; i < 60; i += 2) await s.catalogue.apply({ insert: [rec(i)] });
        }));
        // Moves (a later date, the public flag flipped) and removes, from both writers at once.
        await Promise.all([a, b].map(async (s, w) => {
          for (let i = w; i < 60; i += 7) {
            const old = (await s.catalogue.get(pid(i)))!.sysmeta;
            const sysmeta = { ...old, serialVersion: old.serialVersion + 1, dateSysMetadataModified: instant(60 + i), ...(old.accessPolicy ? { accessPolicy: undefined } : { accessPolicy: pub }) };
            await s.catalogue.apply({ replace: [{ pid: pid(i), expectedSerialVersion: old.serialVersion, sysmeta }] });
          }
          for (let i = 3 + w; i < 60; i += 11) if (i % 7 > 1) await s.catalogue.apply({ remove: [{ pid: pid(i) }] }); // never one the other writer moves
        }));
        await Promise.all([a, b].map((s, w) => Promise.all(Array.from({ length: 8 }, (_, k) =>
          s.eventLog.append(Array.from({ length: 4 }, (_, j) => buildEventRecord({ identifier: `e${w}-${k}-${j}`, dateLogged: instant((k * 4 + j) % 9) })))))));

        const check = async (label: string) => {
          const { rows } = await sql<{ pid: unknown; date_modified: unknown; is_public: unknown }>`SELECT pid, date_modified, is_public FROM mk_objects
            ORDER BY date_modified, pid`.execute(a.store.db);
          const { rows: owned } = await sql<{ pid: unknown }>`SELECT pid FROM mk_access WHERE subject = 'CN=mine'`.execute(a.store.db);
          const mine = new Set(owned.map((r) => String(r.pid)));
          const objects = rows.map((r) => ({ pid: String(r.pid), date: Number(r.date_modified), pub: Number(r.is_public) === 1 }));
          const slices: Array<[string, Parameters<typeof a.catalogue.list>[0] extends infer Q ? Omit<Q & object, 'start' | 'count'> : never, string[]]> = [
            ['every object', {}, objects.map((o) => o.pid)],
            ['public', { readableBy: ['public'] }, objects.filter((o) => o.pub).map((o) => o.pid)],
            ['a date range', { fromDate: instant(10), toDate: instant(70) }, objects.filter((o) => o.date >= instant(10).getTime() && o.date < instant(70).getTime()).map((o) => o.pid)],
            ['public from a date', { readableBy: ['public'], fromDate: instant(25) }, objects.filter((o) => o.pub && o.date >= instant(25).getTime()).map((o) => o.pid)],
            ['public and mine', { readableBy: ['public', 'CN=mine'] }, objects.filter((o) => o.pub || mine.has(o.pid)).map((o) => o.pid)],
            ['public and mine in a date range', { readableBy: ['CN=mine', 'public'], fromDate: instant(5), toDate: instant(80) },
              objects.filter((o) => (o.pub || mine.has(o.pid)) && o.date >= instant(5).getTime() && o.date < instant(80).getTime()).map((o) => o.pid)],
          ];
          expect(objects.some((o) => !o.pub && mine.has(o.pid)), 'some restricted objects are mine').toBe(true);
          for (const [what, filter, expected] of slices) {
            for (let start = 0; start <= expected.length; start++) {
              const page = await b.catalogue.list({ ...filter, start, count: 4 });
              expect(page.total, `${label}: ${what} total`).toBe(expected.length);
              expect(page.items.map((r) => r.sysmeta.identifier), `${label}: ${what} @${start}`).toEqual(expected.slice(start, start + 4));
            }
          }
          const { rows: events } = await sql<{ entry_id: unknown }>`SELECT entry_id FROM mk_events ORDER BY date_logged, entry_id`.execute(a.store.db);
          const log = events.map((e) => String(e.entry_id));
          for (let start = 0; start <= log.length; start++) {
            const page = await a.eventLog.query({ start, count: 5 });
            expect(page.total).toBe(log.length);
            expect(page.entries.map((e) => e.entryId), `${label}: log @${start}`).toEqual(log.slice(start, start + 5));
          }
          const { rows: buckets } = await sql<{ n: unknown }>`SELECT count(*) AS n FROM mk_ranks WHERE list = 'objects'`.execute(a.store.db);
          expect(Number(buckets[0]!.n), `${label}: buckets were split`).toBeGreaterThan(5);
        };
        await check('kept by writes');
        await a.store.reindex();
        await check('rebuilt');
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('jobs across two pools: each claimed once, leases expire, backoff', async () => {
      const a = await openEmpty();
      const b = createSqlCatalogue({ dialect, connection: fresh.connection });
      await b.open();
      try {
        const ids = await Promise.all(Array.from({ length: 6 }, (_, i) => a.jobs.enqueue('replicate', { pid: `p${i}` })));
        // concurrent claimers on two pools never get one job twice; a claimer may come back
        // empty while others hold rows, so drain the rest sequentially
        const claimed = (await Promise.all([a, b, a, b, a, b, a, b].map((s, i) => s.jobs.claim(['replicate'], `w${i}`, 60_000)))).filter((j) => j !== undefined);
        for (let i = 0; i < 10 && claimed.length < 6; i++) {
          const j = await (i % 2 ? a : b).jobs.claim(['replicate'], `seq${i}`, 60_000);
          if (j) claimed.push(j);
        }
        expect(claimed.map((j) => j!.id).sort()).toEqual([...ids].sort());
        // backoff: queued again later, failed for good after maxAttempts
        const job = claimed[0]!;
        expect(await b.jobs.failWithBackoff(job.id, 'boom', { baseDelayMs: 60_000 })).toBe('queued');
        const retried = (await a.jobs.get(job.id))!;
        expect(retried).toMatchObject({ state: 'queued', lastError: 'boom', attempts: 1 });
        expect(retried.runAfter.getTime()).toBeGreaterThan(Date.now() + 50_000);
        expect(await a.jobs.failWithBackoff(claimed[1]!.id, 'fatal', { maxAttempts: 1 })).toBe('failed');
        // a lease that ran out is claimed by a worker of the other pool; the old holder cannot renew
        const short = await a.jobs.enqueue('short', null);
        expect((await a.jobs.claim(['short'], 'dying', 1))?.id).toBe(short);
        await new Promise((r) => setTimeout(r, 20));
        expect(await b.jobs.claim(['short'], 'rescuer', 60_000)).toMatchObject({ id: short, attempts: 2 });
        await expectAdapterError(a.jobs.renew(short, 'dying', 60_000), 'conflict');
        await b.jobs.renew(short, 'rescuer', 60_000);
        // dedupe under concurrent enqueues on two pools: one live job
        const keyed = await Promise.all([a, b, a, b].map((s) => s.jobs.enqueue('refresh', {}, { dedupeKey: 'pid:x' })));
        expect(new Set(keyed).size).toBe(1);
      } finally {
        await a.close();
        await b.close();
      }
    });
  });
}
