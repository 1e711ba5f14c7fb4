import { describe, expect, it } from 'vitest';
import type { ApiVersion } from '@memberkit/types';
import { expectDocument, expectError, expectIdentifierDocument, expectStatus, TYPES_V1, type Caller } from './client.js';
import { VERSIONS, enc, type NodeSuiteContext } from './context.js';

/**
 * Node suite group `authorization`: MNAuthorization.isAuthorized, MNStorage.generateIdentifier, MNAuthorization.systemMetadataChanged, MNRead.synchronizationFailed, over HTTP for each of `versions`.
 */
export function registerAuthorizationTests(ctx: NodeSuiteContext, versions: readonly ApiVersion[] = VERSIONS): void {
  const { createOk, create, expectAbsent, series, newPid } = ctx;
  for (const v of versions) {
    describe(`${v} MNAuthorization.isAuthorized, generateIdentifier, systemMetadataChanged, synchronizationFailed`, () => {
      it('isAuthorized answers truthfully: 200 when allowed, 401 NotAuthorized 1820 (never 403) otherwise', async () => {
        const { pid: pub } = await createOk(v, 'authz-pub');
        const { pid: priv } = await createOk(v, 'authz-priv', { allow: [] });
        const check = async (id: string, action: string, as: Caller, allowed: boolean) => {
          const res = await ctx.http.get(`/${v}/isAuthorized/${enc(id)}?action=${action}`, { as });
          if (allowed) expectStatus(res, 200);
          else expectError(res, 'NotAuthorized', 401, '1820');
        };
        await check(pub, 'read', 'public', true);
        await check(pub, 'write', 'public', false);
        await check(pub, 'changePermission', 'public', false);
        await check(priv, 'read', 'public', false);
        for (const action of ['read', 'write', 'changePermission']) {
          await check(pub, action, 'writer', true);
          await check(priv, action, 'writer', true);
          await check(priv, action, 'admin', true);
          await check(priv, action, 'other', false);
        }
        await check(pub, 'read', 'other', true);
        await check(pub, 'write', 'other', false);
      });

      it(v === 'v2' ? 'v2: isAuthorized by SID answers for the head' : 'v1: isAuthorized by SID -> 404 NotFound 1800', async () => {
        const s = await series(`authz-sid-${v}`);
        const res = await ctx.http.get(`/${v}/isAuthorized/${enc(s.sid)}?action=write`, { as: 'writer' });
        if (v === 'v2') expectStatus(res, 200);
        else expectError(res, 'NotFound', 404, '1800');
        if (v === 'v2') expectError(await ctx.http.get(`/v2/isAuthorized/${enc(s.sid)}?action=write`, { as: 'other' }), 'NotAuthorized', 401, '1820');
      });

      it('isAuthorized: bad or missing action -> 400 InvalidRequest 1761; missing object -> 404 NotFound 1800', async () => {
        const { pid } = await createOk(v, 'authz-bad');
        expectError(await ctx.http.get(`/${v}/isAuthorized/${enc(pid)}?action=delete`, { as: 'writer' }), 'InvalidRequest', 400, '1761');
        expectError(await ctx.http.get(`/${v}/isAuthorized/${enc(pid)}`, { as: 'writer' }), 'InvalidRequest', 400, '1761');
        expectError(await ctx.http.get(`/${v}/isAuthorized/${enc(newPid('authz-missing'))}?action=read`, { as: 'writer' }), 'NotFound', 404, '1800');
      });

      it('generateIdentifier: UUID scheme -> an unused identifier; another scheme -> 400 InvalidRequest 2193', async () => {
        const res = await ctx.http.post(`/${v}/generate`, { as: 'writer', multipart: [{ name: 'scheme', value: 'UUID' }] });
        const doc = expectDocument(res, 'identifier', TYPES_V1);
        const id = String(doc.root['#text'] ?? '');
        expect(id).not.toBe('');
        expect(id).not.toMatch(/\s/);
        await expectAbsent(id);
        expectIdentifierDocument(await create(v, id), id);
        expectError(await ctx.http.post(`/${v}/generate`, { as: 'writer', multipart: [{ name: 'scheme', value: 'ARK' }] }), 'InvalidRequest', 400, '2193');
      });

      it('systemMetadataChanged: CN/admin -> 200 (pid or id part); others -> 401 NotAuthorized 1331', async () => {
        const { pid } = await createOk(v, 'dirty');
        const parts = (field: string) => [
          { name: field, value: pid },
          { name: 'serialVersion', value: '1' },
          { name: 'dateSysMetaLastModified', value: new Date().toISOString() },
        ];
        expectStatus(await ctx.http.post(`/${v}/dirtySystemMetadata`, { as: 'admin', multipart: parts('pid') }), 200);
        expectStatus(await ctx.http.post(`/${v}/dirtySystemMetadata`, { as: 'admin', multipart: parts('id') }), 200);
        expectError(await ctx.http.post(`/${v}/dirtySystemMetadata`, { as: 'writer', multipart: parts('pid') }), 'NotAuthorized', 401, '1331');
        expectError(await ctx.http.post(`/${v}/dirtySystemMetadata`, { multipart: parts('id') }), 'NotAuthorized', 401, '1331');
        expectError(await ctx.http.post(`/${v}/dirtySystemMetadata`, { as: 'admin', multipart: parts('pid').filter((p) => p.name !== 'serialVersion') }), 'InvalidRequest', 400, '1334');
        expectError(await ctx.http.post(`/${v}/dirtySystemMetadata`, { as: { authorization: 'Bearer nope' }, multipart: parts('pid') }), 'InvalidToken', 401, '1332');
      });

      it('synchronizationFailed: CN/admin -> 200; others -> 401 NotAuthorized 2162', async () => {
        const { pid } = await createOk(v, 'syncfail');
        const message = `<?xml version="1.0" encoding="UTF-8"?><error name="SynchronizationFailed" errorCode="500" detailCode="6001" identifier="${pid}"><description>test failure</description></error>`;
        const parts = [{ name: 'message', value: message, fileName: 'message.xml' }];
        expectStatus(await ctx.http.post(`/${v}/error`, { as: 'admin', multipart: parts }), 200);
        expectError(await ctx.http.post(`/${v}/error`, { as: 'writer', multipart: parts }), 'NotAuthorized', 401, '2162');
        expectError(await ctx.http.post(`/${v}/error`, { multipart: parts }), 'NotAuthorized', 401, '2162');
      });
    });
  }
}
