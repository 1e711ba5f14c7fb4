// listenFirst: the port is bound before the node behind it is built (the CLI's `serve` and
// `cn serve`), so a port chosen by the system cannot be taken by another process in between.
import { request } from 'node:http';
import { createServer, type Server } from 'node:net';
import { Hono } from 'hono';
import { afterEach, describe, expect, it } from 'vitest';
import { listenFirst } from '../../src/server.js';

function get(port: number, path: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject).end();
  });
}

function nodeAnswering(text: string): { app: Hono; close(): Promise<void>; closed: boolean } {
  const app = new Hono().get('/ping', (c) => c.text(text));
  const node = { app, closed: false, close: async () => void (node.closed = true) };
  return node;
}

let blocker: Server | undefined;
afterEach(() => blocker?.close());

describe('listenFirst', () => {
  it('port 0 is bound at once; a request sent before the node exists waits and is answered by it', async () => {
    const pending = await listenFirst({ port: 0, hostname: '127.0.0.1' });
    expect(pending.port).toBeGreaterThan(0);
    // Nobody else can bind the chosen port while the node is being built.
    blocker = createServer();
    const taken = await new Promise<string>((resolve) => {
      blocker!.once('error', (e: NodeJS.ErrnoException) => resolve(e.code ?? 'error'));
      blocker!.listen(pending.port, '127.0.0.1', () => resolve('bound'));
    });
    expect(taken).toBe('EADDRINUSE');
    const early = get(pending.port, '/ping');
    await new Promise((r) => setTimeout(r, 150));
    const node = nodeAnswering('built');
    const running = pending.attach(node);
    expect(await early).toEqual({ status: 200, body: 'built' });
    expect(await get(running.port, '/ping')).toEqual({ status: 200, body: 'built' });
    await running.close();
    expect(node.closed).toBe(true);
  });

  it('a node that could not be built: waiting requests get 503 and the port is given up', async () => {
    const pending = await listenFirst({ port: 0, hostname: '127.0.0.1' });
    const early = get(pending.port, '/ping');
    await new Promise((r) => setTimeout(r, 100));
    await pending.close();
    expect((await early).status).toBe(503);
    blocker = createServer();
    await new Promise<void>((resolve, reject) => blocker!.once('error', reject).listen(pending.port, '127.0.0.1', () => resolve()));
  });

  it('a port in use is refused with EADDRINUSE before any node is built', async () => {
    blocker = createServer();
    const port = await new Promise<number>((resolve) => blocker!.listen(0, '127.0.0.1', () => resolve((blocker!.address() as { port: number }).port)));
    await expect(listenFirst({ port, hostname: '127.0.0.1' })).rejects.toMatchObject({ code: 'EADDRINUSE' });
  });
});
