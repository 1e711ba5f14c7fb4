// Stopping the server (SIGTERM in `memberkit serve`): a keep-alive connection whose response was
// still being written when the stop began is closed as soon as that response ends, not after the
// keep-alive timeout (a minute) nor after the grace period for requests in progress (5 s).
import { Agent, request } from 'node:http';
import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { serveNode } from '../../src/server.js';

describe('server stop', () => {
  it('closes a connection whose response ends after the stop began, when it ends', async () => {
    const body = 'all of it';
    let endBody!: () => void;
    const app = new Hono().get('/slow-end', () => {
      // Every byte is sent at once; the stream reports its end later (as a file's stream does
      // after one more read): the client is done before the server finishes the response.
      const stream = new ReadableStream<Uint8Array>({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(body));
          endBody = () => controller.close();
        },
      });
      return new Response(stream, { headers: { 'Content-Length': String(body.length) } });
    });
    let nodeClosed = false;
    const running = await serveNode({ app, close: async () => void (nodeClosed = true) } as never, { port: 0, hostname: '127.0.0.1' });
    const agent = new Agent({ keepAlive: true });
    let socketClosedAt = 0;
    let socketClosed!: Promise<void>;
    const received = await new Promise<string>((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: running.port, path: '/slow-end', agent }, (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d)).on('end', () => resolve(text));
      });
      req.on('socket', (socket) => (socketClosed = new Promise((closed) => socket.once('close', () => closed(void (socketClosedAt = Date.now()))))));
      req.on('error', reject).end();
    });
    expect(received).toBe(body);
    const stopping = running.close();
    await new Promise((r) => setTimeout(r, 100));
    // still writing the response: the stop waits for it
    expect(socketClosedAt).toBe(0);
    expect(nodeClosed).toBe(false);
    const ended = Date.now();
    endBody();
    await stopping;
    await socketClosed;
    expect(nodeClosed).toBe(true);
    expect(socketClosedAt).toBeGreaterThanOrEqual(ended);
    // closed by the stop once the response ended, well before the 5 s grace period
    expect(socketClosedAt - ended).toBeLessThan(2_000);
    agent.destroy();
  });
});
