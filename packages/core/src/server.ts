import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { MemberNode } from './node.js';

/** How long a stop waits for requests in progress before it closes their connections. */
const STOP_GRACE_MS = 5_000;
/** How often a stop closes the connections that became idle since it began. */
const STOP_SWEEP_MS = 20;

export interface ServeOptions {
  port: number;
  hostname?: string;
  /**
   * Serve HTTPS: the server's certificate (chain) and key (PEM), and the CA certificates
   * (PEM) client certificates are verified against. Client certificates are requested, not
   * required (a caller without one is public); whether one verified is read per request
   * by the SessionResolver, which answers InvalidToken for one that did not.
   */
  tls?: { cert: string; key: string; ca?: string[] };
}

export interface RunningServer {
  server: ServerType;
  port: number;
  /** Stop accepting connections, wait for in-flight requests, close the node's adapters. */
  close(): Promise<void>;
}

/** A port bound before the node behind it is built: requests that arrive meanwhile wait for `attach`. */
export interface PendingServer {
  server: ServerType;
  /** The bound port (port 0 resolved). */
  port: number;
  /** Serve `node` on this port from now on (requests already waiting are answered by it). */
  attach(node: Pick<MemberNode, 'app' | 'close'>): RunningServer;
  /** Give the port up without serving (the node could not be built): waiting requests get 503. */
  close(): Promise<void>;
}

type Fetch = MemberNode['app']['fetch'];

/**
 * Bind the port first, build the node after: a port chosen by the system (0) is the one the
 * node's derived baseURL names, with no window in which another process takes it, and a port
 * in use is reported before any database is opened. Port 0 picks a free port.
 */
export function listenFirst(options: ServeOptions): Promise<PendingServer> {
  let attached: Fetch | undefined;
  let settle!: (fetch: Fetch) => void;
  const ready = new Promise<Fetch>((resolve) => (settle = resolve));
  const starting: Fetch = (req, env) => ready.then((fetch) => fetch(req, env));
  return new Promise((resolve, reject) => {
    const tls = options.tls;
    const https = tls
      ? {
          createServer: createHttpsServer,
          serverOptions: {
            cert: tls.cert,
            key: tls.key,
            ...(tls.ca?.length ? { ca: tls.ca, requestCert: true } : { requestCert: false }),
            rejectUnauthorized: false,
          },
        }
      : {};
    const fetch: Fetch = (req, env) => (attached ?? starting)(req, env);
    const server = serve({ fetch, port: options.port, hostname: options.hostname ?? '0.0.0.0', ...https }, (info: AddressInfo) => {
      server.off('error', reject);
      // Keep idle connections longer than clients and load balancers do (60 s), so a client
      // never reuses a connection the server is closing at that moment ("other side closed").
      const http = server as unknown as { keepAliveTimeout: number; headersTimeout: number };
      http.keepAliveTimeout = 65_000;
      http.headersTimeout = 66_000;
      const closeServer = (after: () => Promise<void>) =>
        new Promise<void>((done) => {
          const connections = server as unknown as { closeIdleConnections?: () => void; closeAllConnections?: () => void };
          // close() closes the connections idle at that moment; one whose response is still being
          // written (its client may already hold every byte: the server ends the response after the
          // body stream reports its end) becomes idle later and would keep the process for its
          // keep-alive timeout, a minute. So idle connections are closed again until the server has
          // closed; a request still running after the grace period has its connection closed.
          const sweep = setInterval(() => connections.closeIdleConnections?.(), STOP_SWEEP_MS).unref();
          const grace = setTimeout(() => connections.closeAllConnections?.(), STOP_GRACE_MS).unref();
          server.close(() => {
            clearInterval(sweep);
            clearTimeout(grace);
            void after().finally(done);
          });
          connections.closeIdleConnections?.();
        });
      resolve({
        server,
        port: info.port,
        attach(node) {
          attached = node.app.fetch;
          settle(attached);
          return { server, port: info.port, close: () => closeServer(() => node.close()) };
        },
        close() {
          settle(() => new Response('the node did not start\n', { status: 503, headers: { 'Content-Type': 'text/plain', Connection: 'close' } }));
          return closeServer(async () => undefined);
        },
      });
    });
    // A port in use or an address not ours: the caller reports it (not an unhandled 'error').
    server.once('error', reject);
  });
}

/** Serve a Member Node over HTTP (or HTTPS with `tls`) with @hono/node-server. Port 0 picks a free port. */
export async function serveNode(node: Pick<MemberNode, 'app' | 'close'>, options: ServeOptions): Promise<RunningServer> {
  return (await listenFirst(options)).attach(node);
}
