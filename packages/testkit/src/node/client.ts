import { expect } from 'vitest';
import { parseXml, type ParsedDocument, type XmlNode } from '@memberkit/types';
import { multipartBody, type MultipartPart } from './multipart.js';
import { looksLikeXml, type XmlBodyCollector } from './xsd.js';

/** Who calls: a configured token by role, nobody (public), or an explicit Authorization value. */
export type Caller = 'public' | 'writer' | 'admin' | 'other' | { authorization: string };

export interface NodeResponse {
  method: string;
  url: string;
  status: number;
  headers: Headers;
  bytes: Uint8Array;
  text: string;
  /** The parsed body when it is XML. */
  doc?: ParsedDocument;
  /** `METHOD path -> status` for messages. */
  label: string;
}

export interface RequestOptions {
  as?: Caller;
  headers?: Record<string, string>;
  body?: RequestInit['body'];
  multipart?: readonly MultipartPart[];
  /** The body is object bytes (get/getReplica success): not a DataONE document, not validated. */
  rawSuccess?: boolean;
}

export const SUITE_USER_AGENT = 'memberkit-testkit-node-suite/1.0 (DataONE conformance)';

/**
 * A thin HTTP client for the suite: real sockets through the global fetch, tokens by role,
 * every XML body handed to the XSD collector.
 */
export class NodeClient {
  constructor(
    readonly baseUrl: string,
    private readonly tokens: { writer: string; admin: string; other: string },
    private readonly collector: XmlBodyCollector,
  ) {}

  /** `{base}{path}`; `path` starts with `/` (e.g. `/v2/object/abc`) or is ''. */
  url(path: string): string {
    return this.baseUrl.replace(/\/+$/, '') + path;
  }

  async request(method: string, path: string, options: RequestOptions = {}): Promise<NodeResponse> {
    const headers: Record<string, string> = { 'User-Agent': SUITE_USER_AGENT, Accept: '*/*', ...options.headers };
    const as = options.as ?? 'public';
    if (typeof as === 'object') headers.Authorization = as.authorization;
    else if (as !== 'public') headers.Authorization = `Bearer ${this.tokens[as]}`;
    let body = options.body;
    if (options.multipart) {
      const mp = multipartBody(options.multipart);
      body = mp.body;
      headers['Content-Type'] = mp.contentType;
    }
    const url = this.url(path);
    const res = await fetch(url, { method, headers, ...(body !== undefined ? { body } : {}), redirect: 'manual' });
    const bytes = new Uint8Array(await res.arrayBuffer());
    const text = new TextDecoder().decode(bytes);
    const shortPath = path.length > 160 ? path.slice(0, 160) + '…' : path;
    const label = `${method} ${shortPath} -> ${res.status}`;
    const out: NodeResponse = { method, url, status: res.status, headers: res.headers, bytes, text, label };
    const isRawObject = options.rawSuccess === true && res.status >= 200 && res.status < 300;
    if (!isRawObject && bytes.length > 0 && looksLikeXml(text, res.headers.get('content-type'))) {
      this.collector.add(label, text);
      try {
        out.doc = parseXml(text, { maxBytes: 64 * 1024 * 1024 });
      } catch {
        // Left to the XSD check, which reports it with xmllint's message.
      }
    }
    return out;
  }

  get(path: string, options?: RequestOptions) {
    return this.request('GET', path, options);
  }
  head(path: string, options?: RequestOptions) {
    return this.request('HEAD', path, options);
  }
  post(path: string, options?: RequestOptions) {
    return this.request('POST', path, options);
  }
  put(path: string, options?: RequestOptions) {
    return this.request('PUT', path, options);
  }
  delete(path: string, options?: RequestOptions) {
    return this.request('DELETE', path, options);
  }
}

// ---- reading parsed documents ----

export function children(node: XmlNode | undefined, name: string): XmlNode[] {
  const v = node?.[name];
  return Array.isArray(v) ? v : [];
}

export function child(node: XmlNode | undefined, name: string): XmlNode | undefined {
  return children(node, name)[0];
}

export function textOf(node: XmlNode | undefined): string | undefined {
  if (node === undefined) return undefined;
  const t = node['#text'];
  return typeof t === 'string' ? t : '';
}

export function childText(node: XmlNode | undefined, name: string): string | undefined {
  return textOf(child(node, name));
}

export function attr(node: XmlNode | undefined, name: string): string | undefined {
  const v = node?.[`@_${name}`];
  return typeof v === 'string' ? v : undefined;
}

function describeResponse(res: NodeResponse): string {
  const body = res.text.length > 1500 ? res.text.slice(0, 1500) + '…' : res.text;
  return `${res.label}\n${body}`;
}

export function expectStatus(res: NodeResponse, status: number): void {
  expect(res.status, describeResponse(res)).toBe(status);
}

/** Success with a DataONE document whose root is `root` (and, if given, in `namespace`). */
export function expectDocument(res: NodeResponse, root: string, namespace?: string): ParsedDocument {
  expectStatus(res, 200);
  expect(res.headers.get('content-type') ?? '', `${res.label}: Content-Type of a typed response`).toMatch(/^(text|application)\/xml\b/i);
  expect(res.doc, `${res.label}: body is not XML`).toBeDefined();
  const doc = res.doc!;
  expect(doc.rootName, describeResponse(res)).toBe(root);
  if (namespace !== undefined) expect(doc.rootNamespace, `${res.label}: namespace of <${root}>`).toBe(namespace);
  expectProtocolDates(res);
  return doc;
}

const DATE_ELEMENTS = /<((?:[\w.-]+:)?(?:dateUploaded|dateSysMetadataModified|dateLogged|replicaVerified|lastHarvested|lastCompleteHarvest))>([^<]*)</g;
const PROTOCOL_DATE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{1,3})?(Z|[+-]\d\d:\d\d)$/;

/** INTEROP: datetimes carry `T`, a zone (`Z` or `+hh:mm`) and at most milliseconds. */
export function expectProtocolDates(res: NodeResponse): void {
  for (const m of res.text.matchAll(DATE_ELEMENTS)) {
    expect(m[2], `${res.label}: <${m[1]}> must look like 2026-11-22T01:49:30.278Z`).toMatch(PROTOCOL_DATE);
  }
}

const decodeEntities = (s: string) =>
  s.replace(/&(#x[0-9a-f]+|#\d+|amp|lt|gt|quot|apos);/gi, (_m, e: string) => {
    const k = e.toLowerCase();
    if (k.startsWith('#x')) return String.fromCodePoint(parseInt(k.slice(2), 16));
    if (k.startsWith('#')) return String.fromCodePoint(parseInt(k.slice(1), 10));
    return ({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[k]!;
  });

export const TYPES_V1 = 'http://ns.dataone.org/service/types/v1';
export const TYPES_V2 = 'http://ns.dataone.org/service/types/v2.0';

/** An identifier answer: `<d1:identifier xmlns:d1="…/types/v1">PID</d1:identifier>`, no whitespace around the PID. */
export function expectIdentifierDocument(res: NodeResponse, pid: string): void {
  expectDocument(res, 'identifier', TYPES_V1);
  const m = /<(?:[\w.-]+:)?identifier\b[^>]*>([^<]*)<\/(?:[\w.-]+:)?identifier>/.exec(res.text);
  expect(m, `${res.label}: identifier element`).not.toBeNull();
  expect(decodeEntities(m![1]!), `${res.label}: identifier text (exact, no surrounding whitespace)`).toBe(pid);
}

/**
 * A DataONE error: HTTP status == errorCode == the exception's code, root `<error>` in no
 * namespace with name, errorCode and detailCode. For HEAD, the DataONE-Exception-* headers.
 */
export function expectError(res: NodeResponse, name: string, status: number, detailCode: string, pid?: string): void {
  expect(res.status, `${describeResponse(res)}\nexpected ${name} (${status}, detailCode ${detailCode})`).toBe(status);
  if (res.method === 'HEAD') {
    expect(res.headers.get('dataone-exception-name'), `${res.label}: DataONE-Exception-Name`).toBe(name);
    expect(res.headers.get('dataone-exception-detailcode'), `${res.label}: DataONE-Exception-DetailCode`).toBe(detailCode);
    expect(res.headers.get('dataone-exception-description'), `${res.label}: DataONE-Exception-Description`).not.toBeNull();
    if (pid !== undefined) {
      for (const h of ['dataone-exception-pid', 'dataone-exception-identifier']) {
        const raw = res.headers.get(h);
        expect(raw, `${res.label}: ${h}`).not.toBeNull();
        const value = raw!.startsWith("UTF-8''") ? decodeURIComponent(raw!.slice(7)) : raw;
        expect(value, `${res.label}: ${h}`).toBe(pid);
      }
    }
    expect(res.bytes.length, `${res.label}: HEAD answers carry no body`).toBe(0);
    return;
  }
  expect(res.doc, `${describeResponse(res)}\nexpected an XML error body`).toBeDefined();
  expect(res.headers.get('content-type') ?? '', `${res.label}: Content-Type of an error body`).toMatch(/^(text|application)\/xml\b/i);
  const doc = res.doc!;
  expect(doc.rootName, describeResponse(res)).toBe('error');
  expect(doc.rootNamespace, `${res.label}: <error> is in no namespace`).toBe('');
  expect(attr(doc.root, 'name'), describeResponse(res)).toBe(name);
  expect(attr(doc.root, 'errorCode'), `${res.label}: errorCode attribute equals the HTTP status`).toBe(String(res.status));
  expect(attr(doc.root, 'detailCode'), describeResponse(res)).toBe(detailCode);
  if (pid !== undefined && attr(doc.root, 'identifier') !== undefined) expect(attr(doc.root, 'identifier')).toBe(pid);
}

/** Any DataONE error body (status == errorCode), whatever the exception. */
export function expectAnyError(res: NodeResponse, status: number): { name: string; detailCode: string } {
  expect(res.status, describeResponse(res)).toBe(status);
  expect(res.doc?.rootName, describeResponse(res)).toBe('error');
  expect(res.doc!.rootNamespace).toBe('');
  expect(attr(res.doc!.root, 'errorCode')).toBe(String(status));
  const detailCode = attr(res.doc!.root, 'detailCode');
  expect(detailCode, `${res.label}: detailCode is required`).toBeDefined();
  return { name: attr(res.doc!.root, 'name') ?? '', detailCode: detailCode! };
}
