// A scenario for stores that keep a position index of their listings (position-index.ts of
// @memberkit/types): two writers at once, rows inserted out of listing order, moved (a later
// date, the public flag flipped) and removed, then every page of several slices compared with
// the truth read straight from the store's tables. Stores run it with tiny buckets so that
// splits happen every few writes.
import { expect } from 'vitest';
import type { EventLogStore, CatalogueAdapter, ObjectQuery } from '@memberkit/types';
import { buildEventRecord, buildObjectRecord, instant } from './fixtures.js';

export interface PositionIndexParts {
  /** Two writers on the same database (two pools or connections), buckets of about 3 rows. */
  writers: [{ catalogue: CatalogueAdapter; eventLog: EventLogStore }, { catalogue: CatalogueAdapter; eventLog: EventLogStore }];
  /** The truth from the tables: objects in listing order, the PIDs `CN=mine` may read, entry ids in log order. */
  truth(): Promise<{ objects: Array<{ pid: string; date: number; pub: boolean }>; mine: Set<string>; log: string[]; buckets: number }>;
  /** Rebuilds the index from the rows. */
  reindex(): Promise<void>;
}

export async function exercisePositionIndex({ writers: [a, b], truth, reindex }: PositionIndexParts): Promise<void> {
  const pub = { allow: [{ subject: ['public'], permission: ['read' as const] }] };
  const pid = (i: number) => `r${String(i).padStart(3, '0')}`;
  const rec = (i: number) => buildObjectRecord(pid(i), {
    sysmeta: { dateSysMetadataModified: instant((i * 37) % 50), ...(i % 3 !== 0 ? { accessPolicy: pub } : {}), ...(i % 4 === 0 ? { rightsHolder: 'CN=mine' } : {}) },
  });
  // Two writers, one object per transaction, in an order that is not the listing order.
  await Promise.all([a, b].map(async (s, w) => {
    for (let i = w; i < 60; i += 2) await s.catalogue.apply!({ insert: [rec(i)] });
  }));
  // Moves and removes from both writers at once (never a row the other writer moves).
  await Promise.all([a, b].map(async (s, w) => {
    for (let i = w; i < 60; i += 7) {
      const old = (await s.catalogue.get(pid(i)))!.sysmeta;
      const sysmeta = { ...old, serialVersion: old.serialVersion + 1, dateSysMetadataModified: instant(60 + i), ...(old.accessPolicy ? { accessPolicy: undefined } : { accessPolicy: pub }) };
      await s.catalogue.apply!({ replace: [{ pid: pid(i), expectedSerialVersion: old.serialVersion, sysmeta }] });
    }
    for (let i = 3 + w; i < 60; i += 11) if (i % 7 > 1) await s.catalogue.apply!({ remove: [{ pid: pid(i) }] });
  }));
  await Promise.all([a, b].map((s, w) => Promise.all(Array.from({ length: 8 }, (_, k) =>
    s.eventLog.append(Array.from({ length: 4 }, (_, j) => buildEventRecord({ identifier: `e${w}-${k}-${j}`, dateLogged: instant((k * 4 + j) % 9) })))))));

  const check = async (label: string) => {
    const { objects, mine, log, buckets } = await truth();
    const at = (n: number) => instant(n).getTime();
    const slices: Array<[string, Omit<ObjectQuery, 'start' | 'count'>, string[]]> = [
      ['every object', {}, objects.map((o) => o.pid)],
      ['public', { readableBy: ['public'] }, objects.filter((o) => o.pub).map((o) => o.pid)],
      ['a date range', { fromDate: instant(10), toDate: instant(70) }, objects.filter((o) => o.date >= at(10) && o.date < at(70)).map((o) => o.pid)],
      ['public from a date', { readableBy: ['public'], fromDate: instant(25) }, objects.filter((o) => o.pub && o.date >= at(25)).map((o) => o.pid)],
      ['public and mine', { readableBy: ['public', 'CN=mine'] }, objects.filter((o) => o.pub || mine.has(o.pid)).map((o) => o.pid)],
      ['public and mine in a date range', { readableBy: ['CN=mine', 'public'], fromDate: instant(5), toDate: instant(80) },
        objects.filter((o) => (o.pub || mine.has(o.pid)) && o.date >= at(5) && o.date < at(80)).map((o) => o.pid)],
    ];
    expect(objects.some((o) => !o.pub && mine.has(o.pid)), 'some restricted objects are mine').toBe(true);
    for (const [what, filter, expected] of slices) {
      for (let start = 0; start <= expected.length; start++) {
        const page = await b.catalogue.list({ ...filter, start, count: 4 });
        expect(page.total, `${label}: ${what} total`).toBe(expected.length);
        expect(page.items.map((r) => r.sysmeta.identifier), `${label}: ${what} @${start}`).toEqual(expected.slice(start, start + 4));
        // The summaries' reading (on SQLite, from the listing indexes alone) finds the same page.
        const summaries = await b.catalogue.listSummaries?.({ ...filter, start, count: 4 });
        if (summaries) expect(summaries.items.map((s) => s.identifier), `${label}: ${what} summaries @${start}`).toEqual(expected.slice(start, start + 4));
      }
    }
    for (let start = 0; start <= log.length; start++) {
      const page = await a.eventLog.query({ start, count: 5 });
      expect(page.total).toBe(log.length);
      expect(page.entries.map((e) => e.entryId), `${label}: log @${start}`).toEqual(log.slice(start, start + 5));
    }
    expect(buckets, `${label}: buckets were split`).toBeGreaterThan(5);
  };
  await check('kept by writes');
  await reindex();
  await check('rebuilt');
}
