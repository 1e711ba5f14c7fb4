import { randomBytes } from 'node:crypto';
import { afterAll, afterEach, beforeAll, expect } from 'vitest';
import { SystemMetadataCodec, type ApiVersion, type SystemMetadata } from '@memberkit/types';
import {
  NodeClient, attr, child, childText, children, expectDocument, expectError, expectIdentifierDocument,
  TYPES_V1, TYPES_V2, type Caller, type NodeResponse,
} from './client.js';
import { createParts, updateParts, type MultipartPart } from './multipart.js';
import { buildUploadSysmeta, encodeSysmeta, type SysmetaOptions } from './sysmeta.js';
import { XmlBodyCollector } from './xsd.js';

/** The node under test, as the suite's groups reach it. */
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

export const VERSIONS: readonly ApiVersion[] = ['v1', 'v2'];
export const enc = encodeURIComponent;
export const DAY = 24 * 3600 * 1000;

/** `2026-01-02T03:04:05.678000+00:00` (microseconds, numeric offset), as Python clients send. */
export function microsecondDate(d: Date): string {
  return d.toISOString().replace(/\.(\d{3})Z$/, '.$1000+00:00');
}
/** `2026-01-02T03:04:05.678` (no zone: UTC). */
export function zonelessDate(d: Date): string {
  return d.toISOString().replace(/Z$/, '');
}
export const plus = (d: Date, ms: number) => new Date(d.getTime() + ms);

export interface ListResult {
  start: number;
  count: number;
  total: number;
  ids: string[];
  items: Array<{ identifier: string; formatId: string; algorithm: string; checksum: string; size: number; dateSysMetadataModified: string }>;
}

export interface LogResult {
  start: number;
  count: number;
  total: number;
  entries: Array<{ entryId: string; identifier: string; ipAddress: string; userAgent: string; subject: string; event: string; dateLogged: string; nodeIdentifier: string }>;
}

export interface CreateOptions extends Partial<Omit<SysmetaOptions, 'pid' | 'bytes'>> {
  as?: Caller;
  bytes?: Uint8Array | string;
  /** Sysmeta sent (default: built from the options for the version). */
  sysmetaXml?: string;
  parts?: MultipartPart[];
  headers?: Record<string, string>;
}

export interface UpdateOptions extends CreateOptions {
  /** sysmeta.obsoletes sent: default the old pid; null leaves it out. */
  obsoletesOverride?: string | null;
}

/**
 * What every group of the node suite shares: the target (known once `beforeAll` ran), an
 * HTTP client whose XML bodies go to one XSD collector, fresh identifiers for this run, and
 * the request helpers the groups build their tests from.
 */
export interface NodeSuiteContext {
  /** The node under test; read it inside tests and hooks only. */
  readonly target: NodeSuiteTarget;
  readonly http: NodeClient;
  readonly collector: XmlBodyCollector;
  /** A prefix unique to this run, so the node may hold other content. */
  readonly run: string;
  newPid(label: string): string;
  sysmetaFor(v: ApiVersion, pid: string, bytes: Uint8Array | string, o?: CreateOptions): SystemMetadata;
  /** MNStorage.create of `pid` (bytes, sysmeta and caller from the options). */
  create(v: ApiVersion, pid: string, o?: CreateOptions): Promise<NodeResponse>;
  /** create of a fresh pid, asserting the identifier answer. */
  createOk(v: ApiVersion, label: string, o?: CreateOptions): Promise<{ pid: string; bytes: Uint8Array }>;
  /** MNStorage.update of `oldPid` by `nextPid`. */
  update(v: ApiVersion, oldPid: string, nextPid: string, o?: UpdateOptions): Promise<NodeResponse>;
  /** getSystemMetadata, decoded (asserts the document). */
  meta(v: ApiVersion, id: string, as?: Caller): Promise<SystemMetadata>;
  /** getSystemMetadata of `id` answers NotFound 1060. */
  expectAbsent(id: string): Promise<void>;
  list(v: ApiVersion, query: Record<string, string | number | boolean>, as?: Caller): Promise<ListResult>;
  logs(v: ApiVersion, query: Record<string, string | number>, as?: Caller): Promise<LogResult>;
  /** The getLogRecords prefix filter's name: pidFilter in v1, idFilter in v2. */
  idFilterParam(v: ApiVersion): string;
  /** A v2 series: `first` (seriesId sid) obsoleted by `head`. */
  series(label: string): Promise<{ sid: string; first: string; head: string; headBytes: Uint8Array }>;
}

/**
 * The shared context of the node suite's groups. Call it inside a `describe` (it registers
 * that block's hooks: resolve the target before the first test, XSD-validate the XML bodies
 * received after each test); then register groups with it, e.g. `registerReadTests(ctx)`.
 */
export function useNodeSuiteContext(target: () => NodeSuiteTarget | Promise<NodeSuiteTarget>): NodeSuiteContext {
  let t: NodeSuiteTarget | undefined;
  let http: NodeClient | undefined;
  const collector = new XmlBodyCollector();
  const run = `mk${Date.now().toString(36)}${randomBytes(3).toString('hex')}`;
  let seq = 0;

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

  const connected = <T>(value: T | undefined): T => {
    if (value === undefined) throw new Error('testkit: the node suite target is read inside tests and hooks only');
    return value;
  };

  const ctx: NodeSuiteContext = {
    get target() {
      return connected(t);
    },
    get http() {
      return connected(http);
    },
    collector,
    run,
    newPid: (label) => `${run}-${label}-${++seq}`,

    sysmetaFor(_v, pid, bytes, o = {}) {
      const { as: _as, bytes: _b, sysmetaXml: _x, parts: _p, headers: _h, ...rest } = o;
      return buildUploadSysmeta({ pid, bytes, rightsHolder: ctx.target.writerSubject, ...rest });
    },

    async create(v, pid, o = {}) {
      const bytes = o.bytes ?? `id,value\n${pid},${Math.random()}\n`;
      const xml = o.sysmetaXml ?? encodeSysmeta(ctx.sysmetaFor(v, pid, bytes, o), v);
      return ctx.http.post(`/${v}/object`, { as: o.as ?? 'writer', multipart: o.parts ?? createParts(pid, bytes, xml), ...(o.headers ? { headers: o.headers } : {}) });
    },

    async createOk(v, label, o = {}) {
      const pid = ctx.newPid(label);
      const bytes = typeof o.bytes === 'string' ? new TextEncoder().encode(o.bytes) : (o.bytes ?? new TextEncoder().encode(`id,value\n${pid},${Math.random()}\n`));
      const res = await ctx.create(v, pid, { ...o, bytes });
      expectIdentifierDocument(res, pid);
      return { pid, bytes };
    },

    async update(v, oldPid, nextPid, o = {}) {
      const bytes = o.bytes ?? `id,value\n${nextPid},${Math.random()}\n`;
      const obsoletes = o.obsoletesOverride === null ? undefined : (o.obsoletesOverride ?? oldPid);
      const sm = ctx.sysmetaFor(v, nextPid, bytes, { ...o, ...(obsoletes !== undefined ? { obsoletes } : {}) });
      return ctx.http.put(`/${v}/object/${enc(oldPid)}`, { as: o.as ?? 'writer', multipart: updateParts(nextPid, bytes, o.sysmetaXml ?? encodeSysmeta(sm, v)) });
    },

    async meta(v, id, as = 'admin') {
      const res = await ctx.http.get(`/${v}/meta/${enc(id)}`, { as });
      expectDocument(res, 'systemMetadata', v === 'v1' ? TYPES_V1 : TYPES_V2);
      return SystemMetadataCodec.decode(res.text);
    },

    async expectAbsent(id) {
      const res = await ctx.http.get(`/v2/meta/${enc(id)}`, { as: 'admin' });
      expectError(res, 'NotFound', 404, '1060');
    },

    async list(v, query, as = 'admin') {
      const qs = new URLSearchParams(Object.entries(query).map(([k, val]): [string, string] => [k, String(val)])).toString();
      const res = await ctx.http.get(`/${v}/object${qs ? `?${qs}` : ''}`, { as });
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
    },

    async logs(v, query, as = 'admin') {
      const qs = new URLSearchParams(Object.entries(query).map(([k, val]): [string, string] => [k, String(val)])).toString();
      const res = await ctx.http.get(`/${v}/log${qs ? `?${qs}` : ''}`, { as });
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
    },

    idFilterParam: (v) => (v === 'v1' ? 'pidFilter' : 'idFilter'),

    async series(label) {
      const sid = ctx.newPid(`${label}-sid`);
      const { pid: first } = await ctx.createOk('v2', `${label}-v1`, { seriesId: sid });
      const head = ctx.newPid(`${label}-v2`);
      const headBytes = new TextEncoder().encode(`head of ${sid}\n`);
      expectIdentifierDocument(await ctx.update('v2', first, head, { seriesId: sid, bytes: headBytes }), head);
      return { sid, first, head, headBytes };
    },
  };
  return ctx;
}
