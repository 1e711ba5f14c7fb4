import { describe, expect, it } from 'vitest';
import type { ApiVersion } from '@memberkit/types';
import { expectError, expectIdentifierDocument } from './client.js';
import { VERSIONS, enc, plus, type NodeSuiteContext } from './context.js';

/**
 * Node suite group `update`: MNStorage.update, over HTTP for each of `versions`.
 */
export function registerUpdateTests(ctx: NodeSuiteContext, versions: readonly ApiVersion[] = VERSIONS): void {
  const { createOk, update, meta, expectAbsent, list, newPid } = ctx;
  for (const v of versions) {
    describe(`${v} MNStorage.update`, () => {
      it('obsoletes the old object: obsoletedBy set, serialVersion up, dateSysMetadataModified forward on both', async () => {
        const { pid: old } = await createOk(v, 'upd');
        const before = await meta(v, old);
        const next = newPid('upd-next');
        expectIdentifierDocument(await update(v, old, next), next);
        const after = await meta(v, old);
        const created = await meta(v, next);
        expect(after.obsoletedBy).toBe(next);
        expect(after.serialVersion!).toBeGreaterThan(before.serialVersion!);
        expect(after.dateSysMetadataModified!.getTime()).toBeGreaterThan(before.dateSysMetadataModified!.getTime());
        expect(created.obsoletes).toBe(old);
        expect(created.dateSysMetadataModified!.getTime()).toBeGreaterThan(before.dateSysMetadataModified!.getTime());
        const l = await list(v, { fromDate: plus(before.dateSysMetadataModified!, 1).toISOString() });
        expect(l.ids).toContain(old);
        expect(l.ids).toContain(next);
      });

      it('sysmeta.obsoletes other than pid -> 400 InvalidSystemMetadata 1300; nothing stored', async () => {
        const { pid: old } = await createOk(v, 'upd-obs');
        const next = newPid('upd-obs-next');
        expectError(await update(v, old, next, { obsoletesOverride: `${old}-x` }), 'InvalidSystemMetadata', 400, '1300');
        expectError(await update(v, old, next, { obsoletesOverride: null }), 'InvalidSystemMetadata', 400, '1300');
        await expectAbsent(next);
        expect((await meta(v, old)).obsoletedBy).toBeUndefined();
      });

      it('an already obsoleted object -> 400 InvalidSystemMetadata 1300', async () => {
        const { pid: old } = await createOk(v, 'upd-twice');
        expectIdentifierDocument(await update(v, old, `${old}-n1`), `${old}-n1`);
        expectError(await update(v, old, `${old}-n2`), 'InvalidSystemMetadata', 400, '1300');
        await expectAbsent(`${old}-n2`);
      });

      it('an archived object -> 400 InvalidRequest 1202', async () => {
        const { pid: old } = await createOk(v, 'upd-arch');
        expectIdentifierDocument(await ctx.http.put(`/${v}/archive/${enc(old)}`, { as: 'writer' }), old);
        expectError(await update(v, old, `${old}-n`), 'InvalidRequest', 400, '1202');
        await expectAbsent(`${old}-n`);
      });

      it('newPid already in use -> 409 IdentifierNotUnique 1220', async () => {
        const { pid: old } = await createOk(v, 'upd-taken');
        const { pid: taken } = await createOk(v, 'upd-taken-other');
        expectError(await update(v, old, taken), 'IdentifierNotUnique', 409, '1220');
        expect((await meta(v, old)).obsoletedBy).toBeUndefined();
      });

      it('a caller without write permission -> 401 NotAuthorized 1200; an unknown token -> 401 InvalidToken 1210', async () => {
        const { pid: old } = await createOk(v, 'upd-auth');
        expectError(await update(v, old, `${old}-n`, { as: 'other' }), 'NotAuthorized', 401, '1200');
        expectError(await update(v, old, `${old}-n`, { as: 'public' }), 'NotAuthorized', 401, '1200');
        expectError(await update(v, old, `${old}-n`, { as: { authorization: 'Bearer nope' } }), 'InvalidToken', 401, '1210');
        await expectAbsent(`${old}-n`);
      });

      it('a missing object -> 404 NotFound 1280', async () => {
        const missing = newPid('upd-missing');
        expectError(await update(v, missing, `${missing}-n`), 'NotFound', 404, '1280');
      });
    });
  }
}
