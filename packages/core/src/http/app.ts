import { Hono, type Context } from 'hono';
import type { ApiVersion } from '@memberkit/types';
import { fail, toDataONEException, type Operation } from '../errors.js';
import type { CallContext } from '../session.js';
import type { Logger } from '../logger.js';
import type { OperationRoute } from '../extension.js';
import type { HeaderReader, SessionResolver } from '../services/session-resolver.js';
import { headerReader } from './request-headers.js';
import { clientSignal } from './request-body.js';
import { QueryParams } from './params.js';
import { errorResponse, NOSNIFF } from './responses.js';
import { registerRoutes } from './routes.js';
import { noteFailure, noteOperation, noteSubject, requestLog } from './request-log.js';
import { registerUnavailableApis } from './unavailable.js';
import type { NodeServices } from './services.js';

/**
 * The raw request path, not decoded: routing happens on raw segments so that an identifier
 * holding `%2F` stays one segment; route parameters are then decoded exactly once.
 */
export function rawPath(request: Request): string {
  const url = request.url;
  const start = url.indexOf('/', url.indexOf('://') + 3);
  if (start < 0) return '/';
  const q = url.indexOf('?', start);
  return url.slice(start, q < 0 ? undefined : q);
}

export interface AppOptions {
  basePath: string;
}

/**
 * A Hono app routed on raw paths, with the request log and `X-Content-Type-Options` on every
 * answer: the frame of a Member Node's and a Coordinating Node's HTTP face.
 */
export function createBaseApp(logger: Logger): Hono {
  const app = new Hono({ getPath: rawPath });
  // No client may guess a type other than the one declared (uploaded bytes are served as is).
  app.use('*', requestLog(app, logger, { 'X-Content-Type-Options': NOSNIFF }));
  return app;
}

/**
 * The call context of one HTTP request. A class, not an object literal with a getter: a
 * literal's accessor closure lives on a hidden class of its own, in old space, which kept
 * every request's objects alive through young-generation collections (measured: 6 KB of
 * each cached read promoted, a third of the time of a getSystemMetadata in the collector).
 */
class RequestCallContext implements CallContext {
  readonly #c: Context;
  readonly #sessions: SessionResolver;
  readonly #peer: string;
  readonly #headers: HeaderReader;
  #ipAddress: string | undefined;

  constructor(c: Context, readonly session: CallContext['session'], sessions: SessionResolver, peer: string, headers: HeaderReader, readonly version: ApiVersion) {
    this.#c = c;
    this.#sessions = sessions;
    this.#peer = peer;
    this.#headers = headers;
  }

  /** The caller's address, worked out on first use (reads log none; writes and downloads do). */
  get ipAddress(): string {
    return (this.#ipAddress ??= this.#sessions.clientAddress(this.#peer, this.#headers));
  }

  get userAgent(): string {
    return this.#headers.get('user-agent') ?? '';
  }

  /** Made on first use (most operations never read it): see clientSignal. */
  get signal(): AbortSignal {
    return clientSignal(this.#c);
  }
}

/**
 * The operation wrapper of API `version`: resolves the caller's session, builds the call
 * context and query parameters, and answers any failure as `op`'s DataONE exception (as
 * headers only on HEAD), logged with the request.
 */
export function operationRoute(deps: { sessions: SessionResolver; logger: Logger }, version: ApiVersion): OperationRoute {
  return (op: Operation, handler: (c: Context, ctx: CallContext, q: QueryParams) => Promise<Response>) =>
    async (c: Context): Promise<Response> => {
      try {
        noteOperation(c, op);
        const socket = (c.env as { incoming?: { socket?: import('node:tls').TLSSocket } } | undefined)?.incoming?.socket;
        const headers = headerReader(c);
        const peer = socket?.remoteAddress ?? '127.0.0.1';
        const resolving = deps.sessions.resolve(op, socket && 'encrypted' in socket ? { headers, tlsSocket: socket, remoteAddress: peer } : { headers, remoteAddress: peer });
        const session = resolving instanceof Promise ? await resolving : resolving;
        noteSubject(c, session.subject);
        const ctx = new RequestCallContext(c, session, deps.sessions, peer, headers, version);
        return await handler(c, ctx, new QueryParams(op, c.req.url));
      } catch (err) {
        const pid = c.req.param('id');
        const exception = toDataONEException(op, err, pid);
        noteFailure(c, deps.logger, err, exception, { op, ...(pid ? { pid } : {}) });
        return errorResponse(exception, c.req.method);
      }
    };
}

/**
 * Every path under the base answers a DataONE error document: unknown paths and methods
 * NotFound (as `operation` raises it, detailCode 0), unhandled failures ServiceFailure.
 * `api` names the interface in the hint ("the Member Node API").
 */
export function answerUnknownPaths(app: Hono, options: { basePath: string; logger: Logger; operation: Operation; api: string }): void {
  const { basePath, logger, operation } = options;
  app.notFound((c) => {
    const path = rawPath(c.req.raw);
    const known = path.startsWith(basePath + '/v1') || path.startsWith(basePath + '/v2') || path === basePath;
    const err = fail(operation, 'NotFound', known
      ? `no operation '${c.req.method} ${path}' on this node (wrong method or path; see ${options.api})`
      : `'${path}' is not a path of this node; the API is under ${basePath || '/'}/v1 and ${basePath}/v2`);
    return errorResponse(err.withDetailCode('0'), c.req.method);
  });
  app.onError((err, c) => {
    logger.error({ err }, 'unhandled error');
    return errorResponse(toDataONEException(operation, err).withDetailCode('0'), c.req.method);
  });
}

/**
 * The Member Node's HTTP face: `{basePath}/v1/...` and `{basePath}/v2/...`. Every answer
 * under the base path, unknown paths included, is a DataONE document or error.
 */
export function createApp(services: NodeServices, options: AppOptions): Hono {
  const basePath = options.basePath.replace(/\/+$/, '');
  const app = createBaseApp(services.logger);
  const operationFor = (version: ApiVersion) => operationRoute(services, version);

  for (const version of ['v1', 'v2'] as const) {
    const api = new Hono({ getPath: rawPath });
    const operation = operationFor(version);
    registerRoutes(api, version, services, operation);
    for (const ext of services.extensions) ext.routes?.(api, version, { ...services.kit, operation });
    registerUnavailableApis(api, operation);
    app.route(`${basePath}/${version}`, api);
    // getCapabilities is `GET /` under the version path: with and without the trailing slash.
    app.get(`${basePath}/${version}/`, (c) => api.fetch(new Request(new URL(`/node`, c.req.url), c.req.raw), c.env));
  }
  // "The capabilities document is also served at the bare base address for convenience."
  const bare = operationFor('v2')('MNCore.getCapabilities', async (c) => app.fetch(new Request(new URL(`${basePath}/v2/node`, c.req.url), { headers: c.req.raw.headers }), c.env));
  app.get(basePath === '' ? '/' : basePath, bare);
  if (basePath !== '') app.get(`${basePath}/`, bare);

  answerUnknownPaths(app, { basePath, logger: services.logger, operation: 'MNCore.getCapabilities', api: 'the Member Node API' });
  return app;
}
