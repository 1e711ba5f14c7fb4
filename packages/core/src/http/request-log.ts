import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import type { DataONEException } from '@memberkit/types';
import { isUnexpected } from '../errors.js';
import type { Logger } from '../logger.js';

/**
 * One JSON log line per request, at info: method, route pattern, DataONE operation, status,
 * bytes in and out, duration (whole milliseconds, until the last byte was handed to the
 * socket) and the caller's subject. Never the query string or a header: no token reaches a log.
 * Expected failures (4xx, NotImplemented) are part of that line, without a stack; server
 * faults get their own error line with the cause.
 */
export interface RequestRecord {
  method: string;
  /** The matched route pattern (`/mn/v2/object/:id`), not the path: identifiers stay out of logs. */
  route: string;
  /** The DataONE operation (`MNRead.get`), when the route is one. */
  op?: string;
  status: number;
  bytesIn: number;
  bytesOut: number;
  durationMs: number;
  subject?: string;
  /** The DataONE exception answered, when the request failed. */
  error?: string;
  detailCode?: string;
  /** The client went away before the response was complete. */
  aborted?: boolean;
}

export type RequestObserver = (record: RequestRecord) => void;

interface Facts {
  op?: string;
  route?: string;
  subject?: string;
  error?: string;
  detailCode?: string;
}

/**
 * What the handlers learn about a request (operation, caller, failure), kept per response: a
 * route that answers by fetching the app again (the bare base path) shares its outer facts.
 */
const FACTS = Symbol('memberkit request facts');
type Carrier = { [FACTS]?: Facts };
const observers = new WeakMap<Hono, RequestObserver[]>();

/** Kept on the response object itself: a WeakMap entry per request costs the collector more. */
function carrierOf(c: Context): Carrier {
  return ((c.env as { outgoing?: object } | undefined)?.outgoing ?? c.req.raw) as Carrier;
}

function factsOf(c: Context): Facts {
  const carrier = carrierOf(c);
  return (carrier[FACTS] ??= {});
}

/** The operation a route answers, and its pattern (called by the route wrapper). */
export function noteOperation(c: Context, op: string): void {
  const f = factsOf(c);
  f.op ??= op;
  f.route ??= c.req.routePath;
}

/** Who is calling (called once the session is resolved). */
export function noteSubject(c: Context, subject: string): void {
  factsOf(c).subject ??= subject;
}

/**
 * A failed operation: expected ones (the caller's mistake, or an API this node does not
 * implement) go into the request line; faults are logged at error with the cause and stack.
 */
export function noteFailure(c: Context, logger: Logger, err: unknown, exception: DataONEException, context: { op: string; pid?: string }): void {
  const f = factsOf(c);
  f.error ??= exception.exceptionName;
  f.detailCode ??= exception.detailCode;
  if (isUnexpected(err) && exception.exceptionName !== 'NotImplemented') logger.error({ err, ...context }, 'operation failed');
}

/** Hear every finished request of `app` (metrics). */
export function observeRequests(app: Hono, observer: RequestObserver): void {
  observers.get(app)?.push(observer);
}

/** A Content-Length value as a number (undefined when absent or not a plain count). */
function declaredLength(v: unknown): number | undefined {
  return v === undefined || v === null || !/^\d+$/.test(String(v)) ? undefined : Number(v);
}

/** Count what a Node response writes (headers excluded). */
function countWrites(outgoing: ServerResponse): () => number {
  let bytes = 0;
  const add = (chunk: unknown, encoding?: unknown) => {
    if (typeof chunk === 'string') bytes += Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
    else if (chunk instanceof Uint8Array) bytes += chunk.byteLength;
  };
  const write = outgoing.write;
  const end = outgoing.end;
  outgoing.write = function (this: ServerResponse, chunk: unknown, ...rest: unknown[]) {
    add(chunk, rest[0]);
    return (write as (...a: unknown[]) => boolean).call(this, chunk, ...rest);
  } as typeof outgoing.write;
  outgoing.end = function (this: ServerResponse, chunk?: unknown, ...rest: unknown[]) {
    // A whole body in one end(): its declared length, not a second scan of a large page.
    const declared = bytes === 0 && typeof chunk === 'string' ? declaredLength(this.getHeader('content-length')) : undefined;
    if (declared !== undefined) bytes = declared;
    else if (typeof chunk !== 'function') add(chunk, rest[0]);
    return (end as (...a: unknown[]) => ServerResponse).call(this, chunk, ...rest);
  } as typeof outgoing.end;
  return () => bytes;
}

/** The middleware: installed first by createApp. */
export function requestLog(app: Hono, logger: Logger): MiddlewareHandler {
  const heard: RequestObserver[] = [];
  observers.set(app, heard);
  return async (c, next) => {
    const env = c.env as { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined;
    // A nested fetch of the same response (bare base path) is logged once, by the outer call.
    if (env?.outgoing && (env.outgoing as Carrier)[FACTS]) return next();
    const started = performance.now();
    const f = factsOf(c);
    const bytesIn = declaredLength(env?.incoming ? env.incoming.headers['content-length'] : c.req.raw.headers.get('content-length')) ?? 0;
    const written = env?.outgoing ? countWrites(env.outgoing) : undefined;
    const emit = (status: number, bytesOut: number, aborted: boolean) => {
      const record: RequestRecord = {
        method: c.req.method,
        route: f.route ?? '(no route)',
        ...(f.op ? { op: f.op } : {}),
        status,
        bytesIn,
        bytesOut,
        durationMs: Math.round(performance.now() - started),
        ...(f.subject ? { subject: f.subject } : {}),
        ...(f.error ? { error: f.error, detailCode: f.detailCode } : {}),
        ...(aborted ? { aborted } : {}),
      };
      logger.info(record, 'request');
      for (const o of heard) o(record);
    };
    await next();
    const status = c.res.status;
    if (env?.outgoing && written) {
      const outgoing = env.outgoing;
      // Logged once the body is sent (or the client left): the duration covers streaming.
      outgoing.once('close', () => emit(status, written(), !outgoing.writableFinished));
    } else {
      emit(status, declaredLength(c.res.headers.get('content-length')) ?? 0, false);
    }
  };
}
