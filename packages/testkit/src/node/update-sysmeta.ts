import { describe, expect, it } from 'vitest';
import { type ApiVersion, type SystemMetadata } from '@memberkit/types';
import { expectError, expectIdentifierDocument, expectStatus, type Caller } from './client.js';
import { checksumOf, encodeSysmeta } from './sysmeta.js';
import { VERSIONS, DAY, enc, type NodeSuiteContext } from './context.js';

/**
 * Node suite group `update-sysmeta`: MNStorage.updateSystemMetadata (v2 only), over HTTP for each of `versions`.
 */
export function registerUpdateSystemMetadataTests(ctx: NodeSuiteContext, versions: readonly ApiVersion[] = VERSIONS): void {
  const { createOk, meta, list } = ctx;
  if (!versions.includes('v2')) return;
  describe('v2 MNStorage.updateSystemMetadata', () => {
    const put = (pid: string, sm: SystemMetadata, as: Caller = 'writer') =>
      ctx.http.put('/v2/meta', { as, multipart: [{ name: 'pid', value: pid }, { name: 'sysmeta', value: encodeSysmeta(sm, 'v2'), fileName: 'sysmeta.xml' }] });

    it('an accessPolicy change is effective immediately; serialVersion +1; dateSysMetadataModified forward', async () => {
      const { pid } = await createOk('v2', 'usm');
      expectStatus(await ctx.http.get(`/v2/object/${enc(pid)}`, { rawSuccess: true }), 200);
      const before = await meta('v2', pid, 'writer');
      const { accessPolicy: _drop, ...rest } = before;
      expectStatus(await put(pid, rest as SystemMetadata), 200);
      const after = await meta('v2', pid, 'writer');
      expect(after.serialVersion).toBe(before.serialVersion! + 1);
      expect(after.dateSysMetadataModified!.getTime()).toBeGreaterThan(before.dateSysMetadataModified!.getTime());
      expectError(await ctx.http.get(`/v2/object/${enc(pid)}`), 'NotAuthorized', 401, '1000');
      expectError(await ctx.http.get(`/v2/meta/${enc(pid)}`), 'NotAuthorized', 401, '1040');
      expectError(await ctx.http.get(`/v2/isAuthorized/${enc(pid)}?action=read`), 'NotAuthorized', 401, '1820');
      expect((await list('v2', { identifier: pid }, 'public')).total).toBe(0);
      // and back
      expectStatus(await put(pid, { ...after, accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] } }), 200);
      expectStatus(await ctx.http.get(`/v2/object/${enc(pid)}`, { rawSuccess: true }), 200);
    });

    it('immutable fields (size, checksum, submitter, dateUploaded) -> 400 InvalidSystemMetadata 4956', async () => {
      const { pid } = await createOk('v2', 'usm-imm');
      const sm = await meta('v2', pid, 'writer');
      const changes: Array<[string, Partial<SystemMetadata>]> = [
        ['size', { size: sm.size + 1 }],
        ['checksum', { checksum: { algorithm: 'SHA-1', value: checksumOf('different') } }],
        ['submitter', { submitter: 'CN=someone-else,DC=example,DC=org' }],
        ['dateUploaded', { dateUploaded: new Date(sm.dateUploaded!.getTime() - DAY) }],
      ];
      for (const [, change] of changes) {
        expectError(await put(pid, { ...sm, ...change }), 'InvalidSystemMetadata', 400, '4956');
      }
      expect((await meta('v2', pid)).serialVersion).toBe(sm.serialVersion);
    });

    it('archived cannot go back to false; no changePermission -> 401 NotAuthorized 4867', async () => {
      const { pid } = await createOk('v2', 'usm-arch');
      expectError(await put(pid, await meta('v2', pid), 'other'), 'NotAuthorized', 401, '4867');
      expectIdentifierDocument(await ctx.http.put(`/v2/archive/${enc(pid)}`, { as: 'writer' }), pid);
      const sm = await meta('v2', pid, 'writer');
      expect(sm.archived).toBe(true);
      expectError(await put(pid, { ...sm, archived: false }), 'InvalidSystemMetadata', 400, '4956');
      expect((await meta('v2', pid)).archived).toBe(true);
    });
  });
}
