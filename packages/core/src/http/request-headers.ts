import type { IncomingMessage } from 'node:http';
import type { Context } from 'hono';
import type { HeaderReader } from '../services/session-resolver.js';

/**
 * The request's headers to read: Node's parsed header object when served by node-server
 * (a fetch Headers built per request costs more than a cached read's whole route).
 */
export function headerReader(c: Context): HeaderReader {
  const incoming = (c.env as { incoming?: IncomingMessage } | undefined)?.incoming;
  if (!incoming) return c.req.raw.headers;
  const headers = incoming.headers;
  return {
    get(name: string): string | null {
      const v = headers[name.toLowerCase()];
      return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
    },
  };
}
