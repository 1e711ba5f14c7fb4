import { describe, expect, it } from 'vitest';
import type { ApiVersion } from '@memberkit/types';
import { attr, child, childText, expectDocument, expectError, expectStatus, TYPES_V1, TYPES_V2 } from './client.js';
import { checksumOf } from './sysmeta.js';
import { VERSIONS, enc, type NodeSuiteContext } from './context.js';

/**
 * Node suite group `read`: MNRead.get, MNRead.describe, MNRead.getSystemMetadata, MNRead.getChecksum, MNReplication.getReplica, over HTTP for each of `versions`.
 */
export function registerReadTests(ctx: NodeSuiteContext, versions: readonly ApiVersion[] = VERSIONS): void {
  const { createOk, meta, logs, idFilterParam, series, newPid } = ctx;
  for (const v of versions) {
    describe(`${v} MNRead.get, describe, getSystemMetadata, getChecksum`, () => {
      it('get returns the bytes with Content-Length, Content-Type and Content-Disposition', async () => {
        const binary = new Uint8Array(512).map((_x, i) => i % 256);
        const { pid } = await createOk(v, 'bin', { bytes: binary, formatId: 'application/octet-stream' });
        const res = await ctx.http.get(`/${v}/object/${enc(pid)}`, { rawSuccess: true });
        expectStatus(res, 200);
        expect(Buffer.from(res.bytes).equals(Buffer.from(binary))).toBe(true);
        expect(res.headers.get('content-length')).toBe('512');
        expect(res.headers.get('content-type')).toMatch(/^application\/octet-stream/);

        const csv = await createOk(v, 'csv', { formatId: 'text/csv' });
        const r2 = await ctx.http.get(`/${v}/object/${enc(csv.pid)}`, { rawSuccess: true });
        expectStatus(r2, 200);
        expect(r2.headers.get('content-type')).toMatch(/^text\/csv/);
        expect(r2.headers.get('content-disposition') ?? '').toMatch(/filename/);
      });

      if (v === 'v2') {
        it('v2: Content-Type from mediaType (with its parameters), Content-Disposition from fileName', async () => {
          const { pid } = await createOk('v2', 'named', {
            formatId: 'text/csv',
            fileName: 'measurements-2024.csv',
            mediaType: { name: 'text/csv', property: [{ name: 'charset', value: 'utf-8' }] },
          });
          const res = await ctx.http.get(`/v2/object/${enc(pid)}`, { rawSuccess: true });
          expectStatus(res, 200);
          expect(res.headers.get('content-type')).toMatch(/^text\/csv;\s*charset=utf-8/i);
          expect(res.headers.get('content-disposition') ?? '').toContain('measurements-2024.csv');
        });
      }

      it('get, describe, getSystemMetadata, getChecksum of a missing object -> NotFound 1020 / 1380 / 1060 / 1420', async () => {
        const missing = newPid('missing');
        expectError(await ctx.http.get(`/${v}/object/${enc(missing)}`), 'NotFound', 404, '1020');
        expectError(await ctx.http.head(`/${v}/object/${enc(missing)}`), 'NotFound', 404, '1380', missing);
        expectError(await ctx.http.get(`/${v}/meta/${enc(missing)}`), 'NotFound', 404, '1060');
        expectError(await ctx.http.get(`/${v}/checksum/${enc(missing)}`), 'NotFound', 404, '1420');
        expectError(await ctx.http.get(`/${v}/replica/${enc(missing)}`, { as: 'admin' }), 'NotFound', 404, '2185');
      });

      it(v === 'v2' ? 'v2: a SID resolves to the head PID (get, describe, getSystemMetadata)' : 'v1: a SID is not an identifier (NotFound on get, describe, getSystemMetadata)', async () => {
        const s = await series(`sid-${v}`);
        const got = await ctx.http.get(`/${v}/object/${enc(s.sid)}`, { rawSuccess: true });
        const described = await ctx.http.head(`/${v}/object/${enc(s.sid)}`);
        const m = await ctx.http.get(`/${v}/meta/${enc(s.sid)}`);
        if (v === 'v2') {
          expectStatus(got, 200);
          expect(Buffer.from(got.bytes).equals(Buffer.from(s.headBytes))).toBe(true);
          expectStatus(described, 200);
          expect(described.headers.get('content-length')).toBe(String(s.headBytes.byteLength));
          const doc = expectDocument(m, 'systemMetadata', TYPES_V2);
          expect(childText(doc.root, 'identifier')).toBe(s.head);
        } else {
          expectError(got, 'NotFound', 404, '1020');
          expect(childText(got.doc?.root, 'description') ?? '', 'v1 NotFound for a SID says it is a series id').toMatch(/series/i);
          expectError(described, 'NotFound', 404, '1380', s.sid);
          expectError(m, 'NotFound', 404, '1060');
        }
      });

      it('describe (HEAD) sends the object headers and no body', async () => {
        const { pid, bytes } = await createOk(v, 'describe', { formatId: 'text/csv' });
        const sm = await meta(v, pid);
        const res = await ctx.http.head(`/${v}/object/${enc(pid)}`);
        expectStatus(res, 200);
        expect(res.headers.get('content-length'), 'Content-Length is the size on HEAD').toBe(String(bytes.byteLength));
        expect(res.headers.get('dataone-formatid')).toBe('text/csv');
        expect(res.headers.get('dataone-objectformat')).toBe('text/csv');
        expect(res.headers.get('dataone-checksum')).toBe(`SHA-1,${checksumOf(bytes, 'SHA-1')}`);
        expect(res.headers.get('dataone-serialversion')).toBe(String(sm.serialVersion));
        const lm = res.headers.get('last-modified');
        expect(lm).not.toBeNull();
        expect(Date.parse(lm!), 'Last-Modified is dateSysMetadataModified (to the second)').toBe(Math.floor(sm.dateSysMetadataModified!.getTime() / 1000) * 1000);
        expect(res.headers.get('content-type')).toMatch(/^text\/csv/);
        expect(res.bytes.length).toBe(0);
      });

      it(`getSystemMetadata answers the ${v} document with the node-set fields`, async () => {
        const sid = newPid('meta-sid');
        const { pid } = await createOk('v2', 'meta', { seriesId: sid, fileName: 'meta.csv' });
        const res = await ctx.http.get(`/${v}/meta/${enc(pid)}`);
        const doc = expectDocument(res, 'systemMetadata', v === 'v1' ? TYPES_V1 : TYPES_V2);
        for (const f of ['serialVersion', 'identifier', 'formatId', 'size', 'checksum', 'submitter', 'rightsHolder', 'dateUploaded', 'dateSysMetadataModified']) {
          expect(child(doc.root, f), `${f} present`).toBeDefined();
        }
        expect(childText(doc.root, 'submitter')).toBe(ctx.target.writerSubject);
        if (v === 'v1') {
          expect(child(doc.root, 'seriesId'), 'v1 document has no seriesId').toBeUndefined();
          expect(child(doc.root, 'fileName'), 'v1 document has no fileName').toBeUndefined();
          expect(child(doc.root, 'mediaType'), 'v1 document has no mediaType').toBeUndefined();
        } else {
          expect(childText(doc.root, 'seriesId')).toBe(sid);
          expect(childText(doc.root, 'fileName')).toBe('meta.csv');
        }
      });

      it('getChecksum: the recorded algorithm by default; MD5, SHA-1 and SHA-256 computed; unknown algorithm -> 1402', async () => {
        const bytes = new TextEncoder().encode(`checksum test ${ctx.run}\n`);
        const { pid } = await createOk(v, 'cks', { bytes, algorithm: 'MD5' });
        const def = expectDocument(await ctx.http.get(`/${v}/checksum/${enc(pid)}`), 'checksum', TYPES_V1);
        expect(attr(def.root, 'algorithm')).toBe('MD5');
        expect(def.root['#text']?.toLowerCase()).toBe(checksumOf(bytes, 'MD5'));
        for (const alg of ['MD5', 'SHA-1', 'SHA-256']) {
          const doc = expectDocument(await ctx.http.get(`/${v}/checksum/${enc(pid)}?checksumAlgorithm=${enc(alg)}`), 'checksum', TYPES_V1);
          expect(attr(doc.root, 'algorithm')).toBe(alg);
          expect(String(doc.root['#text']).toLowerCase(), alg).toBe(checksumOf(bytes, alg));
        }
        expectError(await ctx.http.get(`/${v}/checksum/${enc(pid)}?checksumAlgorithm=CRC-32`), 'InvalidRequest', 400, '1402');
      });

      it('getReplica returns the bytes and is logged as replicate, not read', async () => {
        const { pid, bytes } = await createOk(v, 'replica');
        const res = await ctx.http.get(`/${v}/replica/${enc(pid)}`, { as: 'admin', rawSuccess: true });
        expectStatus(res, 200);
        expect(Buffer.from(res.bytes).equals(Buffer.from(bytes))).toBe(true);
        const log = await logs(v, { [idFilterParam(v)]: pid });
        const events = log.entries.filter((e) => e.identifier === pid).map((e) => e.event);
        expect(events).toContain('replicate');
        expect(events).not.toContain('read');
      });
    });
  }
}
