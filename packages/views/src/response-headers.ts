/**
 * Headers on every MNView and MNPackage response, errors included: nothing the node serves
 * from these APIs may run script on its origin or be framed by another site.
 * - HTML pages: a strict Content-Security-Policy: nothing loads, no script runs (the JSON-LD
 *   `<script type="application/ld+json">` block is data and never runs), inline styles only,
 *   no <base>, no forms, no framing. A theme may name a stricter policy (the default theme
 *   allows only its own stylesheet, by hash).
 * - Everything else: `default-src 'none'; sandbox` (a document opened directly runs nothing).
 * - `X-Content-Type-Options: nosniff`, `X-Frame-Options: DENY` (older browsers' frame protection).
 * - `Vary: Authorization`: what these APIs answer depends on the caller. Caller-dependent
 *   answers also say `Cache-Control: private` (decided by each handler; errors always).
 */
export const HTML_CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";
export const OTHER_CSP = "default-src 'none'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox";

export function isHtml(contentType: string | null | undefined): boolean {
  return !!contentType && /^\s*(text\/html|application\/xhtml\+xml)\b/i.test(contentType);
}

export function applySecurityHeaders(headers: Headers): void {
  if (!headers.has('Content-Security-Policy')) headers.set('Content-Security-Policy', isHtml(headers.get('Content-Type')) ? HTML_CSP : OTHER_CSP);
  headers.set('X-Content-Type-Options', 'nosniff');
  headers.set('X-Frame-Options', 'DENY');
  const vary = headers.get('Vary');
  if (!vary || !/(^|,)\s*authorization\s*(,|$)/i.test(vary)) headers.set('Vary', vary ? `${vary}, Authorization` : 'Authorization');
}

/** Wrap a route handler so every response it gives (errors too) carries the headers above. */
export function secured<C>(handler: (c: C) => Promise<Response>): (c: C) => Promise<Response> {
  return async (c) => {
    const res = await handler(c);
    // A new response rather than headers set on the handler's: Hono answers HEAD with
    // `new Response(null, res)`, and with @hono/node-server's light responses that copy loses
    // headers set after a response was made.
    const headers = new Headers(res.headers);
    applySecurityHeaders(headers);
    if (res.status >= 400 && !headers.has('Cache-Control')) headers.set('Cache-Control', 'private');
    return new Response(res.body, { status: res.status, statusText: res.statusText, headers });
  };
}
