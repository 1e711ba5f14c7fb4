import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { SystemMetadataCodec, type ApiVersion, type SystemMetadata } from '@memberkit/types';
import {
  NodeClient, attr, child, childText, children, expectAnyError, expectDocument, expectError, expectIdentifierDocument, expectStatus,
  TYPES_V1, TYPES_V2, SUITE_USER_AGENT, type Caller, type NodeResponse,
} from './client.js';
import { createParts, updateParts, type MultipartPart } from './multipart.js';
import { buildUploadSysmeta, checksumOf, encodeSysmeta, type SysmetaOptions } from './sysmeta.js';
import { XmlBodyCollector } from './xsd.js';

export interface NodeSuiteTarget {
  /** e.g. http://127.0.0.1:PORT/mn (the API is under {baseUrl}/v1 and {baseUrl}/v2). */
  baseUrl: string;
  tokens: {
    /** may create; not an administrator */
    writer: string;
    /** administrator or CN: may delete, sees all */
    admin: string;
    /** authenticated, no rights on the writer's objects */
    other: string;
  };
  /** The subject the writer token authenticates. */
  writerSubject: string;
  /** The node's identifier (urn:node:...). */
  nodeId: string;
}

const VERSIONS: readonly ApiVersion[] = ['v1', 'v2'];
const enc = encodeURIComponent;
const DAY = 24 * 3600 * 1000;

/** `2026-01-02T03:04:05.678000+00:00` (microseconds, numeric offset), as Python clients send. */
function microsecondDate(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00');
}
/** `2026-01-02T03:04:05.678` (no zone: UTC). */
function zonelessDate(d: Date): string {
  return d.toISOString().replace(/Z$/, '');
}
const plus = (d: Date, ms: number) => new Date(d.getTime() + ms);

interface ListResult {
  start: number;
  count: number;
  total: number;
  ids: string[];
  items: Array<{ identifier: string; formatId: string; algorithm: string; checksum: string; size: number; dateSysMetadataModified: string }>;
}

interface LogResult {
  start: number;
  count: number;
  total: number;
  entries: Array<{ entryId: string; identifier: string; ipAddress: string; userAgent: string; subject: string; event: string; dateLogged: string; nodeIdentifier: string }>;
}

/**
 * The node-level conformance suite: every Member Node operation over real HTTP, v1 and v2,
 * against the spec (member-node-interface.md), INTEROP.md and the API reference's detail
 * codes. Every XML body received is validated against the official XSDs (afterEach, one
 * xmllint call per test). Objects get fresh identifiers per run, so the node may hold other
 * content; tests run in order within the file.
 */
export function runNodeSuite(name: string, target: () => NodeSuiteTarget | Promise<NodeSuiteTarget>): void {
  describe(`Member Node over HTTP: ${name}`, () => {
    let t: NodeSuiteTarget;
    let http: NodeClient;
    const collector = new XmlBodyCollector();
    const run = `mk${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
    let seq = 0;
    const newPid = (label: string) => `${run}-${label}-${++seq}`;

    beforeAll(async () => {
      t = await target();
      http = new NodeClient(t.baseUrl, t.tokens, collector);
    });
    afterEach(async () => {
      await collector.flush();
    });
    afterAll(async () => {
      await collector.flush();
    });

    // ---------- helpers ----------

    interface CreateOptions extends Partial<Omit<SysmetaOptions, 'pid' | 'bytes'>> {
      as?: Caller;
      bytes?: Uint8Array | string;
      /** Sysmeta sent (default: built from the options for the version). */
      sysmetaXml?: string;
      parts?: MultipartPart[];
      headers?: Record<string, string>;
    }

    function sysmetaFor(v: ApiVersion, pid: string, bytes: Uint8Array | string, o: CreateOptions = {}): SystemMetadata {
      const { as: _as, bytes: _b, sysmetaXml: _x, parts: _p, headers: _h, ...rest } = o;
      return buildUploadSysmeta({ pid, bytes, rightsHolder: t.writerSubject, ...rest });
    }

    async function create(v: ApiVersion, pid: string, o: CreateOptions = {}): Promise<NodeResponse> {
      const bytes = o.bytes ?? `id,value\n${pid},${Math.random()}\n`;
      const xml = o.sysmetaXml ?? encodeSysmeta(sysmetaFor(v, pid, bytes, o), v);
      return http.post(`/${v}/object`, { as: o.as ?? 'writer', multipart: o.parts ?? createParts(pid, bytes, xml), ...(o.headers ? { headers: o.headers } : {}) });
    }

    async function createOk(v: ApiVersion, label: string, o: CreateOptions = {}): Promise<{ pid: string; bytes: Uint8Array }> {
      const pid = newPid(label);
      const bytes = typeof o.bytes === 'string' ? new TextEncoder().encode(o.bytes) : (o.bytes ?? new TextEncoder().encode(`id,value\n${pid},${Math.random()}\n`));
      const res = await create(v, pid, { ...o, bytes });
      expectIdentifierDocument(res, pid);
      return { pid, bytes };
    }

    async function update(v: ApiVersion, oldPid: string, nextPid: string, o: CreateOptions & { obsoletesOverride?: string | null } = {}): Promise<NodeResponse> {
      const bytes = o.bytes ?? `id,value\n${nextPid},${Math.random()}\n`;
      const obsoletes = o.obsoletesOverride === null ? undefined : (o.obsoletesOverride ?? oldPid);
      const sm = sysmetaFor(v, nextPid, bytes, { ...o, ...(obsoletes !== undefined ? { obsoletes } : {}) });
      return http.put(`/${v}/object/${enc(oldPid)}`, { as: o.as ?? 'writer', multipart: updateParts(nextPid, bytes, o.sysmetaXml ?? encodeSysmeta(sm, v)) });
    }

    async function meta(v: ApiVersion, id: string, as: Caller = 'admin'): Promise<SystemMetadata> {
      const res = await http.get(`/${v}/meta/${enc(id)}`, { as });
      expectDocument(res, 'systemMetadata', v === 'v1' ? TYPES_V1 : TYPES_V2);
      return SystemMetadataCodec.decode(res.text);
    }

    async function expectAbsent(id: string): Promise<void> {
      const res = await http.get(`/v2/meta/${enc(id)}`, { as: 'admin' });
      expectError(res, 'NotFound', 404, '1060');
    }

    async function list(v: ApiVersion, query: Record<string, string | number | boolean>, as: Caller = 'admin'): Promise<ListResult> {
      const qs = new URLSearchParams(Object.entries(query).map(([k, val]): [string, string] => [k, String(val)])).toString();
      const res = await http.get(`/${v}/object${qs ? `?${qs}` : ''}`, { as });
      const doc = expectDocument(res, 'objectList', TYPES_V1);
      const items = children(doc.root, 'objectInfo').map((o) => ({
        identifier: childText(o, 'identifier') ?? '',
        formatId: childText(o, 'formatId') ?? '',
        algorithm: attr(child(o, 'checksum'), 'algorithm') ?? '',
        checksum: childText(o, 'checksum') ?? '',
        size: Number(childText(o, 'size')),
        dateSysMetadataModified: childText(o, 'dateSysMetadataModified') ?? '',
      }));
      const out = { start: Number(attr(doc.root, 'start')), count: Number(attr(doc.root, 'count')), total: Number(attr(doc.root, 'total')), items, ids: items.map((i) => i.identifier) };
      expect(out.count, `${res.label}: count attribute equals the number of objectInfo elements`).toBe(items.length);
      return out;
    }

    async function logs(v: ApiVersion, query: Record<string, string | number>, as: Caller = 'admin'): Promise<LogResult> {
      const qs = new URLSearchParams(Object.entries(query).map(([k, val]): [string, string] => [k, String(val)])).toString();
      const res = await http.get(`/${v}/log${qs ? `?${qs}` : ''}`, { as });
      const doc = expectDocument(res, 'log', v === 'v1' ? TYPES_V1 : TYPES_V2);
      const entries = children(doc.root, 'logEntry').map((e) => ({
        entryId: childText(e, 'entryId') ?? '',
        identifier: childText(e, 'identifier') ?? '',
        ipAddress: childText(e, 'ipAddress') ?? '',
        userAgent: childText(e, 'userAgent') ?? '',
        subject: childText(e, 'subject') ?? '',
        event: childText(e, 'event') ?? '',
        dateLogged: childText(e, 'dateLogged') ?? '',
        nodeIdentifier: childText(e, 'nodeIdentifier') ?? '',
      }));
      const out = { start: Number(attr(doc.root, 'start')), count: Number(attr(doc.root, 'count')), total: Number(attr(doc.root, 'total')), entries };
      expect(out.count, `${res.label}: count attribute equals the number of logEntry elements`).toBe(entries.length);
      return out;
    }
    const idFilterParam = (v: ApiVersion) => (v === 'v1' ? 'pidFilter' : 'idFilter');

    /** A v2 series: `first` (seriesId sid) obsoleted by `head`. */
    async function series(label: string): Promise<{ sid: string; first: string; head: string; headBytes: Uint8Array }> {
      const sid = newPid(`${label}-sid`);
      const { pid: first } = await createOk('v2', `${label}-v1`, { seriesId: sid });
      const head = newPid(`${label}-v2`);
      const headBytes = new TextEncoder().encode(`head of ${sid}\n`);
      expectIdentifierDocument(await update('v2', first, head, { seriesId: sid, bytes: headBytes }), head);
      return { sid, first, head, headBytes };
    }

    // ---------- MNCore ----------

    describe('MNCore.ping and getCapabilities', () => {
      for (const v of VERSIONS) {
        it(`${v}: ping answers 200 with a current Date header`, async () => {
          const res = await http.get(`/${v}/monitor/ping`);
          expectStatus(res, 200);
          const date = res.headers.get('date');
          expect(date, 'Date header').not.toBeNull();
          expect(Math.abs(Date.parse(date!) - Date.now())).toBeLessThan(5 * 60_000);
        });

        it(`${v}: getCapabilities at /node is the node document`, async () => {
          await capabilitiesAt(`/${v}/node`);
        });

        it(`${v}: getCapabilities at /${v}/ (GET / from {base_url}/{version}) is the node document`, async () => {
          await capabilitiesAt(`/${v}/`);
        });
      }

      async function capabilitiesAt(path: string): Promise<void> {
        const v = path.startsWith('/v1') ? 'v1' : 'v2';
        {
          {
            const doc = expectDocument(await http.get(path), 'node', v === 'v1' ? TYPES_V1 : TYPES_V2);
            expect(childText(doc.root, 'identifier')).toBe(t.nodeId);
            expect(attr(doc.root, 'type')).toBe('mn');
            const names = children(child(doc.root, 'services'), 'service').map((s) => attr(s, 'name'));
            for (const api of ['MNCore', 'MNRead', 'MNAuthorization', 'MNStorage']) expect(names).toContain(api);
          }
        }
      }

      it('getCapabilities at /v2 (no slash) and at the bare base address', async () => {
        for (const path of ['/v2', '', '/']) {
          const res = await http.get(path);
          const doc = expectDocument(res, 'node');
          expect([TYPES_V1, TYPES_V2]).toContain(doc.rootNamespace);
          expect(childText(doc.root, 'identifier'), res.label).toBe(t.nodeId);
        }
      });
    });

    // ---------- MNStorage.create ----------

    for (const v of VERSIONS) {
      describe(`${v} MNStorage.create`, () => {
        it('creates, answers the identifier document (or bare text for Accept: text/plain), fills node-set fields', async () => {
          const { pid, bytes } = await createOk(v, 'create');
          const sm = await meta(v, pid);
          expect(sm.identifier).toBe(pid);
          expect(sm.size).toBe(bytes.byteLength);
          expect(sm.submitter).toBe(t.writerSubject);
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
          const got = await http.get(`/${v}/object/${enc(pid)}`, { as: 'writer', rawSuccess: true });
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
          expectError(await http.post(`/${v}/object`, { as: 'writer', body: '{"pid":"x"}', headers: { 'Content-Type': 'application/json' } }), 'InvalidRequest', 400, '1102');
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

    // ---------- MNRead ----------

    for (const v of VERSIONS) {
      describe(`${v} MNRead.get, describe, getSystemMetadata, getChecksum`, () => {
        it('get returns the bytes with Content-Length, Content-Type and Content-Disposition', async () => {
          const binary = new Uint8Array(512).map((_x, i) => i % 256);
          const { pid } = await createOk(v, 'bin', { bytes: binary, formatId: 'application/octet-stream' });
          const res = await http.get(`/${v}/object/${enc(pid)}`, { rawSuccess: true });
          expectStatus(res, 200);
          expect(Buffer.from(res.bytes).equals(Buffer.from(binary))).toBe(true);
          expect(res.headers.get('content-length')).toBe('512');
          expect(res.headers.get('content-type')).toMatch(/^application\/octet-stream/);

          const csv = await createOk(v, 'csv', { formatId: 'text/csv' });
          const r2 = await http.get(`/${v}/object/${enc(csv.pid)}`, { rawSuccess: true });
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
            const res = await http.get(`/v2/object/${enc(pid)}`, { rawSuccess: true });
            expectStatus(res, 200);
            expect(res.headers.get('content-type')).toMatch(/^text\/csv;\s*charset=utf-8/i);
            expect(res.headers.get('content-disposition') ?? '').toContain('measurements-2024.csv');
          });
        }

        it('get, describe, getSystemMetadata, getChecksum of a missing object -> NotFound 1020 / 1380 / 1060 / 1420', async () => {
          const missing = newPid('missing');
          expectError(await http.get(`/${v}/object/${enc(missing)}`), 'NotFound', 404, '1020');
          expectError(await http.head(`/${v}/object/${enc(missing)}`), 'NotFound', 404, '1380', missing);
          expectError(await http.get(`/${v}/meta/${enc(missing)}`), 'NotFound', 404, '1060');
          expectError(await http.get(`/${v}/checksum/${enc(missing)}`), 'NotFound', 404, '1420');
          expectError(await http.get(`/${v}/replica/${enc(missing)}`, { as: 'admin' }), 'NotFound', 404, '2185');
        });

        it(v === 'v2' ? 'v2: a SID resolves to the head PID (get, describe, getSystemMetadata)' : 'v1: a SID is not an identifier (NotFound on get, describe, getSystemMetadata)', async () => {
          const s = await series(`sid-${v}`);
          const got = await http.get(`/${v}/object/${enc(s.sid)}`, { rawSuccess: true });
          const described = await http.head(`/${v}/object/${enc(s.sid)}`);
          const m = await http.get(`/${v}/meta/${enc(s.sid)}`);
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
          const res = await http.head(`/${v}/object/${enc(pid)}`);
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
          const res = await http.get(`/${v}/meta/${enc(pid)}`);
          const doc = expectDocument(res, 'systemMetadata', v === 'v1' ? TYPES_V1 : TYPES_V2);
          for (const f of ['serialVersion', 'identifier', 'formatId', 'size', 'checksum', 'submitter', 'rightsHolder', 'dateUploaded', 'dateSysMetadataModified']) {
            expect(child(doc.root, f), `${f} present`).toBeDefined();
          }
          expect(childText(doc.root, 'submitter')).toBe(t.writerSubject);
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
          const bytes = new TextEncoder().encode(`checksum test ${run}\n`);
          const { pid } = await createOk(v, 'cks', { bytes, algorithm: 'MD5' });
          const def = expectDocument(await http.get(`/${v}/checksum/${enc(pid)}`), 'checksum', TYPES_V1);
          expect(attr(def.root, 'algorithm')).toBe('MD5');
          expect(def.root['#text']?.toLowerCase()).toBe(checksumOf(bytes, 'MD5'));
          for (const alg of ['MD5', 'SHA-1', 'SHA-256']) {
            const doc = expectDocument(await http.get(`/${v}/checksum/${enc(pid)}?checksumAlgorithm=${enc(alg)}`), 'checksum', TYPES_V1);
            expect(attr(doc.root, 'algorithm')).toBe(alg);
            expect(String(doc.root['#text']).toLowerCase(), alg).toBe(checksumOf(bytes, alg));
          }
          expectError(await http.get(`/${v}/checksum/${enc(pid)}?checksumAlgorithm=CRC-32`), 'InvalidRequest', 400, '1402');
        });

        it('getReplica returns the bytes and is logged as replicate, not read', async () => {
          const { pid, bytes } = await createOk(v, 'replica');
          const res = await http.get(`/${v}/replica/${enc(pid)}`, { as: 'admin', rawSuccess: true });
          expectStatus(res, 200);
          expect(Buffer.from(res.bytes).equals(Buffer.from(bytes))).toBe(true);
          const log = await logs(v, { [idFilterParam(v)]: pid });
          const events = log.entries.filter((e) => e.identifier === pid).map((e) => e.event);
          expect(events).toContain('replicate');
          expect(events).not.toContain('read');
        });
      });

      // ---------- listObjects ----------

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
          await collector.flush();
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
            expectError(await http.get(`/${v}/object?fromDate=${enc(bad)}`), 'InvalidRequest', 400, '1540');
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

      // ---------- getLogRecords ----------

      describe(`${v} MNCore.getLogRecords`, () => {
        const prefix = () => `${run}-log${v}-`;
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
          expectStatus(await http.get(`/${v}/object/${enc(a)}`, { as: 'writer', rawSuccess: true }), 200);
          b = `${prefix()}b`;
          expectIdentifierDocument(await update(v, a, b), b);
          expectIdentifierDocument(await http.put(`/${v}/archive/${enc(b)}`, { as: 'writer' }), b);
          c = await mk('c');
          expectIdentifierDocument(await http.delete(`/${v}/object/${enc(c)}`, { as: 'admin' }), c);
          q = await mk('q', { allow: [] });
          expectStatus(await http.get(`/${v}/object/${enc(q)}`, { as: 'writer', rawSuccess: true }), 200);
          await collector.flush();
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
            expect(e.nodeIdentifier).toBe(t.nodeId);
            expect(e.entryId).not.toBe('');
            expect(Number.isNaN(Date.parse(e.dateLogged))).toBe(false);
          }
          expect(log.entries.find((e) => e.identifier === a && e.event === 'create')?.subject).toBe(t.writerSubject);
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
          expectError(await http.get(`/${v}/log?fromDate=not-a-date`, { as: 'admin' }), 'InvalidRequest', 400, '1480');
        });

        if (v === 'v1') {
          it('v1: an event outside the v1 Event enumeration -> 400 InvalidRequest 1480', async () => {
            expectError(await http.get(`/v1/log?event=archive`, { as: 'admin' }), 'InvalidRequest', 400, '1480');
            expectError(await http.get(`/v1/log?event=nonsense`, { as: 'admin' }), 'InvalidRequest', 400, '1480');
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

      // ---------- update ----------

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
          expectIdentifierDocument(await http.put(`/${v}/archive/${enc(old)}`, { as: 'writer' }), old);
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

      // ---------- archive, delete ----------

      describe(`${v} MNStorage.archive and delete`, () => {
        it('archive: identifier answer, archived=true, still readable and listed; twice -> InvalidRequest', async () => {
          const { pid, bytes } = await createOk(v, 'arch');
          const before = await meta(v, pid);
          expectIdentifierDocument(await http.put(`/${v}/archive/${enc(pid)}`, { as: 'writer' }), pid);
          const after = await meta(v, pid);
          expect(after.archived).toBe(true);
          expect(after.serialVersion!).toBeGreaterThan(before.serialVersion!);
          expect(after.dateSysMetadataModified!.getTime()).toBeGreaterThan(before.dateSysMetadataModified!.getTime());
          const got = await http.get(`/${v}/object/${enc(pid)}`, { rawSuccess: true });
          expectStatus(got, 200);
          expect(Buffer.from(got.bytes).equals(Buffer.from(bytes))).toBe(true);
          expect((await list(v, { identifier: pid })).ids).toEqual([pid]);
          expectError(await http.put(`/${v}/archive/${enc(pid)}`, { as: 'writer' }), 'InvalidRequest', 400, '0');
        });

        it('archive: NotFound 2911, NotAuthorized 2910, InvalidToken 2913', async () => {
          const missing = newPid('arch-missing');
          expectError(await http.put(`/${v}/archive/${enc(missing)}`, { as: 'writer' }), 'NotFound', 404, '2911');
          const { pid } = await createOk(v, 'arch-auth');
          expectError(await http.put(`/${v}/archive/${enc(pid)}`, { as: 'other' }), 'NotAuthorized', 401, '2910');
          expectError(await http.put(`/${v}/archive/${enc(pid)}`), 'NotAuthorized', 401, '2910');
          expectError(await http.put(`/${v}/archive/${enc(pid)}`, { as: { authorization: 'Bearer nope' } }), 'InvalidToken', 401, '2913');
          expect((await meta(v, pid)).archived ?? false).toBe(false);
        });

        if (v === 'v2') {
          it('v2: archive by SID archives the head PID', async () => {
            const s = await series('arch-sid');
            expectIdentifierDocument(await http.put(`/v2/archive/${enc(s.sid)}`, { as: 'writer' }), s.head);
            expect((await meta('v2', s.head)).archived).toBe(true);
          });
        }

        it('delete: administrators only (writer -> 401 NotAuthorized 2900); gone afterwards; again -> 404 NotFound 2901', async () => {
          const { pid } = await createOk(v, 'del');
          expectError(await http.delete(`/${v}/object/${enc(pid)}`, { as: 'writer' }), 'NotAuthorized', 401, '2900');
          expectError(await http.delete(`/${v}/object/${enc(pid)}`), 'NotAuthorized', 401, '2900');
          expectStatus(await http.get(`/${v}/object/${enc(pid)}`, { rawSuccess: true }), 200);
          expectIdentifierDocument(await http.delete(`/${v}/object/${enc(pid)}`, { as: 'admin' }), pid);
          expectError(await http.get(`/${v}/object/${enc(pid)}`, { as: 'admin' }), 'NotFound', 404, '1020');
          expectError(await http.head(`/${v}/object/${enc(pid)}`, { as: 'admin' }), 'NotFound', 404, '1380', pid);
          expectError(await http.get(`/${v}/meta/${enc(pid)}`, { as: 'admin' }), 'NotFound', 404, '1060');
          expect((await list(v, { identifier: pid })).total).toBe(0);
          expectError(await http.delete(`/${v}/object/${enc(pid)}`, { as: 'admin' }), 'NotFound', 404, '2901');
        });
      });

      // ---------- isAuthorized, generateIdentifier, CN notifications ----------

      describe(`${v} MNAuthorization.isAuthorized, generateIdentifier, systemMetadataChanged, synchronizationFailed`, () => {
        it('isAuthorized answers truthfully: 200 when allowed, 401 NotAuthorized 1820 (never 403) otherwise', async () => {
          const { pid: pub } = await createOk(v, 'authz-pub');
          const { pid: priv } = await createOk(v, 'authz-priv', { allow: [] });
          const check = async (id: string, action: string, as: Caller, allowed: boolean) => {
            const res = await http.get(`/${v}/isAuthorized/${enc(id)}?action=${action}`, { as });
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
          const res = await http.get(`/${v}/isAuthorized/${enc(s.sid)}?action=write`, { as: 'writer' });
          if (v === 'v2') expectStatus(res, 200);
          else expectError(res, 'NotFound', 404, '1800');
          if (v === 'v2') expectError(await http.get(`/v2/isAuthorized/${enc(s.sid)}?action=write`, { as: 'other' }), 'NotAuthorized', 401, '1820');
        });

        it('isAuthorized: bad or missing action -> 400 InvalidRequest 1761; missing object -> 404 NotFound 1800', async () => {
          const { pid } = await createOk(v, 'authz-bad');
          expectError(await http.get(`/${v}/isAuthorized/${enc(pid)}?action=delete`, { as: 'writer' }), 'InvalidRequest', 400, '1761');
          expectError(await http.get(`/${v}/isAuthorized/${enc(pid)}`, { as: 'writer' }), 'InvalidRequest', 400, '1761');
          expectError(await http.get(`/${v}/isAuthorized/${enc(newPid('authz-missing'))}?action=read`, { as: 'writer' }), 'NotFound', 404, '1800');
        });

        it('generateIdentifier: UUID scheme -> an unused identifier; another scheme -> 400 InvalidRequest 2193', async () => {
          const res = await http.post(`/${v}/generate`, { as: 'writer', multipart: [{ name: 'scheme', value: 'UUID' }] });
          const doc = expectDocument(res, 'identifier', TYPES_V1);
          const id = String(doc.root['#text'] ?? '');
          expect(id).not.toBe('');
          expect(id).not.toMatch(/\s/);
          await expectAbsent(id);
          expectIdentifierDocument(await create(v, id), id);
          expectError(await http.post(`/${v}/generate`, { as: 'writer', multipart: [{ name: 'scheme', value: 'ARK' }] }), 'InvalidRequest', 400, '2193');
        });

        it('systemMetadataChanged: CN/admin -> 200 (pid or id part); others -> 401 NotAuthorized 1331', async () => {
          const { pid } = await createOk(v, 'dirty');
          const parts = (field: string) => [
            { name: field, value: pid },
            { name: 'serialVersion', value: '1' },
            { name: 'dateSysMetaLastModified', value: new Date().toISOString() },
          ];
          expectStatus(await http.post(`/${v}/dirtySystemMetadata`, { as: 'admin', multipart: parts('pid') }), 200);
          expectStatus(await http.post(`/${v}/dirtySystemMetadata`, { as: 'admin', multipart: parts('id') }), 200);
          expectError(await http.post(`/${v}/dirtySystemMetadata`, { as: 'writer', multipart: parts('pid') }), 'NotAuthorized', 401, '1331');
          expectError(await http.post(`/${v}/dirtySystemMetadata`, { multipart: parts('id') }), 'NotAuthorized', 401, '1331');
          expectError(await http.post(`/${v}/dirtySystemMetadata`, { as: 'admin', multipart: parts('pid').filter((p) => p.name !== 'serialVersion') }), 'InvalidRequest', 400, '1334');
          expectError(await http.post(`/${v}/dirtySystemMetadata`, { as: { authorization: 'Bearer nope' }, multipart: parts('pid') }), 'InvalidToken', 401, '1332');
        });

        it('synchronizationFailed: CN/admin -> 200; others -> 401 NotAuthorized 2162', async () => {
          const { pid } = await createOk(v, 'syncfail');
          const message = `<?xml version="1.0" encoding="UTF-8"?><error name="SynchronizationFailed" errorCode="500" detailCode="6001" identifier="${pid}"><description>test failure</description></error>`;
          const parts = [{ name: 'message', value: message, fileName: 'message.xml' }];
          expectStatus(await http.post(`/${v}/error`, { as: 'admin', multipart: parts }), 200);
          expectError(await http.post(`/${v}/error`, { as: 'writer', multipart: parts }), 'NotAuthorized', 401, '2162');
          expectError(await http.post(`/${v}/error`, { multipart: parts }), 'NotAuthorized', 401, '2162');
        });
      });

      // ---------- identifiers ----------

      describe(`${v} identifiers that need percent-encoding`, () => {
        const hostile = (): Array<[string, string]> => [
          ['slash', `${run}/a/b/../c`],
          ['query and fragment', `${run}?x=1&y=2#frag`],
          ['percent', `${run}-100%-a%2Fb%20`],
          ['plus', `${run}+a+b`],
          ['NFC', `${run}-caf\u00e9`],
          ['NFD', `${run}-cafe\u0301`],
          ['astral', `${run}-\u{1F600}数据ü`],
          ['dots', `../${run}/..`],
          ['quotes and brackets', `${run}-"<'&>`],
          ['800 characters', `${run}-${v}-${'x'.repeat(800 - run.length - 4)}`],
        ];
        it('create, get, describe, getSystemMetadata, getChecksum and listObjects round-trip each identifier', async () => {
          for (const [what, raw] of hostile()) {
            const pid = v === 'v1' ? raw.replace(run, `${run}v1`).slice(0, 800) : raw;
            const bytes = new TextEncoder().encode(`${what}\n${pid}\n`);
            expectIdentifierDocument(await create(v, pid, { bytes }), pid);
            const got = await http.get(`/${v}/object/${enc(pid)}`, { rawSuccess: true });
            expectStatus(got, 200);
            expect(Buffer.from(got.bytes).equals(Buffer.from(bytes)), what).toBe(true);
            const described = await http.head(`/${v}/object/${enc(pid)}`);
            expectStatus(described, 200);
            expect(described.headers.get('content-length')).toBe(String(bytes.byteLength));
            expect((await meta(v, pid, 'public')).identifier, what).toBe(pid);
            const cks = expectDocument(await http.get(`/${v}/checksum/${enc(pid)}`), 'checksum', TYPES_V1);
            expect(cks.root['#text'], what).toBe(checksumOf(bytes, 'SHA-1'));
            expect((await list(v, { identifier: pid })).ids, what).toEqual([pid]);
          }
        });

        it('NFC and NFD twins are different objects', async () => {
          const nfc = `${run}-${v}-twin-caf\u00e9`;
          const nfd = `${run}-${v}-twin-cafe\u0301`;
          expectIdentifierDocument(await create(v, nfc, { bytes: 'nfc\n' }), nfc);
          expectIdentifierDocument(await create(v, nfd, { bytes: 'nfd\n' }), nfd);
          expect((await http.get(`/${v}/object/${enc(nfc)}`, { rawSuccess: true })).text).toBe('nfc\n');
          expect((await http.get(`/${v}/object/${enc(nfd)}`, { rawSuccess: true })).text).toBe('nfd\n');
        });

        it('identifiers with whitespace or over 800 characters are refused (400), nothing stored', async () => {
          for (const pid of [`${run}-${v} space`, `${run}-${v}-tab\there`, `${run}-${v}-${'y'.repeat(801)}`]) {
            const res = await create(v, pid);
            const { name, detailCode } = expectAnyError(res, 400);
            expect([['InvalidRequest', '1102'], ['InvalidSystemMetadata', '1180']], `${res.label}: ${name} ${detailCode}`).toContainEqual([name, detailCode]);
          }
          expectError(await http.get(`/${v}/object/${enc(`${run}-${v} space`)}`), 'NotFound', 404, '1020');
        });
      });
    }

    // ---------- updateSystemMetadata (v2) ----------

    describe('v2 MNStorage.updateSystemMetadata', () => {
      const put = (pid: string, sm: SystemMetadata, as: Caller = 'writer') =>
        http.put('/v2/meta', { as, multipart: [{ name: 'pid', value: pid }, { name: 'sysmeta', value: encodeSysmeta(sm, 'v2'), fileName: 'sysmeta.xml' }] });

      it('an accessPolicy change is effective immediately; serialVersion +1; dateSysMetadataModified forward', async () => {
        const { pid } = await createOk('v2', 'usm');
        expectStatus(await http.get(`/v2/object/${enc(pid)}`, { rawSuccess: true }), 200);
        const before = await meta('v2', pid, 'writer');
        const { accessPolicy: _drop, ...rest } = before;
        expectStatus(await put(pid, rest as SystemMetadata), 200);
        const after = await meta('v2', pid, 'writer');
        expect(after.serialVersion).toBe(before.serialVersion! + 1);
        expect(after.dateSysMetadataModified!.getTime()).toBeGreaterThan(before.dateSysMetadataModified!.getTime());
        expectError(await http.get(`/v2/object/${enc(pid)}`), 'NotAuthorized', 401, '1000');
        expectError(await http.get(`/v2/meta/${enc(pid)}`), 'NotAuthorized', 401, '1040');
        expectError(await http.get(`/v2/isAuthorized/${enc(pid)}?action=read`), 'NotAuthorized', 401, '1820');
        expect((await list('v2', { identifier: pid }, 'public')).total).toBe(0);
        // and back
        expectStatus(await put(pid, { ...after, accessPolicy: { allow: [{ subject: ['public'], permission: ['read'] }] } }), 200);
        expectStatus(await http.get(`/v2/object/${enc(pid)}`, { rawSuccess: true }), 200);
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
        expectIdentifierDocument(await http.put(`/v2/archive/${enc(pid)}`, { as: 'writer' }), pid);
        const sm = await meta('v2', pid, 'writer');
        expect(sm.archived).toBe(true);
        expectError(await put(pid, { ...sm, archived: false }), 'InvalidSystemMetadata', 400, '4956');
        expect((await meta('v2', pid)).archived).toBe(true);
      });
    });

    it('every XML body received so far was XSD-validated', async () => {
      await collector.flush();
      expect(collector.validated, 'XML bodies validated').toBeGreaterThan(100);
    });

    // ---------- unknown paths, wrong methods ----------

    describe('unknown paths and wrong methods answer DataONE error XML', () => {
      it('404 NotFound error documents, status == errorCode', async () => {
        const cases: Array<[string, string]> = [
          ['GET', '/v2/no-such-operation'],
          ['GET', '/v1/objects'],
          ['GET', '/v3/node'],
          ['GET', '/no-such-path'],
          ['DELETE', '/v2/node'],
          ['POST', '/v1/monitor/ping'],
          ['PATCH', '/v2/object/x'],
          ['PUT', '/v1/meta'],
        ];
        const head = await http.head('/v2/no-such-operation');
        expect(head.status).toBe(404);
        expect(head.headers.get('dataone-exception-name')).toBe('NotFound');
        expect(head.headers.get('dataone-exception-detailcode')).not.toBeNull();
        for (const [method, path] of cases) {
          const res = await http.request(method, path, { as: 'writer', ...(method === 'GET' || method === 'DELETE' ? {} : { body: '' }) });
          const { name } = expectAnyError(res, 404);
          expect(name, res.label).toBe('NotFound');
        }
      });
    });
  });
}
