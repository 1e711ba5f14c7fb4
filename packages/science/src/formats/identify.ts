/**
 * The formatId of a file from its name and first few KiB: content first (signatures, XML
 * root and namespace, JSON-LD context and type), then the extension, then the media type,
 * `application/octet-stream` last. Only formatIds of the federation's list come out, plus
 * those the caller names as extra.
 */
import { OCTET_STREAM_FORMAT_ID } from '@memberkit/types';
import type { ContentMatch } from './content-match.js';
import { matchDelimited } from './delimited-text.js';
import { extensionOf, formatOfExtension, formatOfMediaType, listedFormat, UNINFORMATIVE_EXTENSIONS } from './federation-list.js';
import { headText, HEAD_BYTES } from './head-text.js';
import { matchJson } from './json-formats.js';
import { matchMagic } from './magic.js';
import { GENERIC_XML, matchXml } from './xml-formats.js';

export interface IdentifyInput {
  /** The file's name or relative path (its extension is the fallback). */
  name: string;
  /** The file's first bytes; at most HEAD_BYTES are looked at. Empty for an empty file. */
  head: Uint8Array;
  /** A media type the storage reports (S3 Content-Type), the last fallback before octet-stream. */
  mediaType?: string;
  /** The file's size, when known: tells whether the head is the whole file. */
  size?: number;
}

export interface IdentifyOptions {
  /** formatIds outside the federation's list that may be published (configured explicitly). */
  extraFormats?: Iterable<string>;
}

export interface FormatIdentification {
  formatId: string;
  /** The media type for system metadata (the list's, else the content's). */
  mediaType: string;
  by: 'override' | 'content' | 'extension' | 'media-type' | 'default';
  reason: string;
  /** The format the content names when it is neither in the list nor an allowed extra. */
  unlisted?: string;
}

/** The formatId of a file (see detectFormat for the reasons). */
export function identifyFormat(input: IdentifyInput, options: IdentifyOptions = {}): string {
  return detectFormat(input, options).formatId;
}

/** The formatId of a file, with how it was found. Never throws on any bytes. */
export function detectFormat(input: IdentifyInput, options: IdentifyOptions = {}): FormatIdentification {
  const extras = options.extraFormats instanceof Set ? (options.extraFormats as Set<string>) : new Set(options.extraFormats ?? []);
  const head = input.head.length > HEAD_BYTES ? input.head.subarray(0, HEAD_BYTES) : input.head;
  const ext = extensionOf(input.name);
  const text = headText(head, input.size);

  let content: ContentMatch | undefined;
  try {
    content = matchMagic(head, ext) ?? (text.isText ? (matchXml(text.text) ?? matchJson(text.text, text.truncated)) : undefined);
  } catch {
    content = undefined; // identification is advisory: odd bytes never stop a scan
  }
  let unlisted: string | undefined;
  if (content?.exact) {
    if (isPublishable(content.formatId, extras)) return identification(content.formatId, 'content', content.reason, content.mediaType, unlisted);
    unlisted = content.formatId;
    // Known content, but a format outside the list: published as its generic kind.
    const generic = content.mediaType.includes('xml') ? GENERIC_XML : content.mediaType.includes('json') ? 'application/json' : undefined;
    content = generic ? { formatId: generic, exact: false, mediaType: content.mediaType, reason: `${content.reason}; ${unlisted} is not in the federation's format list` } : undefined;
  }
  const byExt = ext && !UNINFORMATIVE_EXTENSIONS.has(ext) ? formatOfExtension(ext) : undefined;
  if (byExt !== undefined && isPublishable(byExt, extras)) return identification(byExt, 'extension', `extension .${ext}`, undefined, unlisted);
  if (content && isPublishable(content.formatId, extras)) return identification(content.formatId, 'content', content.reason, content.mediaType, unlisted);
  if (text.isText && head.length > 0) {
    const table = matchDelimited(text.text, text.truncated);
    if (table && isPublishable(table.formatId, extras)) return identification(table.formatId, 'content', table.reason, table.mediaType, unlisted);
  }
  const byType = input.mediaType !== undefined ? formatOfMediaType(input.mediaType) : undefined;
  if (byType !== undefined && isPublishable(byType, extras)) return identification(byType, 'media-type', `media type ${input.mediaType}`, undefined, unlisted);
  const byPlainExt = ext ? formatOfExtension(ext) : undefined;
  if (byPlainExt !== undefined && isPublishable(byPlainExt, extras)) return identification(byPlainExt, 'extension', `extension .${ext}`, undefined, unlisted);
  if (text.isText && head.length > 0) return identification('text/plain', 'content', 'text', undefined, unlisted);
  return identification(OCTET_STREAM_FORMAT_ID, 'default', head.length === 0 ? 'empty file' : 'no format recognised', undefined, unlisted);
}

function isPublishable(formatId: string, extras: ReadonlySet<string>): boolean {
  return listedFormat(formatId) !== undefined || extras.has(formatId);
}

function identification(formatId: string, by: FormatIdentification['by'], reason: string, mediaType: string | undefined, unlisted: string | undefined): FormatIdentification {
  const r: FormatIdentification = { formatId, mediaType: listedFormat(formatId)?.mediaType ?? mediaType ?? 'application/octet-stream', by, reason };
  if (unlisted !== undefined) r.unlisted = unlisted;
  return r;
}
