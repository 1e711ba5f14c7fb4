import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { DecodeError } from '../decode-error.js';

/** Default bound on an XML document's size; system metadata of a real object is a few KiB. */
export const DEFAULT_MAX_XML_BYTES = 4 * 1024 * 1024;

export interface ParseOptions {
  /** Reject documents larger than this many bytes (UTF-8). Default DEFAULT_MAX_XML_BYTES. */
  maxBytes?: number;
}

/** An element as the shared parser gives it: attributes `@_name`, text `#text`, children arrays. */
export type XmlNode = { [key: string]: XmlNode[] | string | undefined; '#text'?: string };

export interface ParsedDocument {
  /** Local name of the root element (prefix removed). */
  rootName: string;
  /** Namespace URI of the root element, or '' when it is in no namespace. */
  rootNamespace: string;
  root: XmlNode;
}

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const ENTITY_REF = /&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z_][\w.-]*)?(;)?/g;

function codePointOk(cp: number): boolean {
  return cp === 0x9 || cp === 0xa || cp === 0xd || (cp >= 0x20 && cp <= 0xd7ff) || (cp >= 0xe000 && cp <= 0xfffd) || (cp >= 0x10000 && cp <= 0x10ffff);
}

/**
 * XML's own entity handling: the five predefined entities and character references
 * (`&#38;`, `&#xE9;`) are decoded; anything else (`&nbsp;`, a bare `&`) is not well-formed.
 * DOCTYPEs are refused before parsing, so no other entity can ever be declared.
 */
function decodeXmlEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(ENTITY_REF, (whole, ref: string | undefined, semi: string | undefined) => {
    if (!ref || !semi) throw new DecodeError(`'&' must start an entity or character reference ('${whole}')`);
    if (ref[0] === '#') {
      const cp = ref[1] === 'x' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      if (!codePointOk(cp)) throw new DecodeError(`character reference '${whole}' is not a legal XML character`);
      return String.fromCodePoint(cp);
    }
    const v = XML_ENTITIES[ref];
    if (v === undefined) throw new DecodeError(`undeclared entity '${whole}'`);
    return v;
  });
}

const entityDecoder = {
  setExternalEntities: () => undefined,
  addInputEntities: () => {
    throw new DecodeError('entity declarations are not accepted');
  },
  reset: () => undefined,
  setXmlVersion: () => undefined,
  decode: decodeXmlEntities,
};

// One shared configuration: values stay strings (an identifier `0012` must not become 12),
// every element is an array (a single <allow> too), prefixes are dropped so any prefix works.
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: true,
  alwaysCreateTextNode: true,
  isArray: (_name, _jpath, _leaf, isAttribute) => !isAttribute,
  processEntities: true,
  htmlEntities: false,
  entityDecoder,
  ignoreDeclaration: true,
  ignorePiTags: true,
  commentPropName: false,
});

const DOCTYPE = /<!DOCTYPE|<!ENTITY/i;

// Code points XML 1.0 does not allow anywhere in a document (raw, not as references, which
// decodeXmlEntities checks). The parser does not refuse them; a value holding one would be
// stored and then could not be written into any answer.
// eslint-disable-next-line no-control-regex
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A parser's message, bounded: some list every open tag, which a hostile document makes megabytes long. */
function short(message: string): string {
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}

function rootStartTag(xml: string): { prefix: string; local: string; tag: string; index: number } {
  let i = 0;
  for (;;) {
    i = xml.indexOf('<', i);
    if (i < 0) throw new DecodeError('no root element found');
    const next = xml[i + 1];
    if (next === '?') i = xml.indexOf('?>', i) + 2;
    else if (next === '!') i = xml.indexOf('-->', i) + 3;
    else break;
    if (i < 2) throw new DecodeError('unterminated prolog');
  }
  const end = xml.indexOf('>', i);
  const tag = xml.slice(i, end < 0 ? undefined : end + 1);
  const m = /^<([A-Za-z_][\w.-]*:)?([A-Za-z_][\w.-]*)/.exec(tag);
  if (!m) throw new DecodeError('malformed root element');
  return { prefix: (m[1] ?? '').slice(0, -1), local: m[2]!, tag, index: i };
}

function namespaceOf(prefix: string, startTag: string): string {
  const attr = prefix ? `xmlns:${prefix}` : 'xmlns';
  const re = new RegExp(`\\s${attr.replace('.', '\\.')}\\s*=\\s*("([^"]*)"|'([^']*)')`);
  const m = re.exec(startTag);
  return m ? (m[2] ?? m[3] ?? '') : '';
}

/**
 * Text of a byte document: a byte-order mark or the XML declaration's `encoding` decides
 * (UTF-8 when neither says); bytes that are not valid in that encoding are refused.
 */
function decodeBytes(input: Uint8Array): string {
  let label = 'utf-8';
  let skip = 0;
  if (input[0] === 0xef && input[1] === 0xbb && input[2] === 0xbf) skip = 3;
  else if (input[0] === 0xff && input[1] === 0xfe) (label = 'utf-16le'), (skip = 2);
  else if (input[0] === 0xfe && input[1] === 0xff) (label = 'utf-16be'), (skip = 2);
  else {
    const head = Buffer.from(input.buffer, input.byteOffset, Math.min(input.byteLength, 200)).toString('latin1');
    const m = /^<\?xml[^>]*?\sencoding\s*=\s*["']([A-Za-z][\w.:-]*)["']/.exec(head);
    if (m) label = m[1]!.toLowerCase();
  }
  let decoder: InstanceType<typeof TextDecoder>;
  try {
    decoder = new TextDecoder(label, { fatal: true });
  } catch {
    throw new DecodeError(`unsupported document encoding '${label}'`);
  }
  try {
    return decoder.decode(input.subarray(skip));
  } catch {
    throw new DecodeError(`document is not valid ${label} text`);
  }
}

/**
 * Parse an XML document safely: bounded size, no DOCTYPE (so no entity expansion and no
 * external entities), well-formedness checked, any namespace prefix accepted.
 * @throws DecodeError on any of these problems.
 */
export function parseXml(input: string | Uint8Array, options: ParseOptions = {}): ParsedDocument {
  const maxBytes = options.maxBytes ?? DEFAULT_MAX_XML_BYTES;
  const byteLength = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.byteLength;
  if (byteLength > maxBytes) throw new DecodeError(`document is ${byteLength} bytes, larger than the limit of ${maxBytes}`);
  const xml = typeof input === 'string' ? input.replace(/^\uFEFF/, '') : decodeBytes(input);
  if (xml.trim() === '') throw new DecodeError('document is empty');
  if (DOCTYPE.test(xml)) throw new DecodeError('DOCTYPE and entity declarations are not accepted');
  const bad = NOT_XML_CHAR.exec(xml);
  if (bad) {
    const line = xml.slice(0, bad.index).split('\n').length;
    throw new DecodeError(`not well-formed XML: character U+${bad[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')} is not allowed in XML (line ${line})`);
  }
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw new DecodeError(`not well-formed XML: ${short(valid.err.msg)} (line ${valid.err.line}, column ${valid.err.col})`);
  const { prefix, local, tag: start, index } = rootStartTag(xml);
  // Processing instructions in the prolog (a CN's <?xml-stylesheet href="...&..."?>) carry
  // no data; the parser would read their pseudo-attributes as XML text, so drop them.
  const prolog = xml.slice(0, index).replace(/<\?(?!xml[\s?])[\s\S]*?\?>/g, '');
  let tree: Record<string, XmlNode[]>;
  try {
    tree = parser.parse(prolog + xml.slice(index)) as Record<string, XmlNode[]>;
  } catch (e) {
    throw new DecodeError(`not well-formed XML: ${short((e as Error).message)}`);
  }
  const root = tree[local]?.[0];
  if (!root) throw new DecodeError('no root element found');
  return { rootName: local, rootNamespace: namespaceOf(prefix, start), root };
}
