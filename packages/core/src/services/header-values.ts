import { formatById, normalizeChecksumAlgorithm, type ApiVersion, type MediaType, type StoredSystemMetadata } from '@memberkit/types';

/**
 * System metadata values that end up in HTTP response headers (Content-Type from mediaType,
 * Content-Disposition from fileName, DataONE-Checksum, DataONE-Obsoletes...), in one place:
 * what a client may send (checked at create, update and updateSystemMetadata) and how each
 * value is written so that a header can never be refused (RFC 7230 field-value: HTAB, SP,
 * VCHAR, obs-text; nothing else).
 */

/** RFC 7230 token: `1*tchar`. */
const TOKEN = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** RFC 7231 media-type without parameters: `type "/" subtype`. */
const TYPE_SUBTYPE = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+\/[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;
/** What a quoted-string may carry (qdtext and quoted-pair): HTAB, SP, VCHAR, obs-text (Latin-1). */
const QUOTABLE = /^[\t\x20-\x7e\x80-\xff]*$/;
/** Characters a header value can carry as they are. */
const HEADER_SAFE = /^[\t\x20-\x7e\x80-\xff]*$/;
// C0 and C1 controls, DEL, and unpaired surrogates: never part of a file name.
// eslint-disable-next-line no-control-regex
const NOT_IN_FILE_NAME = /[\u0000-\u001f\u007f-\u009f]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Why `mediaType` cannot be sent as a Content-Type, or undefined when it can. */
export function mediaTypeProblem(mediaType: MediaType): string | undefined {
  if (!TYPE_SUBTYPE.test(mediaType.name)) {
    return `systemMetadata/mediaType/@name '${printable(mediaType.name)}' is not a media type (type/subtype, RFC 7231: letters, digits and !#$%&'*+.^_\`|~- only)`;
  }
  for (const p of mediaType.property) {
    if (!TOKEN.test(p.name)) return `systemMetadata/mediaType/property/@name '${printable(p.name)}' is not a parameter name (an RFC 7230 token)`;
    if (!QUOTABLE.test(p.value ?? '')) {
      return `systemMetadata/mediaType/property '${p.name}' has a value with control characters or characters outside Latin-1, which a Content-Type header cannot carry`;
    }
  }
  return undefined;
}

/** Why `fileName` cannot name the download, or undefined when it can. */
export function fileNameProblem(fileName: string): string | undefined {
  if (NOT_IN_FILE_NAME.test(fileName)) return `systemMetadata/fileName '${printable(fileName)}' contains control characters`;
  return undefined;
}

/** Content-Type of the bytes: a valid v2 mediaType (with its parameters), else the format's media type. */
export function contentTypeOf(sm: Pick<StoredSystemMetadata, 'mediaType' | 'formatId'>): string {
  const mt = sm.mediaType;
  // Records stored before these checks existed may hold anything: never echo a bad one.
  if (mt && mediaTypeProblem(mt) === undefined) {
    return [mt.name, ...mt.property.map((p) => `${p.name}=${parameterValue(p.value ?? '')}`)].join('; ');
  }
  return formatById(sm.formatId)?.mediaType ?? 'application/octet-stream';
}

function parameterValue(value: string): string {
  return TOKEN.test(value) ? value : `"${value.replace(/["\\]/g, '\\$&')}"`;
}

/** A file name for Content-Disposition: v2 fileName, else the PID made safe plus the format's extension. */
export function fileNameOf(sm: Pick<StoredSystemMetadata, 'fileName' | 'identifier' | 'formatId'>): string {
  if (sm.fileName && fileNameProblem(sm.fileName) === undefined) return sm.fileName;
  const base = sm.identifier.replace(/[^\w.-]+/g, '_').slice(0, 200);
  const ext = formatById(sm.formatId)?.extension;
  return ext && !base.toLowerCase().endsWith(`.${ext}`) ? `${base}.${ext}` : base;
}

/**
 * RFC 6266 Content-Disposition: an ASCII `filename` for old clients (anything else, quotes,
 * backslashes and `%` replaced) and the exact name as RFC 5987 `filename*` (UTF-8, every
 * character outside attr-char percent-encoded).
 */
export function contentDisposition(name: string): string {
  const ascii = name.replace(/[^\x20-\x7e]|["\\%]/g, '_');
  const exact = encodeURIComponent(name.replace(NOT_IN_FILE_NAME, '_')).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${ascii}"; filename*=UTF-8''${exact}`;
}

/** `ALGORITHM,hexdigest` with the algorithm's canonical name. */
export function checksumHeader(sm: Pick<StoredSystemMetadata, 'checksum'>): string {
  const algorithm = normalizeChecksumAlgorithm(sm.checksum.algorithm) ?? sm.checksum.algorithm.trim();
  return headerText(`${algorithm},${sm.checksum.value.trim()}`);
}

/**
 * Text as a header value: as is when a header can carry it; otherwise percent-encoded UTF-8
 * (as in a URL path), so that an identifier with characters beyond Latin-1 still reaches the
 * client and never breaks the answer.
 */
export function headerText(text: string): string {
  return HEADER_SAFE.test(text) ? text : encodeURIComponent(text.replace(NOT_IN_FILE_NAME, '\uFFFD'));
}

/**
 * The headers describe and get share (INTEROP: both the spec's and deployed header names),
 * plus `DataONE-Obsoletes`, `DataONE-ObsoletedBy` and (v2) `DataONE-SeriesId` when the
 * system metadata has them: the official client reads them.
 */
export function objectHeaders(sm: StoredSystemMetadata, version: ApiVersion): Record<string, string> {
  const headers: Record<string, string> = {
    'Content-Type': contentTypeOf(sm),
    'Last-Modified': sm.dateSysMetadataModified.toUTCString(),
    'DataONE-ObjectFormat': headerText(sm.formatId),
    'DataONE-FormatId': headerText(sm.formatId),
    'DataONE-Checksum': checksumHeader(sm),
    'DataONE-SerialVersion': String(sm.serialVersion),
  };
  if (sm.obsoletes !== undefined) headers['DataONE-Obsoletes'] = headerText(sm.obsoletes);
  if (sm.obsoletedBy !== undefined) headers['DataONE-ObsoletedBy'] = headerText(sm.obsoletedBy);
  if (sm.seriesId !== undefined && version === 'v2') headers['DataONE-SeriesId'] = headerText(sm.seriesId);
  return headers;
}

/** A value quoted in a description: control characters shown as \u escapes, cut at 80 characters. */
function printable(text: string): string {
  // eslint-disable-next-line no-control-regex
  const shown = text.replace(/[\u0000-\u001f\u007f-\u009f]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
  return shown.length > 80 ? `${shown.slice(0, 80)}…` : shown;
}
