import type { AddressInfo } from 'node:net';
import { serve, type ServerType } from '@hono/node-server';
import type { MemberNode } from './node.js';

export interface ServeOptions {
  port: number;
  hostname?: string;
}

export interface RunningServer {
  server: ServerType;
  port: number;
  /** Stop accepting connections, wait for in-flight requests, close the node's adapters. */
  close(): Promise<void>;
}

/** Serve a Member Node over HTTP with @hono/node-server. Port 0 picks a free port. */
export async function serveNode(node: MemberNode, options: ServeOptions): Promise<RunningServer> {
  return new Promise((resolve) => {
    const server = serve({ fetch: node.app.fetch, port: options.port, hostname: options.hostname ?? '0.0.0.0' }, (info: AddressInfo) => {
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
  });
}
