/**
 * multipart/form-data bodies in their usual shape, parsed in one pass over a buffered body.
 * A small create (a few KiB) spent a seventh of the main thread's time in the streaming
 * parser's machinery (a parser, a header parser, a stream and its events per part); the
 * clients of the federation all send the same plain form. Anything outside that form (a
 * preamble, folded or unknown headers, parameters other than a part's charset, non-ASCII
 * headers, a name given twice, padding after a delimiter, an epilogue, many parts, a body that
 * does not end with the close delimiter) is left to the streaming parser on the same bytes:
 * this is a shortcut, never a second reading of the format. small-multipart.test.ts checks
 * both give the same parts.
 */

/** Bodies up to this many bytes (declared Content-Length) are buffered and read here first. */
export const SMALL_BODY_BYTES = 256 * 1024;

/** More parts than this go to the streaming parser (its limits then apply as they always did). */
const MAX_PARTS = 10;

export interface SmallPart {
  name: string;
  /** Set when the Content-Disposition names a file (possibly ''). */
  filename?: string;
  /** The media type, lower-cased; 'text/plain' when the part has no Content-Type. */
  type: string;
  /** The Content-Type's charset parameter, lower-cased, when it has one. */
  charset?: string;
  /** The part's bytes (a view of the body). */
  data: Buffer;
}

// The boundary parameter alone: quoted, any of RFC 2046's boundary characters; unquoted, those
// that are also token characters (RFC 2045: '(', ')', ',', '/', ':', '=', '?' must be quoted).
const FORM = /^multipart\/form-data;[ \t]*boundary=(?:"([0-9A-Za-z'()+_,\-./:=? ]{1,70})"|([0-9A-Za-z'+_\-.]{1,70}))$/i;

/** The boundary of a form's Content-Type in its plain shape, else undefined. */
export function plainFormBoundary(contentType: string): string | undefined {
  const m = FORM.exec(contentType);
  const boundary = m?.[1] ?? m?.[2];
  // A quoted boundary may hold spaces, but not as its last character (RFC 2046).
  return boundary === undefined || boundary.endsWith(' ') ? undefined : boundary;
}

const DISPOSITION = /^form-data;[ \t]*name="([^"\\]*)"(?:;[ \t]*filename="([^"\\]*)")?$/i;
// A media type, maybe with a charset parameter (Java clients send `text/plain; charset=…`), alone.
const PLAIN_TYPE = /^([!#$%&'*+\-.^_`|~0-9A-Za-z]+\/[!#$%&'*+\-.^_`|~0-9A-Za-z]+)(?:;[ \t]*charset=(?:"([!#$%&'*+\-.^_`|~0-9A-Za-z]+)"|([!#$%&'*+\-.^_`|~0-9A-Za-z]+)))?$/i;
// Printable ASCII and tabs: what the header block of a plain part holds.
// eslint-disable-next-line no-control-regex
const PLAIN_HEADER_TEXT = /^[\t\x20-\x7e]*$/;

const CRLF = Buffer.from('\r\n');
const HEADERS_END = Buffer.from('\r\n\r\n');

/**
 * The parts of `body`, a complete multipart/form-data body with this boundary, when it has the
 * plain shape; undefined when anything about it is unusual (the streaming parser decides).
 */
export function plainFormParts(body: Buffer, boundary: string): SmallPart[] | undefined {
  const dash = Buffer.from(`--${boundary}`, 'latin1');
  const delimiter = Buffer.from(`\r\n--${boundary}`, 'latin1');
  if (!startsWith(body, dash, 0) || !startsWith(body, CRLF, dash.length)) return undefined;
  const parts: SmallPart[] = [];
  let at = dash.length + 2;
  for (;;) {
    if (parts.length === MAX_PARTS) return undefined;
    const headersEnd = body.indexOf(HEADERS_END, at);
    if (headersEnd < 0) return undefined;
    const headers = plainHeaders(body.toString('latin1', at, headersEnd));
    // A name given twice: which part wins is the streaming parser's matter (its events' order).
    if (headers === undefined || parts.some((p) => p.name === headers.name)) return undefined;
    const contentStart = headersEnd + 4;
    const end = body.indexOf(delimiter, contentStart - 2);
    if (end < contentStart) return undefined;
    parts.push({ ...headers, data: body.subarray(contentStart, end) });
    at = end + delimiter.length;
    if (startsWith(body, CRLF, at)) {
      at += 2;
      continue;
    }
    // The close delimiter, then nothing or one line end.
    if (body[at] !== 0x2d || body[at + 1] !== 0x2d) return undefined;
    at += 2;
    return at === body.length || (at + 2 === body.length && startsWith(body, CRLF, at)) ? parts : undefined;
  }
}

/** A part's header block: Content-Disposition (form-data, a name, maybe a filename), Content-Type and Content-Transfer-Encoding at most once each. */
function plainHeaders(block: string): Omit<SmallPart, 'data'> | undefined {
  if (!PLAIN_HEADER_TEXT.test(block.replaceAll('\r\n', ''))) return undefined;
  let disposition: RegExpExecArray | null | undefined;
  let type: RegExpExecArray | null | undefined;
  let encoding = false;
  for (const line of block.split('\r\n')) {
    const colon = line.indexOf(':');
    if (colon <= 0 || line[0] === ' ' || line[0] === '\t') return undefined;
    const name = line.slice(0, colon).toLowerCase();
    // One space or tab after the colon is not part of the value (as the streaming parser reads it).
    const value = line.slice(line[colon + 1] === ' ' || line[colon + 1] === '\t' ? colon + 2 : colon + 1);
    if (name === 'content-disposition' && disposition === undefined) {
      disposition = DISPOSITION.exec(value);
      if (disposition === null) return undefined;
    } else if (name === 'content-type' && type === undefined) {
      type = PLAIN_TYPE.exec(value);
      if (type === null) return undefined;
    } else if (name === 'content-transfer-encoding' && !encoding) {
      encoding = true;
    } else return undefined;
  }
  if (!disposition) return undefined;
  const charset = type?.[2] ?? type?.[3];
  return {
    name: disposition[1]!,
    ...(disposition[2] !== undefined ? { filename: disposition[2] } : {}),
    type: type?.[1]!.toLowerCase() ?? 'text/plain',
    ...(charset !== undefined ? { charset: charset.toLowerCase() } : {}),
  };
}

function startsWith(body: Buffer, prefix: Buffer, at: number): boolean {
  return body.length >= at + prefix.length && body.compare(prefix, 0, prefix.length, at, at + prefix.length) === 0;
}
