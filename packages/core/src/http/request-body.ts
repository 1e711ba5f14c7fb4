import { IncomingMessage, type ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import type { ReadableStream } from 'node:stream/web';
import type { Context } from 'hono';

/** What @hono/node-server puts in a request's env. */
interface NodeEnv {
  incoming?: IncomingMessage;
  outgoing?: ServerResponse;
}

export interface RequestBody {
  contentType: string;
  /** The body's bytes; undefined when the request has none (a fetch Request without a body). */
  body: Readable | undefined;
  /** The body's declared length (Content-Length); undefined when not declared (chunked). */
  length: number | undefined;
}

function declaredLength(value: string | null | undefined): number | undefined {
  return value !== null && value !== undefined && /^\d{1,15}$/.test(value) ? Number(value) : undefined;
}

/**
 * A request's body as a Node stream, with its Content-Type. Served by @hono/node-server, the
 * socket's IncomingMessage itself: going through c.req.raw built a fetch Request (headers, an
 * AbortController) and adapted the body to a web stream and back, a tenth of a small create.
 * A fetch Request (app.request in tests, or one built already) is read as a web stream.
 */
export function requestBody(source: Request | Context): RequestBody {
  if (source instanceof Request) {
    return {
      contentType: source.headers.get('content-type') ?? '',
      body: source.body ? Readable.fromWeb(source.body as ReadableStream<Uint8Array>) : undefined,
      length: declaredLength(source.headers.get('content-length')),
    };
  }
  const incoming = (source.env as NodeEnv | undefined)?.incoming;
  // Only while nobody else reads it (a fetch Request built from it listens for its data).
  if (incoming instanceof IncomingMessage && !incoming.readableDidRead && incoming.listenerCount('data') === 0 && incoming.listenerCount('readable') === 0) {
    return { contentType: incoming.headers['content-type'] ?? '', body: incoming, length: declaredLength(incoming.headers['content-length']) };
  }
  return requestBody(source.req.raw);
}

const GONE = Symbol('memberkit client signal');
type Carrier = ServerResponse & { [GONE]?: AbortSignal };

/**
 * Aborted when the client goes away before its answer is complete. Served by Node, from the
 * response's 'close' (no fetch Request is built for it; the reason is an Error, not the
 * DOMException an abort without a reason builds); otherwise the fetch Request's own signal.
 */
export function clientSignal(c: Context): AbortSignal {
  const outgoing = (c.env as NodeEnv | undefined)?.outgoing as Carrier | undefined;
  if (!outgoing) return c.req.raw.signal;
  let signal = outgoing[GONE];
  if (signal === undefined) {
    const controller = new AbortController();
    signal = outgoing[GONE] = controller.signal;
    const gone = () => controller.abort(new Error('the client went away before the answer was complete'));
    if (outgoing.destroyed && !outgoing.writableFinished) gone();
    else outgoing.once('close', () => outgoing.writableFinished || gone());
  }
  return signal;
}
