import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { MemberNode } from './node.js';

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

/** Serve a Member Node over HTTP (or HTTPS with `tls`) with @hono/node-server. Port 0 picks a free port. */
export async function serveNode(node: Pick<MemberNode, 'app' | 'close'>, options: ServeOptions): Promise<RunningServer> {
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
    const server = serve({ fetch: node.app.fetch, port: options.port, hostname: options.hostname ?? '0.0.0.0', ...https }, (info: AddressInfo) => {
      server.off('error', reject);
      // Keep idle connections longer than clients and load balancers do (60 s), so a client
      // never reuses a connection the server is closing at that moment ("other side closed").
      const http = server as unknown as { keepAliveTimeout: number; headersTimeout: number };
      http.keepAliveTimeout = 65_000;
      http.headersTimeout = 66_000;
      resolve({
        server,
        port: info.port,
        close: () =>
          new Promise<void>((done) => {
            server.close(() => void node.close().finally(done));
            (server as unknown as { closeIdleConnections?: () => void }).closeIdleConnections?.();
          }),
      });
    });
    // A port in use or an address not ours: the caller reports it (not an unhandled 'error').
    server.once('error', reject);
  });
}
