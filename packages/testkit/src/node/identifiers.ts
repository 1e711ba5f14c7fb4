import { describe, expect, it } from 'vitest';
import type { ApiVersion } from '@memberkit/types';
import { expectAnyError, expectDocument, expectError, expectIdentifierDocument, expectStatus, TYPES_V1 } from './client.js';
import { checksumOf } from './sysmeta.js';
import { VERSIONS, enc, type NodeSuiteContext } from './context.js';

/**
 * Node suite group `identifiers`: identifiers that need percent-encoding, on every MNRead/MNStorage path, over HTTP for each of `versions`.
 */
export function registerIdentifiersTests(ctx: NodeSuiteContext, versions: readonly ApiVersion[] = VERSIONS): void {
  const { create, meta, list } = ctx;
  for (const v of versions) {
    describe(`${v} identifiers that need percent-encoding`, () => {
      const hostile = (): Array<[string, string]> => [
        ['slash', `${ctx.run}/a/b/../c`],
        ['query and fragment', `${ctx.run}?x=1&y=2#frag`],
        ['percent', `${ctx.run}-100%-a%2Fb%20`],
        ['plus', `${ctx.run}+a+b`],
        ['NFC', `${ctx.run}-caf\u00e9`],
        ['NFD', `${ctx.run}-cafe\u0301`],
        ['astral', `${ctx.run}-\u{1F600}数据ü`],
        ['dots', `../${ctx.run}/..`],
        ['quotes and brackets', `${ctx.run}-"<'&>`],
        ['800 characters', `${ctx.run}-${v}-${'x'.repeat(800 - ctx.run.length - 4)}`],
      ];
      it('create, get, describe, getSystemMetadata, getChecksum and listObjects round-trip each identifier', async () => {
        for (const [what, raw] of hostile()) {
          const pid = v === 'v1' ? raw.replace(ctx.run, `${ctx.run}v1`).slice(0, 800) : raw;
          const bytes = new TextEncoder().encode(`${what}\n${pid}\n`);
          expectIdentifierDocument(await create(v, pid, { bytes }), pid);
          const got = await ctx.http.get(`/${v}/object/${enc(pid)}`, { rawSuccess: true });
          expectStatus(got, 200);
          expect(Buffer.from(got.bytes).equals(Buffer.from(bytes)), what).toBe(true);
          const described = await ctx.http.head(`/${v}/object/${enc(pid)}`);
          expectStatus(described, 200);
          expect(described.headers.get('content-length')).toBe(String(bytes.byteLength));
          expect((await meta(v, pid, 'public')).identifier, what).toBe(pid);
          const cks = expectDocument(await ctx.http.get(`/${v}/checksum/${enc(pid)}`), 'checksum', TYPES_V1);
          expect(cks.root['#text'], what).toBe(checksumOf(bytes, 'SHA-1'));
          expect((await list(v, { identifier: pid })).ids, what).toEqual([pid]);
        }
      });

      it('NFC and NFD twins are different objects', async () => {
        const nfc = `${ctx.run}-${v}-twin-caf\u00e9`;
        const nfd = `${ctx.run}-${v}-twin-cafe\u0301`;
        expectIdentifierDocument(await create(v, nfc, { bytes: 'nfc\n' }), nfc);
        expectIdentifierDocument(await create(v, nfd, { bytes: 'nfd\n' }), nfd);
        expect((await ctx.http.get(`/${v}/object/${enc(nfc)}`, { rawSuccess: true })).text).toBe('nfc\n');
        expect((await ctx.http.get(`/${v}/object/${enc(nfd)}`, { rawSuccess: true })).text).toBe('nfd\n');
      });

      it('identifiers with whitespace or over 800 characters are refused (400), nothing stored', async () => {
        for (const pid of [`${ctx.run}-${v} space`, `${ctx.run}-${v}-tab\there`, `${ctx.run}-${v}-${'y'.repeat(801)}`]) {
          const res = await create(v, pid);
          const { name, detailCode } = expectAnyError(res, 400);
          expect([['InvalidRequest', '1102'], ['InvalidSystemMetadata', '1180']], `${res.label}: ${name} ${detailCode}`).toContainEqual([name, detailCode]);
        }
        expectError(await ctx.http.get(`/${v}/object/${enc(`${ctx.run}-${v} space`)}`), 'NotFound', 404, '1020');
      });
    });
  }
}
