import { beforeAll, describe, expect, it } from 'vitest';
import { type ApiVersion, type SystemMetadata } from '@memberkit/types';
import { expectError } from './client.js';
import { VERSIONS, enc, microsecondDate, zonelessDate, plus, type NodeSuiteContext } from './context.js';

/**
 * Node suite group `list-objects`: MNRead.listObjects, over HTTP for each of `versions`.
 */
export function registerListObjectsTests(ctx: NodeSuiteContext, versions: readonly ApiVersion[] = VERSIONS): void {
  const { createOk, meta, list, series } = ctx;
  for (const v of versions) {
    describe(`${v} MNRead.listObjects`, () => {
      let objs: Array<{ pid: string; sm: SystemMetadata }> = [];
      let from: Date;
      let to: Date;

      beforeAll(async () => {
        objs = [];
        for (const formatId of ['text/csv', 'text/plain', 'text/csv']) {
          const { pid } = await createOk(v, `list-${formatId.replace('/', '_')}`, { formatId });
          objs.push({ pid, sm: await meta(v, pid) });
        }
        from = objs[0]!.sm.dateSysMetadataModified!;
        to = plus(objs[2]!.sm.dateSysMetadataModified!, 1);
        await ctx.collector.flush();
      });

      it('a date window holds exactly the objects modified in it, with their fields', async () => {
        const l = await list(v, { fromDate: from.toISOString(), toDate: to.toISOString() });
        expect(l.ids).toEqual(objs.map((o) => o.pid));
        expect(l.total).toBe(3);
        expect(l.start).toBe(0);
        for (const [i, item] of l.items.entries()) {
          const sm = objs[i]!.sm;
          expect(item.formatId).toBe(sm.formatId);
          expect(item.size).toBe(sm.size);
          expect(item.algorithm).toBe(sm.checksum.algorithm);
          expect(item.checksum).toBe(sm.checksum.value);
          expect(new Date(item.dateSysMetadataModified).getTime()).toBe(sm.dateSysMetadataModified!.getTime());
        }
      });

      it('fromDate is inclusive and toDate exclusive (boundary)', async () => {
        const d = objs.map((o) => o.sm.dateSysMetadataModified!);
        expect((await list(v, { fromDate: d[1]!.toISOString(), toDate: to.toISOString() })).ids).toEqual([objs[1]!.pid, objs[2]!.pid]);
        expect((await list(v, { fromDate: from.toISOString(), toDate: d[2]!.toISOString() })).ids).toEqual([objs[0]!.pid, objs[1]!.pid]);
      });

      it('fromDate/toDate with microseconds and +00:00, and without a zone (UTC)', async () => {
        const micro = await list(v, { fromDate: microsecondDate(from), toDate: microsecondDate(to) });
        expect(micro.ids).toEqual(objs.map((o) => o.pid));
        const zoneless = await list(v, { fromDate: zonelessDate(from), toDate: zonelessDate(to) });
        expect(zoneless.ids).toEqual(objs.map((o) => o.pid));
      });

      it('formatId, identifier and replicaStatus filters', async () => {
        const window = { fromDate: from.toISOString(), toDate: to.toISOString() };
        expect((await list(v, { ...window, formatId: 'text/plain' })).ids).toEqual([objs[1]!.pid]);
        expect((await list(v, { identifier: objs[2]!.pid })).ids).toEqual([objs[2]!.pid]);
        expect((await list(v, { ...window, replicaStatus: false })).ids).toEqual(objs.map((o) => o.pid));
        expect((await list(v, { ...window, replicaStatus: true })).ids).toEqual(objs.map((o) => o.pid));
      });

      if (v === 'v2') {
        it('identifier=SID lists every PID of the series', async () => {
          const s = await series('list-series');
          expect((await list('v2', { identifier: s.sid })).ids.sort()).toEqual([s.first, s.head].sort());
        });
      }

      it('start/count/total paging, count=0, start past the end, stable order', async () => {
        const window = { fromDate: from.toISOString(), toDate: to.toISOString() };
        const p1 = await list(v, { ...window, start: 0, count: 2 });
        expect([p1.start, p1.count, p1.total]).toEqual([0, 2, 3]);
        const p2 = await list(v, { ...window, start: 2, count: 2 });
        expect([p2.start, p2.count, p2.total]).toEqual([2, 1, 3]);
        expect([...p1.ids, ...p2.ids]).toEqual(objs.map((o) => o.pid));
        const zero = await list(v, { ...window, count: 0 });
        expect([zero.count, zero.total, zero.ids.length]).toEqual([0, 3, 0]);
        const past = await list(v, { ...window, start: 10, count: 5 });
        expect([past.start, past.count, past.total]).toEqual([10, 0, 3]);
        const again = await list(v, { ...window, start: 0, count: 2 });
        expect(again.ids).toEqual(p1.ids);
      });

      it('a bad date -> 400 InvalidRequest 1540', async () => {
        for (const bad of ['yesterday', '2024-13-45T99:00:00Z']) {
          expectError(await ctx.http.get(`/${v}/object?fromDate=${enc(bad)}`), 'InvalidRequest', 400, '1540');
        }
      });

      it('callers see only the objects they may read', async () => {
        const { pid } = await createOk(v, 'private-list', { allow: [] });
        expect((await list(v, { identifier: pid }, 'public')).total).toBe(0);
        expect((await list(v, { identifier: pid }, 'other')).total).toBe(0);
        expect((await list(v, { identifier: pid }, 'writer')).ids).toEqual([pid]);
        expect((await list(v, { identifier: pid }, 'admin')).ids).toEqual([pid]);
        expect((await list(v, { identifier: objs[0]!.pid }, 'public')).ids).toEqual([objs[0]!.pid]);
      });
    });
  }
}
