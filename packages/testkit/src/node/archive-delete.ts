import { describe, expect, it } from 'vitest';
import type { ApiVersion } from '@memberkit/types';
import { expectError, expectIdentifierDocument, expectStatus } from './client.js';
import { VERSIONS, enc, type NodeSuiteContext } from './context.js';

/**
 * Node suite group `archive-delete`: MNStorage.archive and MNStorage.delete, over HTTP for each of `versions`.
 */
export function registerArchiveDeleteTests(ctx: NodeSuiteContext, versions: readonly ApiVersion[] = VERSIONS): void {
  const { createOk, meta, list, series, newPid } = ctx;
  for (const v of versions) {
    describe(`${v} MNStorage.archive and delete`, () => {
      it('archive: identifier answer, archived=true, still readable and listed; twice -> InvalidRequest', async () => {
        const { pid, bytes } = await createOk(v, 'arch');
        const before = await meta(v, pid);
        expectIdentifierDocument(await ctx.http.put(`/${v}/archive/${enc(pid)}`, { as: 'writer' }), pid);
        const after = await meta(v, pid);
        expect(after.archived).toBe(true);
        expect(after.serialVersion!).toBeGreaterThan(before.serialVersion!);
        expect(after.dateSysMetadataModified!.getTime()).toBeGreaterThan(before.dateSysMetadataModified!.getTime());
        const got = await ctx.http.get(`/${v}/object/${enc(pid)}`, { rawSuccess: true });
        expectStatus(got, 200);
        expect(Buffer.from(got.bytes).equals(Buffer.from(bytes))).toBe(true);
        expect((await list(v, { identifier: pid })).ids).toEqual([pid]);
        expectError(await ctx.http.put(`/${v}/archive/${enc(pid)}`, { as: 'writer' }), 'InvalidRequest', 400, '0');
      });

      it('archive: NotFound 2911, NotAuthorized 2910, InvalidToken 2913', async () => {
        const missing = newPid('arch-missing');
        expectError(await ctx.http.put(`/${v}/archive/${enc(missing)}`, { as: 'writer' }), 'NotFound', 404, '2911');
        const { pid } = await createOk(v, 'arch-auth');
        expectError(await ctx.http.put(`/${v}/archive/${enc(pid)}`, { as: 'other' }), 'NotAuthorized', 401, '2910');
        expectError(await ctx.http.put(`/${v}/archive/${enc(pid)}`), 'NotAuthorized', 401, '2910');
        expectError(await ctx.http.put(`/${v}/archive/${enc(pid)}`, { as: { authorization: 'Bearer nope' } }), 'InvalidToken', 401, '2913');
        expect((await meta(v, pid)).archived ?? false).toBe(false);
      });

      if (v === 'v2') {
        it('v2: archive by SID archives the head PID', async () => {
          const s = await series('arch-sid');
          expectIdentifierDocument(await ctx.http.put(`/v2/archive/${enc(s.sid)}`, { as: 'writer' }), s.head);
          expect((await meta('v2', s.head)).archived).toBe(true);
        });
      }

      it('delete: administrators only (writer -> 401 NotAuthorized 2900); gone afterwards; again -> 404 NotFound 2901', async () => {
        const { pid } = await createOk(v, 'del');
        expectError(await ctx.http.delete(`/${v}/object/${enc(pid)}`, { as: 'writer' }), 'NotAuthorized', 401, '2900');
        expectError(await ctx.http.delete(`/${v}/object/${enc(pid)}`), 'NotAuthorized', 401, '2900');
        expectStatus(await ctx.http.get(`/${v}/object/${enc(pid)}`, { rawSuccess: true }), 200);
        expectIdentifierDocument(await ctx.http.delete(`/${v}/object/${enc(pid)}`, { as: 'admin' }), pid);
        expectError(await ctx.http.get(`/${v}/object/${enc(pid)}`, { as: 'admin' }), 'NotFound', 404, '1020');
        expectError(await ctx.http.head(`/${v}/object/${enc(pid)}`, { as: 'admin' }), 'NotFound', 404, '1380', pid);
        expectError(await ctx.http.get(`/${v}/meta/${enc(pid)}`, { as: 'admin' }), 'NotFound', 404, '1060');
        expect((await list(v, { identifier: pid })).total).toBe(0);
        expectError(await ctx.http.delete(`/${v}/object/${enc(pid)}`, { as: 'admin' }), 'NotFound', 404, '2901');
      });
    });
  }
}
