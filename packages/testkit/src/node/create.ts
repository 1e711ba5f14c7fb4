import { describe, expect, it } from 'vitest';
import type { ApiVersion } from '@memberkit/types';
import { expectError, expectIdentifierDocument, expectStatus, TYPES_V1 } from './client.js';
import { createParts } from './multipart.js';
import { checksumOf, encodeSysmeta } from './sysmeta.js';
import { VERSIONS, enc, type NodeSuiteContext, type CreateOptions } from './context.js';

/**
 * Node suite group `create`: MNStorage.create, over HTTP for each of `versions`.
 */
export function registerCreateTests(ctx: NodeSuiteContext, versions: readonly ApiVersion[] = VERSIONS): void {
  const { sysmetaFor, createOk, create, meta, expectAbsent, newPid } = ctx;
  for (const v of versions) {
    describe(`${v} MNStorage.create`, () => {
      it('creates, answers the identifier document (or bare text for Accept: text/plain), fills node-set fields', async () => {
        const { pid, bytes } = await createOk(v, 'create');
        const sm = await meta(v, pid);
        expect(sm.identifier).toBe(pid);
        expect(sm.size).toBe(bytes.byteLength);
        expect(sm.submitter).toBe(ctx.target.writerSubject);
        expect(sm.serialVersion).toBeGreaterThanOrEqual(1);
        expect(sm.dateUploaded).toBeInstanceOf(Date);
        expect(sm.dateSysMetadataModified).toBeInstanceOf(Date);
        expect(sm.obsoletes).toBeUndefined();

        const pid2 = newPid('create-plain');
        const res = await create(v, pid2, { headers: { Accept: 'text/plain' } });
        expectStatus(res, 200);
        expect(res.text).toBe(pid2);
      });

      it('duplicate pid -> 409 IdentifierNotUnique 1120; the original is untouched', async () => {
        const { pid, bytes } = await createOk(v, 'dup');
        expectError(await create(v, pid, { bytes: 'other bytes' }), 'IdentifierNotUnique', 409, '1120');
        const got = await ctx.http.get(`/${v}/object/${enc(pid)}`, { as: 'writer', rawSuccess: true });
        expectStatus(got, 200);
        expect(Buffer.from(got.bytes).equals(Buffer.from(bytes))).toBe(true);
      });

      it('a pid already used as a SID -> 409 IdentifierNotUnique 1120', async () => {
        const sid = newPid('used-sid');
        await createOk('v2', 'sid-holder', { seriesId: sid });
        expectError(await create(v, sid), 'IdentifierNotUnique', 409, '1120');
      });

      const invalid: Array<[string, (pid: string, bytes: string) => Partial<CreateOptions>]> = [
        ['identifier differs from pid', (pid) => ({ overrides: { identifier: `${pid}-other` } })],
        ['size differs from the bytes', (_p, bytes) => ({ overrides: { size: bytes.length + 1 } })],
        ['checksum differs from the bytes', () => ({ overrides: { checksum: { algorithm: 'SHA-1', value: checksumOf('something else') } } })],
        ['unknown formatId', () => ({ formatId: 'application/x-memberkit-no-such-format' })],
        ['obsoletes set', (pid) => ({ obsoletes: `${pid}-older` })],
        ['obsoletedBy set', (pid) => ({ obsoletedBy: `${pid}-newer` })],
      ];
      for (const [what, opts] of invalid) {
        it(`${what} -> 400 InvalidSystemMetadata 1180, nothing stored`, async () => {
          const pid = newPid('invalid');
          const bytes = `a,b\n1,2\n${pid}\n`;
          expectError(await create(v, pid, { bytes, ...opts(pid, bytes) }), 'InvalidSystemMetadata', 400, '1180');
          await expectAbsent(pid);
        });
      }

      it('malformed sysmeta XML -> 400 InvalidSystemMetadata 1180, nothing stored', async () => {
        const pid = newPid('malformed');
        for (const xml of ['<systemMetadata><identifier>', 'not xml at all', `<d1:systemMetadata xmlns:d1="${TYPES_V1}"><identifier>${pid}</identifier></d1:systemMetadata>`]) {
          expectError(await create(v, pid, { sysmetaXml: xml }), 'InvalidSystemMetadata', 400, '1180');
        }
        await expectAbsent(pid);
      });

      it('missing parts or a non-multipart body -> 400 InvalidRequest 1102, nothing stored', async () => {
        const pid = newPid('parts');
        const bytes = 'x,y\n';
        const xml = encodeSysmeta(sysmetaFor(v, pid, bytes), v);
        const all = createParts(pid, bytes, xml);
        for (const missing of ['pid', 'object', 'sysmeta']) {
          expectError(await create(v, pid, { parts: all.filter((p) => p.name !== missing) }), 'InvalidRequest', 400, '1102');
        }
        expectError(await ctx.http.post(`/${v}/object`, { as: 'writer', body: '{"pid":"x"}', headers: { 'Content-Type': 'application/json' } }), 'InvalidRequest', 400, '1102');
        await expectAbsent(pid);
      });

      it('sysmeta with an ns1: prefixed root and unqualified children is accepted', async () => {
        const pid = newPid('ns1-sysmeta');
        const bytes = 'n,s\n';
        const xml = encodeSysmeta(sysmetaFor(v, pid, bytes), v);
        const m = /<([\w.-]+):systemMetadata\b/.exec(xml);
        const ns1 = m ? xml.replaceAll(`<${m[1]}:`, '<ns1:').replaceAll(`</${m[1]}:`, '</ns1:').replaceAll(`xmlns:${m[1]}=`, 'xmlns:ns1=') : xml;
        expect(ns1).toContain('<ns1:systemMetadata');
        expectIdentifierDocument(await create(v, pid, { bytes, sysmetaXml: ns1 }), pid);
      });

      it('sysmeta as a plain field (not a file part) is accepted', async () => {
        const pid = newPid('field-sysmeta');
        const bytes = 'p,q\n';
        const parts = createParts(pid, bytes, encodeSysmeta(sysmetaFor(v, pid, bytes), v)).map((p) => (p.name === 'sysmeta' ? { name: p.name, value: p.value } : p));
        expectIdentifierDocument(await create(v, pid, { parts }), pid);
      });

      it('no token -> 401 NotAuthorized 1100; unknown token -> 401 InvalidToken 1110; nothing stored', async () => {
        const pid = newPid('noauth');
        expectError(await create(v, pid, { as: 'public' }), 'NotAuthorized', 401, '1100');
        expectError(await create(v, pid, { as: { authorization: 'Bearer not-a-token-of-this-node' } }), 'InvalidToken', 401, '1110');
        await expectAbsent(pid);
      });
    });
  }
}
