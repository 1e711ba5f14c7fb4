import { ServerResponse } from 'node:http';
import type { Context } from 'hono';
import { IdentifierCodec, type ApiVersion, type DataONEException } from '@memberkit/types';
import { headerReader } from './request-headers.js';

export const XML_CONTENT_TYPE = 'text/xml; charset=utf-8';

/** `X-Content-Type-Options` of every answer (also written by handlers that send their own head). */
export const NOSNIFF = 'nosniff';

export function xmlResponse(body: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { 'Content-Type': XML_CONTENT_TYPE, ...headers } });
}

/** A whole XML document and its head (Content-Type, Content-Length), made once and kept with a cached record. */
export interface XmlDocument {
  readonly body: string;
  readonly head: Readonly<Record<string, string>>;
}

export function xmlDocument(body: string): XmlDocument {
  return { body, head: { 'Content-Type': XML_CONTENT_TYPE, 'Content-Length': String(Buffer.byteLength(body)), 'X-Content-Type-Options': NOSNIFF } };
}

/**
 * Marks a Response whose own headers already hold what the app adds to every answer
 * (`X-Content-Type-Options`): the request log then leaves node's response alone, and
 * node-server writes the route's header object as it is (a header set on node's response
 * beforehand makes node re-validate and merge every header of the answer).
 */
const APP_HEADERS = Symbol('memberkit answer carries the app headers');

type Marked = Response & { [APP_HEADERS]?: true };

function withAppHeaders(res: Response): Response {
  (res as Marked)[APP_HEADERS] = true;
  return res;
}

/** True when `res` was made by a helper that put the app's headers in it (see APP_HEADERS). */
export function carriesAppHeaders(res: Response): boolean {
  return (res as Marked)[APP_HEADERS] === true;
}

/**
 * A 200 answer of a prepared document. node-server writes a string body with its init headers
 * as they are (the object is only read: it already holds Content-Length), with no Response to
 * take apart; writing to node's response here would need alreadySent(), which costs a full
 * fetch Response on node-server's side.
 */
export function xmlDocumentResponse(doc: XmlDocument): Response {
  return withAppHeaders(new Response(doc.body, { status: 200, headers: doc.head }));
}

/** @hono/node-server's header for "the handler wrote the answer to env.outgoing itself". */
export const ALREADY_SENT = 'x-hono-already-sent';

let sent: Response | undefined;

/**
 * What a handler returns after writing its whole answer to node's response itself (nodeResponse).
 * One Response for every such answer: node-server and Hono only read it (a body-less Response
 * costs node-server a fetch Response per use to read its headers; made once, it is made once).
 * Made on first use, once node-server has installed its Response class.
 */
export function alreadySent(): Response {
  return (sent ??= new Response(null, { headers: { [ALREADY_SENT]: 'true' } }));
}

/** The node:http response when served by @hono/node-server (absent under app.request in tests). */
export function nodeResponse(c: Context): ServerResponse | undefined {
  const outgoing = (c.env as { outgoing?: unknown } | undefined)?.outgoing;
  if (outgoing instanceof ServerResponse && !outgoing.headersSent && !outgoing.writableEnded) return outgoing;
  return undefined;
}

/**
 * A 200 XML answer given as parts (Codec.encodeParts, a listing page): written part by part
 * to node's response, so that the page is never one string (see encodeDocumentParts); joined
 * where there is no node response (app.request) and for HEAD.
 */
export function xmlPartsResponse(c: Context, parts: string[]): Response {
  const outgoing = parts.length > 1 && c.req.method === 'GET' ? nodeResponse(c) : undefined;
  if (!outgoing) return xmlResponse(parts.length === 1 ? parts[0]! : parts.join(''));
  // The parts are flat strings (joined by the encoder): byteLength is a quick scan and the
  // socket's writev encodes them once. Measured on 1,000-entry pages, Buffer.from per part
  // (the length their sum) or one Buffer for the whole page was no cheaper.
  let length = 0;
  for (const part of parts) length += Buffer.byteLength(part);
  outgoing.writeHead(200, { 'Content-Type': XML_CONTENT_TYPE, 'Content-Length': String(length), 'X-Content-Type-Options': NOSNIFF });
  // Corked: the parts leave in one write of the socket. A client gone away makes them no-ops.
  outgoing.cork();
  for (const part of parts) outgoing.write(part);
  outgoing.end();
  return alreadySent();
}

/**
 * Identifier answers: a Types.Identifier document, or the bare identifier for a client that
 * accepts only text/plain.
 */
export function identifierResponse(c: Context, id: string, version: ApiVersion): Response {
  const accept = headerReader(c).get('accept') ?? '';
  const onlyPlain = /text\/plain/i.test(accept) && !/(xml|\*\/\*)/i.test(accept);
  if (onlyPlain) return new Response(id, { headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
  return xmlResponse(IdentifierCodec.encode(id, version));
}

/** Boolean answers: 200 means true; the body is ignored by clients. */
export function trueResponse(): Response {
  return new Response('true', { headers: { 'Content-Type': 'text/plain; charset=utf-8' } });
}

/** An exception as the error document, or as headers only for HEAD. */
export function errorResponse(err: DataONEException, method: string): Response {
  if (method === 'HEAD') {
    return new Response(null, { status: err.errorCode, headers: { ...err.toHeaders(), 'Content-Type': XML_CONTENT_TYPE } });
  }
  return xmlResponse(err.toXml(), err.errorCode);
}
