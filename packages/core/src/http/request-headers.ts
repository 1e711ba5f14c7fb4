import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { HeaderReader } from '../services/session-resolver.js';

/** A view of Node's parsed headers (a class: an object literal's method is a closure per request). */
class NodeHeaders implements HeaderReader {
  constructor(private readonly headers: IncomingHttpHeaders) {}

  get(name: string): string | null {
    const v = this.headers[name.toLowerCase()];
    return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
  }
}

/**
 * The request's headers to read: Node's parsed header object when served by node-server
 * (a fetch Headers built per request costs more than a cached read's whole route).
 */
export function headerReader(c: Context): HeaderReader {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming) return c.req.raw.headers;
  return new NodeHeaders(incoming.headers);
}
