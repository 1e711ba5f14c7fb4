import { SaxesParser } from 'saxes';
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

/** Elements nested deeper than this are refused: DataONE's types nest a few levels, a hostile document 100,000. */
export const MAX_XML_DEPTH = 256;

const DOCTYPE = /<!DOCTYPE|<!ENTITY/i;

// Code points XML 1.0 does not allow anywhere in a document (raw; the parser checks character
// references). Looked for before parsing, so the refusal names the character and its line: a
// value holding one would be stored and then could not be written into any answer.
// eslint-disable-next-line no-control-regex
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** A parser's message, bounded: some list every open tag, which a hostile document makes megabytes long. */
function short(message: string): string {
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
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
  return xmlTree(xml);
}

/** The local part of a qualified name: any prefix is accepted (`d1:identifier`, `identifier`). */
function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
}

export interface XmlTreeOptions {
  /** Trim an element's text (DataONE's types: whitespace around a value is layout). Default true. */
  trim?: boolean;
  /** Elements nested deeper than this are refused. Default MAX_XML_DEPTH. */
  maxDepth?: number;
}

/**
 * The element tree of a document, read by saxes, a strict streaming parser: well-formedness
 * is checked as it reads (unclosed or mismatched tags, a second root, duplicated attributes,
 * undeclared entities, text outside the root), in one pass. Elements become XmlNodes without
 * prototypes (an element named `__proto__` is a key like any other); attributes `@_local`
 * (namespace declarations dropped); an element's text, its pieces joined (those around child
 * elements too), as `#text` ('' when none; CDATA counts as text, comments and processing
 * instructions do not). The caller refuses DOCTYPEs first (parseXml, science's budgets).
 * @throws DecodeError naming the problem.
 */
export function xmlTree(xml: string, options: XmlTreeOptions = {}): ParsedDocument {
  const trim = options.trim ?? true;
  const maxDepth = options.maxDepth ?? MAX_XML_DEPTH;
  const parser = new SaxesParser();
  const open: XmlNode[] = [];
  const texts: string[] = [];
  let doc: ParsedDocument | undefined;
  const addText = (t: string) => {
    if (open.length > 0) texts[open.length - 1] += t;
  };
  parser.on('text', addText);
  parser.on('cdata', addText);
  parser.on('opentag', (tag) => {
    if (open.length >= maxDepth) throw new DecodeError(`elements are nested more than ${maxDepth} levels deep`);
    const node = Object.create(null) as XmlNode;
    const attributes = tag.attributes as Record<string, string>;
    for (const name in attributes) {
      if (name === 'xmlns' || name.startsWith('xmlns:')) continue;
      node[`@_${localName(name)}`] = attributes[name];
    }
    const local = localName(tag.name);
    const parent = open[open.length - 1];
    if (parent === undefined) {
      const colon = tag.name.indexOf(':');
      const declaration = colon < 0 ? 'xmlns' : `xmlns:${tag.name.slice(0, colon)}`;
      doc = { rootName: local, rootNamespace: attributes[declaration] ?? '', root: node };
    } else {
      const siblings = parent[local];
      if (Array.isArray(siblings)) siblings.push(node);
      else parent[local] = [node];
    }
    open.push(node);
    texts.push('');
  });
  parser.on('closetag', () => {
    const text = texts.pop()!;
    open.pop()!['#text'] = trim ? text.trim() : text;
  });
  try {
    parser.write(xml).close();
  } catch (e) {
    if (DecodeError.is(e)) throw e;
    throw new DecodeError(`not well-formed XML: ${short((e as Error).message)}`);
  }
  if (doc === undefined) throw new DecodeError('no root element found');
  return doc;
}
