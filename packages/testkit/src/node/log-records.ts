import { beforeAll, describe, expect, it } from 'vitest';
import type { ApiVersion } from '@memberkit/types';
import { expectError, expectIdentifierDocument, expectStatus, SUITE_USER_AGENT } from './client.js';
import { VERSIONS, enc, microsecondDate, zonelessDate, plus, type NodeSuiteContext, type CreateOptions } from './context.js';

/**
 * Node suite group `log-records`: MNCore.getLogRecords, over HTTP for each of `versions`.
 */
export function registerLogRecordsTests(ctx: NodeSuiteContext, versions: readonly ApiVersion[] = VERSIONS): void {
  const { create, update, logs, idFilterParam } = ctx;
  for (const v of versions) {
    describe(`${v} MNCore.getLogRecords`, () => {
      const prefix = () => `${ctx.run}-log${v}-`;
      let a = '';
      let b = '';
      let c = '';
      let q = '';

      beforeAll(async () => {
        const mk = async (label: string, o: CreateOptions = {}) => {
          const pid = `${prefix()}${label}`;
          expectIdentifierDocument(await create(v, pid, o), pid);
          return pid;
        };
        a = await mk('a');
        expectStatus(await ctx.http.get(`/${v}/object/${enc(a)}`, { as: 'writer', rawSuccess: true }), 200);
        b = `${prefix()}b`;
        expectIdentifierDocument(await update(v, a, b), b);
        expectIdentifierDocument(await ctx.http.put(`/${v}/archive/${enc(b)}`, { as: 'writer' }), b);
        c = await mk('c');
        expectIdentifierDocument(await ctx.http.delete(`/${v}/object/${enc(c)}`, { as: 'admin' }), c);
        q = await mk('q', { allow: [] });
        expectStatus(await ctx.http.get(`/${v}/object/${enc(q)}`, { as: 'writer', rawSuccess: true }), 200);
        await ctx.collector.flush();
      });

      it('records create, read, update, archive (v2) and delete with subject, ipAddress, userAgent, nodeIdentifier', async () => {
        const log = await logs(v, { [idFilterParam(v)]: prefix() });
        const has = (pid: string, event: string) => log.entries.some((e) => e.identifier === pid && e.event === event);
        expect(has(a, 'create')).toBe(true);
        expect(has(a, 'read')).toBe(true);
        expect(has(b, 'update')).toBe(true);
        expect(has(c, 'create')).toBe(true);
        expect(has(c, 'delete')).toBe(true);
        if (v === 'v2') expect(has(b, 'archive')).toBe(true);
        else for (const e of log.entries) expect(['create', 'read', 'update', 'delete', 'replicate', 'synchronization_failed', 'replication_failed']).toContain(e.event);
        for (const e of log.entries) {
          expect(e.identifier.startsWith(prefix()), `${v === 'v1' ? 'pidFilter' : 'idFilter'} filters by prefix`).toBe(true);
          expect(e.ipAddress).not.toBe('');
          expect(e.userAgent).toBe(SUITE_USER_AGENT);
          expect(e.nodeIdentifier).toBe(ctx.target.nodeId);
          expect(e.entryId).not.toBe('');
          expect(Number.isNaN(Date.parse(e.dateLogged))).toBe(false);
        }
        expect(log.entries.find((e) => e.identifier === a && e.event === 'create')?.subject).toBe(ctx.target.writerSubject);
        expect(log.total).toBe(log.entries.length);
      });

      it('event, fromDate/toDate, start/count/total', async () => {
        const all = await logs(v, { [idFilterParam(v)]: prefix() });
        const reads = await logs(v, { [idFilterParam(v)]: prefix(), event: 'read' });
        expect(reads.entries.length).toBeGreaterThan(0);
        for (const e of reads.entries) expect(e.event).toBe('read');
        const creates = await logs(v, { [idFilterParam(v)]: prefix(), event: 'create' });
        expect(creates.entries.map((e) => e.identifier).sort()).toEqual([a, c, q].sort());

        const times = all.entries.map((e) => Date.parse(e.dateLogged));
        const min = new Date(Math.min(...times));
        const max = new Date(Math.max(...times));
        expect((await logs(v, { [idFilterParam(v)]: prefix(), fromDate: min.toISOString(), toDate: plus(max, 1).toISOString() })).total).toBe(all.total);
        expect((await logs(v, { [idFilterParam(v)]: prefix(), fromDate: plus(max, 1).toISOString() })).total).toBe(0);
        expect((await logs(v, { [idFilterParam(v)]: prefix(), toDate: min.toISOString() })).total).toBe(0);
        expect((await logs(v, { [idFilterParam(v)]: prefix(), fromDate: microsecondDate(min), toDate: zonelessDate(plus(max, 1)) })).total).toBe(all.total);

        const page = await logs(v, { [idFilterParam(v)]: prefix(), start: 1, count: 2 });
        expect([page.start, page.count, page.total]).toEqual([1, 2, all.total]);
        expect(page.entries.map((e) => e.entryId)).toEqual(all.entries.slice(1, 3).map((e) => e.entryId));
        const zero = await logs(v, { [idFilterParam(v)]: prefix(), count: 0 });
        expect([zero.count, zero.total]).toEqual([0, all.total]);
        const past = await logs(v, { [idFilterParam(v)]: prefix(), start: all.total + 5 });
        expect([past.count, past.total]).toEqual([0, all.total]);
        expectError(await ctx.http.get(`/${v}/log?fromDate=not-a-date`, { as: 'admin' }), 'InvalidRequest', 400, '1480');
      });

      if (v === 'v1') {
        it('v1: an event outside the v1 Event enumeration -> 400 InvalidRequest 1480', async () => {
          expectError(await ctx.http.get(`/v1/log?event=archive`, { as: 'admin' }), 'InvalidRequest', 400, '1480');
          expectError(await ctx.http.get(`/v1/log?event=nonsense`, { as: 'admin' }), 'InvalidRequest', 400, '1480');
        });
      }

      if (v === 'v2') {
        it('a page longer than 32 K characters (sent in parts) arrives whole: its Content-Length, every entry, schema-valid', async () => {
          const reads = 120;
          for (let i = 0; i < reads; i++) expectStatus(await ctx.http.get(`/${v}/object/${enc(a)}`, { as: 'writer', rawSuccess: true }), 200);
          const res = await ctx.http.get(`/${v}/log?${idFilterParam(v)}=${enc(a)}&event=read&count=1000`, { as: 'admin' });
          expectStatus(res, 200);
          expect(res.text.length).toBeGreaterThan(40 * 1024);
          expect(Number(res.headers.get('content-length'))).toBe(res.bytes.byteLength);
          expect(res.text.endsWith('</d1:log>')).toBe(true);
          const log = await logs(v, { [idFilterParam(v)]: a, event: 'read' });
          expect(log.entries.length).toBe(reads + 1);
          expect(new Set(log.entries.map((e) => e.entryId)).size).toBe(reads + 1);
        });
      }

      it('callers see only entries of objects they may read', async () => {
        for (const as of ['public', 'other'] as const) {
          const log = await logs(v, { [idFilterParam(v)]: prefix() }, as);
          expect(log.entries.some((e) => e.identifier === q), `${as} must not see the private object's entries`).toBe(false);
          expect(log.entries.some((e) => e.identifier === a), `${as} sees the public object's entries`).toBe(true);
          expect(log.total).toBe(log.entries.length);
        }
        const writer = await logs(v, { [idFilterParam(v)]: prefix() }, 'writer');
        expect(writer.entries.some((e) => e.identifier === q)).toBe(true);
      });
    });
  }
}
