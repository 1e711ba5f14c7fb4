import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Context, Hono, MiddlewareHandler } from 'hono';
import type { DataONEException } from '@memberkit/types';
import { isUnexpected } from '../errors.js';
import type { Logger } from '../logger.js';
import { carriesAppHeaders } from './responses.js';

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
/** null: a request nobody records (no request line at the logger's level, no observer). */
type Carrier = { [FACTS]?: Facts | null };
const observers = new WeakMap<Hono, RequestObserver[]>();

/** Kept on the response object itself: a WeakMap entry per request costs the collector more. */
function carrierOf(c: Context): Carrier {
  return ((c.env as { outgoing?: object } | undefined)?.outgoing ?? c.req.raw) as Carrier;
}

function factsOf(c: Context): Facts | undefined {
  const carrier = carrierOf(c);
  const facts = carrier[FACTS];
  return facts === null ? undefined : (facts ?? (carrier[FACTS] = {}));
}

/** The operation a route answers, and its pattern (called by the route wrapper). */
export function noteOperation(c: Context, op: string): void {
  const f = factsOf(c);
  if (!f) return;
  f.op ??= op;
  f.route ??= c.req.routePath;
}

/** Who is calling (called once the session is resolved). */
export function noteSubject(c: Context, subject: string): void {
  const f = factsOf(c);
  if (f) f.subject ??= subject;
}

/**
 * A failed operation: expected ones (the caller's mistake, or an API this node does not
 * implement) go into the request line; faults are logged at error with the cause and stack.
 */
export function noteFailure(c: Context, logger: Logger, err: unknown, exception: DataONEException, context: { op: string; pid?: string }): void {
  const f = factsOf(c);
  if (f) {
    f.error ??= exception.exceptionName;
    f.detailCode ??= exception.detailCode;
  }
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

/**
 * What a Node response has written (headers excluded), counted by its write and end, which are
 * replaced by the module-level functions below. Kept on the response under symbols: closures
 * made per request cost a name definition each under tsx (esbuild keepNames).
 */
const WRITTEN = Symbol('memberkit bytes written');
const WRITE = Symbol('memberkit original write');
const END = Symbol('memberkit original end');
type Counted = ServerResponse & { [WRITTEN]: number; [WRITE]: (...a: unknown[]) => boolean; [END]: (...a: unknown[]) => ServerResponse };

function sizeOf(chunk: unknown, encoding?: unknown): number {
  if (typeof chunk === 'string') return Buffer.byteLength(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
  return chunk instanceof Uint8Array ? chunk.byteLength : 0;
}

function countedWrite(this: Counted, chunk: unknown, ...rest: unknown[]): boolean {
  this[WRITTEN] += sizeOf(chunk, rest[0]);
  return this[WRITE].call(this, chunk, ...rest);
}

function countedEnd(this: Counted, chunk?: unknown, ...rest: unknown[]): ServerResponse {
  // A whole body in one end(): its declared length, not a second scan of a large page.
  const declared = this[WRITTEN] === 0 && typeof chunk === 'string' ? declaredLength(this.getHeader('content-length')) : undefined;
  if (declared !== undefined) this[WRITTEN] = declared;
  else if (typeof chunk !== 'function') this[WRITTEN] += sizeOf(chunk, rest[0]);
  return this[END].call(this, chunk, ...rest);
}

function countWrites(outgoing: ServerResponse): Counted {
  const counted = outgoing as Counted;
  counted[WRITTEN] = 0;
  counted[WRITE] = outgoing.write as Counted[typeof WRITE];
  counted[END] = outgoing.end as Counted[typeof END];
  outgoing.write = countedWrite as ServerResponse['write'];
  outgoing.end = countedEnd as ServerResponse['end'];
  return counted;
}

interface Pending {
  c: Context;
  facts: Facts;
  started: number;
  bytesIn: number;
  logger: Logger;
  heard: RequestObserver[];
  /** The answer's status once the route has answered (0 until then: no record yet). */
  status: number;
  /** The connection closed before the route answered (a client that left mid-upload). */
  closedEarly: boolean;
}

function emitRecord(p: Pending, bytesOut: number, aborted: boolean): void {
  const f = p.facts;
  const record: RequestRecord = {
    method: p.c.req.method,
    route: f.route ?? '(no route)',
    ...(f.op ? { op: f.op } : {}),
    status: p.status,
    bytesIn: p.bytesIn,
    bytesOut,
    durationMs: Math.round(performance.now() - p.started),
    ...(f.subject ? { subject: f.subject } : {}),
    ...(f.error ? { error: f.error, detailCode: f.detailCode } : {}),
    ...(aborted ? { aborted } : {}),
  };
  p.logger.info(record, 'request');
  for (const o of p.heard) o(record);
}

const PENDING = Symbol('memberkit pending request record');

/** The response's 'close' listener: one function for every request, its facts on the response. */
function onClose(this: Counted & { [PENDING]: Pending }): void {
  const p = this[PENDING];
  // Still in the route (reading a body the client stopped sending): written once it answers.
  if (p.status === 0) p.closedEarly = true;
  else emitRecord(p, this[WRITTEN], !this.writableFinished);
}

/**
 * The middleware: installed first by createBaseApp. Also answers every response with
 * `X-Content-Type-Options: nosniff` (`headers`, set on Node's response once the route answered
 * and before node-server writes the answer, so a route's Response keeps its light form), unless
 * the route wrote its answer itself or its Response carries them (carriesAppHeaders): handlers that
 * write node's response themselves put them in their own head.
 */
export function requestLog(app: Hono, logger: Logger, headers: Readonly<Record<string, string>> = {}): MiddlewareHandler {
  const heard: RequestObserver[] = [];
  observers.set(app, heard);
  const names = Object.keys(headers);
  const setAppHeaders = (c: Context, outgoing: ServerResponse): void => {
    if (outgoing.headersSent || carriesAppHeaders(c.res)) return;
    for (const name of names) outgoing.setHeader(name, headers[name]!);
  };
  return async (c, next) => {
    const env = c.env as { incoming?: IncomingMessage; outgoing?: ServerResponse } | undefined;
    const outgoing = env?.outgoing;
    if (outgoing) {
      // A nested fetch of the same response (bare base path) is logged once, by the outer call.
      if ((outgoing as Carrier)[FACTS] !== undefined) return next();
      if (heard.length === 0 && logger.isLevelEnabled?.('info') === false) {
        // Nobody reads this request's record: nothing is counted or kept for it.
        (outgoing as Carrier)[FACTS] = null;
        await next();
        setAppHeaders(c, outgoing);
        return;
      }
    }
    const p: Pending = {
      c,
      facts: factsOf(c)!,
      started: performance.now(),
      bytesIn: declaredLength(env?.incoming ? env.incoming.headers['content-length'] : c.req.raw.headers.get('content-length')) ?? 0,
      logger,
      heard,
      status: 0,
      closedEarly: false,
    };
    if (outgoing) {
      const counted = countWrites(outgoing) as Counted & { [PENDING]: Pending };
      // Listened to before the route runs: a connection that closes while the route still
      // reads the request (an upload cut short) gets its line too, marked aborted.
      counted[PENDING] = p;
      counted.on('close', onClose);
      try {
        await next();
        setAppHeaders(c, outgoing);
      } finally {
        // Logged once the body is sent (or the client left): the duration covers streaming.
        p.status = c.res.status;
        // A route that wrote and ended the response itself may see it close first: not aborted.
        if (p.closedEarly) emitRecord(p, counted[WRITTEN], !counted.writableFinished);
      }
      return;
    }
    await next();
    for (const name of names) c.res.headers.set(name, headers[name]!);
    p.status = c.res.status;
    emitRecord(p, declaredLength(c.res.headers.get('content-length')) ?? 0, false);
  };
}
