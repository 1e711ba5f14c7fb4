// PostgreSQL: a write group that adds rows to both listings (objects and events: a create with
// its event) locks and updates the two listings' buckets in two statements, not two each
// (applyPositionDeltasTogether). Two pools write such groups at once on buckets of 3 rows, so
// that buckets split under them; a change whose objects span buckets takes the bucket-by-bucket
// way for that listing. Every page of both listings must then be exact, kept by the writes and
// after a rebuild.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { buildEventRecord, buildObjectRecord, instant } from '@memberkit/testkit';
import { createSqlCatalogue, type SqlCatalogue } from '../src/index.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';

describe('position index of two listings written together (PostgreSQL)', () => {
  let db: FreshDatabase;
  let a: SqlCatalogue;
  let b: SqlCatalogue;

  beforeAll(async () => {
    db = await freshDatabase('postgres');
    [a, b] = [0, 1].map(() => createSqlCatalogue({ dialect: 'postgres', connection: db.connection, clock: 'proposed', positionBucketRows: 3 })) as [SqlCatalogue, SqlCatalogue];
    await a.open();
    await b.open();
  });
  afterAll(async () => {
    await a?.close();
    await b?.close();
    await db?.drop();
  });

  const created = (pid: string, ms: number) => ({
    insert: [buildObjectRecord(pid, { sysmeta: { dateSysMetadataModified: instant(ms), dateUploaded: instant(ms) } })],
    events: [buildEventRecord({ identifier: pid, event: 'create', dateLogged: instant(ms) })],
  });

  async function expectExact(label: string): Promise<void> {
    const { rows: objects } = await sql<{ pid: unknown }>`SELECT pid FROM mk_objects ORDER BY date_modified, pid`.execute(a.store.db);
    const { rows: log } = await sql<{ id: unknown }>`SELECT entry_id AS id FROM mk_events ORDER BY date_logged, entry_id`.execute(a.store.db);
    const pids = objects.map((r) => String(r.pid));
    const ids = log.map((r) => String(r.id));
    for (let start = 0; start <= pids.length; start += 2) {
      const page = await b.catalogue.list({ start, count: 4 });
      expect(page.total, `${label}: objects total`).toBe(pids.length);
      expect(page.items.map((r) => r.sysmeta.identifier), `${label}: objects @${start}`).toEqual(pids.slice(start, start + 4));
    }
    for (let start = 0; start <= ids.length; start += 2) {
      const page = await a.eventLog.query({ start, count: 4 });
      expect(page.total, `${label}: log total`).toBe(ids.length);
      expect(page.entries.map((e) => e.entryId), `${label}: log @${start}`).toEqual(ids.slice(start, start + 4));
    }
    const { rows: sums } = await sql<{ list: unknown; n: unknown; b: unknown }>`SELECT list, sum(n) AS n, count(*) AS b FROM mk_ranks GROUP BY list ORDER BY list`.execute(a.store.db);
    expect(sums.map((r) => [String(r.list), Number(r.n)]), `${label}: bucket sums`).toEqual([['events', ids.length], ['objects', pids.length]]);
    for (const r of sums) expect(Number(r.b), `${label}: ${String(r.list)} buckets were split`).toBeGreaterThan(5);
  }

  it('keeps both listings exact through splits, with two pools writing creates and their events at once', async () => {
    // Two pools, each sending bursts of creates with their events (one group, one transaction
    // per burst on each pool), at dates that interleave so both write into the same buckets.
    await Promise.all([a, b].map(async (s, w) => {
      for (let burst = 0; burst < 6; burst++) {
        await Promise.all(Array.from({ length: 5 }, (_, j) => {
          const i = burst * 10 + j * 2 + w;
          return s.catalogue.apply!(created(`t${String(i).padStart(3, '0')}`, 1000 + i));
        }));
      }
    }));
    await expectExact('kept by the writes');
    // Objects far apart in one change (their deltas span buckets: that listing goes bucket by
    // bucket) with events at the end of the log (that listing's usual write).
    await a.catalogue.apply!({
      insert: [0, 15, 31].map((i) => buildObjectRecord(`span${i}`, { sysmeta: { dateSysMetadataModified: instant(1000 + i * 2 + 1) } })),
      events: [0, 15, 31].map((i) => buildEventRecord({ identifier: `span${i}`, event: 'create', dateLogged: instant(5000 + i) })),
    });
    await expectExact('a change spanning buckets');
    await a.store.reindex();
    await expectExact('rebuilt');
  });
});
