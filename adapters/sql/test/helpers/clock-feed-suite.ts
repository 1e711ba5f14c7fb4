// One clock per catalogue, the change feed, events and write intents in the change's
// transaction: what makes several node processes on one catalogue exact (issue #19 item 8).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildEventRecord, buildObjectRecord } from '@memberkit/testkit';
import { createSqlCatalogue, type SqlCatalogue, type SqlDialectName } from '../../src/index.js';
import { freshDatabase, type FreshDatabase } from './databases.js';

export function runClockFeedSuite(dialect: SqlDialectName): void {
  let fresh: FreshDatabase;
  const open: SqlCatalogue[] = [];
  beforeAll(async () => {
    fresh = await freshDatabase(dialect);
  });
  afterAll(async () => {
    for (const s of open) await s.close();
    await fresh?.drop();
  });
  const pool = async (): Promise<SqlCatalogue> => {
    const s = createSqlCatalogue({ dialect, connection: fresh.connection });
    await s.open();
    open.push(s);
    return s;
  };

  describe(`catalogue clock and change feed: ${dialect}`, () => {
    it('stamps dates in commit order across pools, never backwards for an object, even from a lagging writer', async () => {
      const [a, b] = [await pool(), await pool()];
      const lagging = new Date(Date.now() - 3_600_000);
      const applied = await Promise.all(
        Array.from({ length: 12 }, (_, i) => (i % 2 ? a : b).catalogue.apply({ insert: [buildObjectRecord(`clock-${i}`, { sysmeta: { dateSysMetadataModified: i % 3 === 0 ? lagging : new Date() } })] })),
      );
      // Every stamp distinct; the feed positions order the same way as the dates.
      const byPos = applied.map((r, i) => ({ seq: r.seq!, date: r.dates.get(`clock-${i}`)!.getTime() })).sort((x, y) => x.seq - y.seq);
      for (let i = 1; i < byPos.length; i++) expect(byPos[i]!.date).toBeGreaterThan(byPos[i - 1]!.date);
      const stored = (await a.catalogue.get('clock-0'))!;
      expect(stored.sysmeta.dateSysMetadataModified.getTime()).toBe(applied[0]!.dates.get('clock-0')!.getTime());
      // A replace proposing an older date still moves the object's date forward.
      const r = await b.catalogue.apply({ replace: [{ pid: 'clock-0', expectedSerialVersion: 1, sysmeta: { ...stored.sysmeta, serialVersion: 2, dateSysMetadataModified: lagging } }] });
      expect(r.dates.get('clock-0')!.getTime()).toBeGreaterThan(stored.sysmeta.dateSysMetadataModified.getTime());
      expect((await a.catalogue.get('clock-0'))!.sysmeta.dateSysMetadataModified).toEqual(r.dates.get('clock-0'));
      // Listing by date is commit order: the newest listed is the last committed.
      const page = await a.catalogue.list({ start: 0, count: 100 });
      expect(page.items.at(-1)!.sysmeta.identifier).toBe('clock-0');
    });

    it('commits concurrent writes as groups: a failing write rolls back alone, with its events', async () => {
      const s = await pool();
      const event = (pid: string) => buildEventRecord({ identifier: pid, event: 'create' });
      await s.catalogue.apply({ insert: [buildObjectRecord('grp-taken')], events: [event('grp-taken')] });
      // 30 writes in one turn: on every dialect they share transactions; two of them collide.
      const pids = Array.from({ length: 30 }, (_, i) => (i === 7 || i === 19 ? 'grp-taken' : `grp-${i}`));
      const outcomes = await Promise.allSettled(pids.map((pid) => s.catalogue.apply({ insert: [buildObjectRecord(pid)], events: [event(pid)] })));
      outcomes.forEach((o, i) => {
        if (pids[i] === 'grp-taken') expect(o).toMatchObject({ status: 'rejected', reason: { kind: 'already-exists' } });
        else expect(o.status, `write ${i}`).toBe('fulfilled');
      });
      for (const pid of pids.filter((p) => p !== 'grp-taken')) expect((await s.catalogue.get(pid))?.sysmeta.identifier).toBe(pid);
      const logged = await s.eventLog.query({ idPrefix: 'grp-', start: 0, count: 100 });
      expect(logged.total).toBe(29);
      // Each write has its own stamp and feed position, in commit order.
      const seqs = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value.seq!] : []));
      expect(new Set(seqs).size).toBe(28);
    });

    it('feeds every change once, in commit order, with a head readable alone', async () => {
      const [a, b] = [await pool(), await pool()];
      const from = await a.catalogue.changeHead();
      await a.catalogue.apply({ insert: [buildObjectRecord('feed-x')] });
      await b.catalogue.apply({ remove: [{ pid: 'feed-x' }] });
      await b.catalogue.apply({ insert: [buildObjectRecord('feed-x')] });
      const page = await b.catalogue.changesSince(from, 100);
      expect(page.head).toBe(await a.catalogue.changeHead());
      expect(page.entries.map((e) => `${e.kind}:${e.pid}`)).toEqual(['insert:feed-x', 'remove:feed-x', 'insert:feed-x']);
      expect(page.entries.map((e) => e.seq)).toEqual([from + 1, from + 2, from + 3]);
      expect((await a.catalogue.changesSince(from + 1, 1)).entries.map((e) => e.seq)).toEqual([from + 2]);
    });

    it('writes the events of a change in its transaction: a refused change logs nothing', async () => {
      const s = await pool();
      expect(s.catalogue.logsEventsTo(s.eventLog)).toBe(true);
      expect(s.catalogue.logsEventsTo((await pool()).eventLog)).toBe(false);
      const event = (pid: string) => buildEventRecord({ identifier: pid, event: 'create' });
      await s.catalogue.apply({ insert: [buildObjectRecord('ev-1')], events: [event('ev-1')] });
      await expect(s.catalogue.apply({ insert: [buildObjectRecord('ev-1')], events: [event('ev-1')] })).rejects.toMatchObject({ kind: 'already-exists' });
      const logged = await s.eventLog.query({ idPrefix: 'ev-1', start: 0, count: 10 });
      expect(logged.total).toBe(1);
    });

    it('keeps write intents until the change that references the bytes settles them', async () => {
      const s = await pool();
      const settled = await s.catalogue.intend('int-1');
      const stranded = await s.catalogue.intend('int-2');
      await s.catalogue.apply({ insert: [buildObjectRecord('int-1', { storageKey: 'objects/int-1' })], intents: [settled] });
      const stale = await s.catalogue.staleIntents(new Date(Date.now() + 1000), 10);
      expect(stale.map((i) => i.id)).toEqual([stranded]);
      expect(stale[0]!.name).toBe('int-2');
      expect(await s.catalogue.referencesKey('objects/int-1')).toBe(true);
      expect(await s.catalogue.referencesKey('objects/int-2')).toBe(false);
      await s.catalogue.dropIntents([stranded]);
      expect(await s.catalogue.staleIntents(new Date(Date.now() + 1000), 10)).toEqual([]);
    });

    it('records an intent with identifiers to check only while none of them is in use as a PID or SID', async () => {
      const s = await pool();
      await s.catalogue.apply({ insert: [buildObjectRecord('chk-1', { sysmeta: { seriesId: 'chk-series' } })] });
      await expect(s.catalogue.intend('chk-2', ['chk-2', 'chk-1'])).rejects.toMatchObject({ kind: 'already-exists' });
      await expect(s.catalogue.intend('chk-3', ['chk-3', 'chk-series'])).rejects.toMatchObject({ kind: 'already-exists' });
      // a refused intent is not recorded
      expect(await s.catalogue.staleIntents(new Date(Date.now() + 1000), 10)).toEqual([]);
      const id = await s.catalogue.intend('chk-4', ['chk-4', 'chk-new-series']);
      expect((await s.catalogue.staleIntents(new Date(Date.now() + 1000), 10)).map((i) => i.id)).toEqual([id]);
      await s.catalogue.dropIntents([id]);
    });

    it('records intents asked for at once (one statement on PostgreSQL): only one whose identifier is in use is refused', async () => {
      const s = await pool();
      await s.catalogue.apply({ insert: [buildObjectRecord('many-taken')] });
      const names = Array.from({ length: 20 }, (_, i) => `many-${i}`);
      const outcomes = await Promise.allSettled(names.map((n, i) => s.catalogue.intend(n, i === 5 ? [n, 'many-taken'] : [n])));
      outcomes.forEach((o, i) => {
        if (i === 5) expect(o).toMatchObject({ status: 'rejected', reason: { kind: 'already-exists' } });
        else expect(o.status, `intent ${i}`).toBe('fulfilled');
      });
      const ids = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
      expect(new Set(ids).size).toBe(19);
      const stale = await s.catalogue.staleIntents(new Date(Date.now() + 1000), 100);
      expect(stale.map((i) => i.name).sort()).toEqual(names.filter((_, i) => i !== 5).sort());
      await s.catalogue.dropIntents(ids);
    });
  });
}
