// The testkit suites and the adapter's own native-mode tests, for one dialect. Each dialect
// has its own test file (so they run in parallel) calling this with its name.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildEventRecord, buildObjectRecord, exercisePositionIndex, expectAdapterError, instant, runEventLogSuite, runJobStoreSuite, runCatalogueAdapterSuite } from '@memberkit/testkit';
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

  /** An opened native store on this file's database, emptied; it keeps the dates the suites give (clock 'proposed'). */
  async function openEmpty(): Promise<SqlCatalogue> {
    const store = createSqlCatalogue({ dialect, connection: fresh.connection, clock: 'proposed' });
    await store.open();
    await store.store.write('empty', async (trx) => {
      for (const table of MK_TABLES) await sql`DELETE FROM ${sql.table(table)}`.execute(trx);
    });
    await store.store.reindex();
    return store;
  }

  runCatalogueAdapterSuite(`native ${dialect} catalogue`, {
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
        expect(rows.map((r) => Number(r.version))).toEqual([1, 2, 3, 4, 5, 6]);
      } finally {
        await Promise.all(stores.map((s) => s.close()));
      }
    });

    if (dialect === 'sqlite') it('SQLite: the listing indexes hold every column a listObjects page shows (a page reads no row)', async () => {
      const s = await openEmpty();
      try {
        for (const index of ['mk_objects_list', 'mk_objects_public']) {
          const { rows } = await sql<{ name: string }>`SELECT name FROM pragma_index_info(${index})`.execute(s.store.db);
          expect(rows.map((r) => r.name), index).toEqual(expect.arrayContaining(['date_modified', 'pid', 'format_id', 'size', 'checksum_algorithm', 'checksum_value']));
        }
      } finally {
        await s.close();
      }
    });

    it('getMany reads the records of many PIDs at once, each as get reads it, absent ones left out', async () => {
      const s = await openEmpty();
      try {
        const records = Array.from({ length: 1203 }, (_, i) => buildObjectRecord(`m${String(i).padStart(4, '0')}`, { sysmeta: { dateSysMetadataModified: instant(i % 11) } }));
        await s.catalogue.apply({ insert: records });
        // Past one statement's 500 PIDs, with absent PIDs and a repeated one.
        const asked = [...records.slice(100, 1150).map((r) => r.sysmeta.identifier), 'absent-1', 'm0100', 'absent-2'];
        const found = await s.catalogue.getMany!(asked);
        expect(found.size).toBe(1050);
        expect(found.has('absent-1') || found.has('absent-2') || found.has('m0099') || found.has('m1150')).toBe(false);
        for (const pid of ['m0100', 'm0599', 'm0600', 'm1149']) expect(found.get(pid)).toEqual(await s.catalogue.get(pid));
        expect((await s.catalogue.getMany!([])).size).toBe(0);
      } finally {
        await s.close();
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
      const [a, b] = [0, 1].map(() => createSqlCatalogue({ dialect, connection: fresh.connection, positionBucketRows: 3 })) as [SqlCatalogue, SqlCatalogue];
      await a.open();
      await b.open();
      try {
        await exercisePositionIndex({
          writers: [a, b],
          reindex: () => a.store.reindex(),
          truth: async () => {
            const db = a.store.db;
            const { rows } = await sql<{ pid: unknown; d: unknown; p: unknown }>`SELECT pid, date_modified AS d, is_public AS p FROM mk_objects ORDER BY date_modified, pid`.execute(db);
            const { rows: mine } = await sql<{ pid: unknown }>`SELECT pid FROM mk_access WHERE subject = 'CN=mine'`.execute(db);
            const { rows: log } = await sql<{ id: unknown }>`SELECT entry_id AS id FROM mk_events ORDER BY date_logged, entry_id`.execute(db);
            const { rows: buckets } = await sql<{ n: unknown }>`SELECT count(*) AS n FROM mk_ranks WHERE list = 'objects'`.execute(db);
            return {
              objects: rows.map((r) => ({ pid: String(r.pid), date: Number(r.d), pub: Number(r.p) === 1 })),
              mine: new Set(mine.map((r) => String(r.pid))),
              log: log.map((r) => String(r.id)),
              buckets: Number(buckets[0]!.n),
            };
          },
        });
      } finally {
        await a.close();
        await b.close();
      }
    });

    it('creates sent at once that split buckets leave every page exact (rows written behind are in place before a split counts them)', async () => {
      await (await openEmpty()).close();
      const c = createSqlCatalogue({ dialect, connection: fresh.connection, positionBucketRows: 3 });
      await c.open();
      try {
        const pids = Array.from({ length: 40 }, (_, i) => `burst${String(i).padStart(3, '0')}`);
        // Ten one by one (buckets of 3 behind them), then thirty not awaited one by one: on a
        // server they form one group, which grows the last bucket past twice its size.
        for (const pid of pids.slice(0, 10)) await c.catalogue.apply({ insert: [buildObjectRecord(pid)] });
        await Promise.all(pids.slice(10).map((pid) => c.catalogue.apply({ insert: [buildObjectRecord(pid)] })));
        const { rows } = await sql<{ pid: unknown }>`SELECT pid FROM mk_objects ORDER BY date_modified, pid`.execute(c.store.db);
        const all = rows.map((r) => String(r.pid));
        expect(all).toHaveLength(40);
        for (let start = 0; start < 40; start++) {
          expect((await c.catalogue.list({ start, count: 4 })).items.map((r) => r.sysmeta.identifier), `page at ${start}`).toEqual(all.slice(start, start + 4));
        }
      } finally {
        await c.close();
      }
    });

    it('one bulk write splits the bucket it grew into buckets of the configured size (not a tail that keeps growing)', async () => {
      await (await openEmpty()).close();
      const c = createSqlCatalogue({ dialect, connection: fresh.connection, positionBucketRows: 3 });
      await c.open();
      try {
        const ids = (n: number, from: number) => Array.from({ length: n }, (_, i) => `bulk${String(from + i).padStart(3, '0')}`);
        await c.catalogue.apply({ insert: ids(50, 0).map((pid) => buildObjectRecord(pid)) });
        await c.catalogue.apply({ insert: ids(40, 50).map((pid) => buildObjectRecord(pid)) });
        const { rows } = await sql<{ n: unknown; b: unknown; total: unknown }>`SELECT max(n) AS n, count(*) AS b, sum(n) AS total FROM mk_ranks WHERE list = 'objects'`.execute(c.store.db);
        expect(Number(rows[0]!.total)).toBe(90);
        expect(Number(rows[0]!.n), 'largest bucket').toBeLessThanOrEqual(3);
        expect(Number(rows[0]!.b)).toBeGreaterThanOrEqual(30);
        const all = (await c.catalogue.list({ start: 0, count: 100 })).items.map((r) => r.sysmeta.identifier);
        expect(all).toHaveLength(90);
        for (const start of [0, 4, 44, 50, 86, 89]) {
          expect((await c.catalogue.list({ start, count: 5 })).items.map((r) => r.sysmeta.identifier), `page at ${start}`).toEqual(all.slice(start, start + 5));
        }
      } finally {
        await c.close();
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
        const claimed = (await Promise.all([a, b, a, b, a, b, a, b].map((s, i) => s.jobs.claim(['replicate'], `w${i}`, 60_000).then((j) => j && { ...j, worker: `w${i}` })))).filter((j) => j !== undefined);
        for (let i = 0; i < 10 && claimed.length < 6; i++) {
          const j = await (i % 2 ? a : b).jobs.claim(['replicate'], `seq${i}`, 60_000);
          if (j) claimed.push({ ...j, worker: `seq${i}` });
        }
        expect(claimed.map((j) => j!.id).sort()).toEqual([...ids].sort());
        // backoff: queued again later, failed for good after maxAttempts
        const job = claimed[0]!;
        expect(await b.jobs.failWithBackoff(job.id, job.worker, 'boom', { baseDelayMs: 60_000 })).toBe('queued');
        const retried = (await a.jobs.get(job.id))!;
        expect(retried).toMatchObject({ state: 'queued', lastError: 'boom', attempts: 1 });
        expect(retried.runAfter.getTime()).toBeGreaterThan(Date.now() + 50_000);
        expect(await a.jobs.failWithBackoff(claimed[1]!.id, claimed[1]!.worker, 'fatal', { maxAttempts: 1 })).toBe('failed');
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
