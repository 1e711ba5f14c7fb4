// Baseline: a bare Hono app on @hono/node-server answering each route with a fixed status,
// headers and body (captured from memberkit's answer, so the bytes on the wire match).
// argv: <routes.json> where routes.json is [{ path, status, headers, body }].
// Prints `LISTENING <port>`.
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';

interface Route {
  path: string;
  status: number;
  headers: Record<string, string>;
  body: string | null;
}

const routes = JSON.parse(readFileSync(process.argv[2]!, 'utf8')) as Route[];
const app = new Hono();
for (const route of routes) {
  app.get(route.path, () => new Response(route.body, { status: route.status, headers: route.headers }));
}
const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }, (info: AddressInfo) => {
  console.log(`LISTENING ${info.port}`);
});
process.once('SIGTERM', () => server.close(() => process.exit(0)));
