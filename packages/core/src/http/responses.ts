import { IdentifierCodec, type ApiVersion, type DataONEException } from '@memberkit/types';

export const XML_CONTENT_TYPE = 'text/xml; charset=utf-8';

/** `X-Content-Type-Options` of every answer (also written by handlers that send their own head). */
export const NOSNIFF = 'nosniff';

export function xmlResponse(body: string, status = 200, headers: Record<string, string> = {}): Response {
  return new Response(body, { status, headers: { 'Content-Type': XML_CONTENT_TYPE, ...headers } });
}

/**
 * Identifier answers: a Types.Identifier document, or the bare identifier for a client that
 * accepts only text/plain.
 */
export function identifierResponse(request: Request, id: string, version: ApiVersion): Response {
  const accept = request.headers.get('accept') ?? '';
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
