import { Readable } from 'node:stream';
import { Agent, request, type Dispatcher } from 'undici';
import {
  exceptionFromHeaders,
  exceptionFromXml,
  ServiceFailure,
  type ApiVersion,
  type DataONEException,
} from '@memberkit/types';
import { multipartBody, type Part } from './multipart.js';

/** How to reach and authenticate to a node. */
export interface ClientOptions {
  /** The node's base URL without the version, e.g. `https://mn.example.org/mn`. */
  baseUrl: string;
  /** API version of the requests (default v2). */
  version?: ApiVersion;
  /** A JWT sent as `Authorization: Bearer`, or a function giving the current one. */
  token?: string | (() => string | Promise<string>);
  /** A client certificate for TLS client authentication (PEM). */
  certificate?: { cert: string | Buffer; key: string | Buffer };
  /** CA bundle(s) to trust for the node's server certificate (PEM). */
  ca?: string | Buffer | Array<string | Buffer>;
  /** Time to wait for response headers, and between body chunks (default 60 s). */
  timeoutMs?: number;
  /** Retries of idempotent requests (GET, HEAD) on network errors, 429 and 503 (default 2). */
  retries?: number;
  /** User-Agent header (default `memberkit-client/0.1`). */
  userAgent?: string;
  /** An undici dispatcher to use instead of one built from the options. */
  dispatcher?: Dispatcher;
}

export interface RequestSpec {
  method: 'GET' | 'HEAD' | 'POST' | 'PUT' | 'DELETE';
  /** Path under the version, with identifiers already escaped (use `segment()`). */
  path: string;
  query?: Record<string, string | number | boolean | Date | undefined>;
  parts?: readonly Part[];
  headers?: Record<string, string>;
  /** Send no version prefix (the base address itself). */
  unversioned?: boolean;
}

export interface RawResponse {
  status: number;
  headers: Record<string, string>;
  body: Readable & AsyncIterable<Uint8Array>;
}

/** One path segment, percent-encoded so `/`, `?`, `#`, `%`, spaces and unicode stay in it. */
export function segment(id: string): string {
  return encodeURIComponent(id);
}

function flatHeaders(h: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(h)) if (v !== undefined) out[k.toLowerCase()] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

const RETRYABLE = new Set([429, 503]);

/** The HTTP layer shared by the Member and Coordinating Node clients. */
export class Transport {
  readonly version: ApiVersion;
  private readonly base: string;
  private readonly dispatcher: Dispatcher;
  private readonly ownDispatcher: boolean;

  constructor(private readonly options: ClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    this.version = options.version ?? 'v2';
    const timeout = options.timeoutMs ?? 60_000;
    this.ownDispatcher = !options.dispatcher;
    this.dispatcher =
      options.dispatcher ??
      new Agent({
        headersTimeout: timeout,
        bodyTimeout: timeout,
        connect: {
          ...(options.certificate ? { cert: options.certificate.cert, key: options.certificate.key } : {}),
          ...(options.ca ? { ca: options.ca } : {}),
        },
      });
  }

  url(spec: Pick<RequestSpec, 'path' | 'query' | 'unversioned'>): string {
    const prefix = spec.unversioned ? this.base : `${this.base}/${this.version}`;
    const params = new URLSearchParams();
    for (const [k, v] of Object.entries(spec.query ?? {})) {
      if (v === undefined) continue;
      params.append(k, v instanceof Date ? v.toISOString() : String(v));
    }
    const q = params.toString();
    return `${prefix}${spec.path}${q ? `?${q}` : ''}`;
  }

  /** Send a request; a DataONE error response is thrown as its typed exception. */
  async send(spec: RequestSpec, signal?: AbortSignal): Promise<RawResponse> {
    const idempotent = spec.method === 'GET' || spec.method === 'HEAD';
    const attempts = idempotent ? 1 + (this.options.retries ?? 2) : 1;
    let lastError: unknown;
    for (let attempt = 0; attempt < attempts; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, Math.min(2000, 100 * 2 ** attempt)));
      try {
        const res = await this.once(spec, signal);
        if (idempotent && RETRYABLE.has(res.status) && attempt + 1 < attempts) {
          res.body.resume();
          continue;
        }
        if (res.status >= 400 || (res.status !== 200 && res.status !== 206 && res.status !== 303)) throw await this.toException(res, spec.method);
        return res;
      } catch (err) {
        if (isDataONE(err) || signal?.aborted || !idempotent) throw err;
        lastError = err;
      }
    }
    throw lastError;
  }

  private async once(spec: RequestSpec, signal?: AbortSignal): Promise<RawResponse> {
    const headers: Record<string, string> = {
      'user-agent': this.options.userAgent ?? 'memberkit-client/0.1',
      accept: 'text/xml, application/xml, */*',
      ...spec.headers,
    };
    const token = typeof this.options.token === 'function' ? await this.options.token() : this.options.token;
    if (token) headers.authorization = `Bearer ${token}`;
    let body: AsyncIterable<Uint8Array> | undefined;
    if (spec.parts) {
      const mp = multipartBody(spec.parts);
      headers['content-type'] = mp.contentType;
      headers['content-length'] = String(mp.length);
      body = mp.body;
    }
    const res = await request(this.url(spec), {
      method: spec.method,
      headers,
      dispatcher: this.dispatcher,
      ...(body ? { body: Readable.from(body, { objectMode: false }) } : {}),
      ...(signal ? { signal } : {}),
    });
    return { status: res.statusCode, headers: flatHeaders(res.headers), body: res.body as unknown as RawResponse['body'] };
  }

  private async toException(res: RawResponse, method: string): Promise<DataONEException> {
    const fromHeaders = exceptionFromHeaders(res.headers, res.status);
    if (method === 'HEAD' || fromHeaders) {
      res.body.resume();
      return fromHeaders ?? new ServiceFailure({ description: `HTTP ${res.status} without DataONE exception headers`, errorCode: res.status });
    }
    const text = await readText(res.body, 1 << 20);
    try {
      return exceptionFromXml(text);
    } catch {
      return new ServiceFailure({ description: `HTTP ${res.status} with a body that is not a DataONE error: ${text.slice(0, 300)}`, errorCode: res.status });
    }
  }

  async close(): Promise<void> {
    if (this.ownDispatcher) await this.dispatcher.close();
  }
}

function isDataONE(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as Record<symbol, unknown>)[Symbol.for('memberkit.DataONEException')] === true;
}

/** Read a whole (small) body as text, refusing more than `max` bytes. */
export async function readText(body: AsyncIterable<Uint8Array>, max = 64 * 1024 * 1024): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of body) {
    size += c.byteLength;
    if (size > max) throw new ServiceFailure({ description: `response larger than ${max} bytes` });
    chunks.push(Buffer.from(c));
  }
  return Buffer.concat(chunks).toString('utf8');
}
