/**
 * The prolog and root start tag of an XML document, read from its first few KiB with one
 * linear pass (indexOf only, no regular expression over the input, no parse of the body):
 * enough to tell one standard from another by root element, namespace, schema location,
 * version attribute and DOCTYPE.
 */

export interface XmlHead {
  /** Root element local name and prefix ('' for none). */
  local: string;
  prefix: string;
  /** The root element's namespace ('' for none). */
  namespace: string;
  /** Attributes of the root start tag by qualified name (namespace declarations included). */
  attributes: ReadonlyMap<string, string>;
  /** Namespace URIs declared on the root, by prefix ('' for the default namespace). */
  namespaces: ReadonlyMap<string, string>;
  /** The DOCTYPE's public and system identifiers, when there is one. */
  doctype?: { name: string; publicId?: string; systemId?: string };
  /** Offset in the text just after the root start tag (the text length when it is cut). */
  bodyStart: number;
}

const MAX_ATTRIBUTES = 512;

/** The head of an XML document, or undefined when `text` does not start like one. */
export function readXmlHead(text: string): XmlHead | undefined {
  let i = skipSpace(text, 0);
  let doctype: XmlHead['doctype'];
  for (;;) {
    if (text.startsWith('<?', i)) {
      const end = text.indexOf('?>', i + 2);
      if (end < 0) return undefined;
      i = skipSpace(text, end + 2);
    } else if (text.startsWith('<!--', i)) {
      const end = text.indexOf('-->', i + 4);
      if (end < 0) return undefined;
      i = skipSpace(text, end + 3);
    } else if (startsWithIgnoreCase(text, '<!DOCTYPE', i)) {
      const read = readDoctype(text, i + 9);
      if (!read) return undefined;
      doctype = read.doctype;
      i = skipSpace(text, read.end);
    } else break;
  }
  if (text.charCodeAt(i) !== 0x3c /* < */ || !isNameStart(text.charCodeAt(i + 1))) return undefined;
  let j = i + 1;
  while (j < text.length && isNameChar(text.charCodeAt(j))) j++;
  const qname = text.slice(i + 1, j);
  const attributes = new Map<string, string>();
  let bodyStart = text.length;
  for (;;) {
    j = skipSpace(text, j);
    if (j >= text.length) break;
    const c = text.charCodeAt(j);
    if (c === 0x3e /* > */) {
      bodyStart = j + 1;
      break;
    }
    if (c === 0x2f /* / */) {
      bodyStart = text.indexOf('>', j) + 1 || text.length;
      break;
    }
    if (!isNameStart(c) || attributes.size >= MAX_ATTRIBUTES) break;
    const nameStart = j;
    while (j < text.length && isNameChar(text.charCodeAt(j))) j++;
    const name = text.slice(nameStart, j);
    j = skipSpace(text, j);
    if (text.charCodeAt(j) !== 0x3d /* = */) break;
    j = skipSpace(text, j + 1);
    const quote = text[j];
    if (quote !== '"' && quote !== "'") break;
    const end = text.indexOf(quote, j + 1);
    if (end < 0) break; // cut inside a value: keep what came before
    if (!attributes.has(name)) attributes.set(name, decodeBasicEntities(text.slice(j + 1, end)));
    j = end + 1;
  }
  return finish();

  function finish(): XmlHead {
    const namespaces = new Map<string, string>();
    for (const [name, value] of attributes) {
      if (name === 'xmlns') namespaces.set('', value.trim());
      else if (name.startsWith('xmlns:')) namespaces.set(name.slice(6), value.trim());
    }
    const colon = qname.indexOf(':');
    const prefix = colon > 0 ? qname.slice(0, colon) : '';
    const local = colon > 0 ? qname.slice(colon + 1) : qname;
    return { local, prefix, namespace: namespaces.get(prefix) ?? '', attributes, namespaces, ...(doctype ? { doctype } : {}), bodyStart };
  }
}

/** An attribute of the root by local name, whatever its prefix (`xsi:schemaLocation`, `schemaLocation`). */
export function rootAttribute(head: XmlHead, local: string): string | undefined {
  const direct = head.attributes.get(local);
  if (direct !== undefined) return direct;
  for (const [name, value] of head.attributes) {
    const colon = name.indexOf(':');
    if (colon > 0 && name.slice(colon + 1) === local && name.slice(0, colon) !== 'xmlns') return value;
  }
  return undefined;
}

/**
 * The text of the first element named `local` (any prefix) after `from`, when it holds text
 * directly or through one wrapper such as gco:CharacterString. Bounded: looks at most
 * `maxChars` of text per step.
 */
export function firstElementText(text: string, local: string, from = 0, maxChars = 400): string | undefined {
  let at = from;
  for (let guard = 0; guard < 64; guard++) {
    const hit = text.indexOf(local, at);
    if (hit < 0) return undefined;
    at = hit + local.length;
    const before = text.charCodeAt(hit - 1);
    const after = text.charCodeAt(at);
    // <local ...> or <prefix:local ...>, not a longer name or an end tag.
    const opens = (before === 0x3c || before === 0x3a) && (after === 0x3e || after === 0x20 || after === 0x09 || after === 0x0a || after === 0x0d);
    if (!opens) continue;
    if (before === 0x3a) {
      const lt = text.lastIndexOf('<', hit);
      if (lt < 0 || text.charCodeAt(lt + 1) === 0x2f || hit - lt > 64) continue;
    }
    const gt = text.indexOf('>', at);
    if (gt < 0) return undefined;
    let content = gt + 1;
    // Step into one wrapper element (<gco:CharacterString>...).
    const next = skipSpace(text, content);
    if (text.charCodeAt(next) === 0x3c && isNameStart(text.charCodeAt(next + 1))) {
      const inner = text.indexOf('>', next);
      if (inner < 0 || inner - next > maxChars) return undefined;
      content = inner + 1;
    }
    const end = text.indexOf('<', content);
    const value = text.slice(content, end < 0 ? Math.min(text.length, content + maxChars) : Math.min(end, content + maxChars));
    return decodeBasicEntities(value).trim();
  }
  return undefined;
}

function readDoctype(text: string, from: number): { doctype: NonNullable<XmlHead['doctype']>; end: number } | undefined {
  let i = skipSpace(text, from);
  const nameStart = i;
  while (i < text.length && isNameChar(text.charCodeAt(i))) i++;
  const name = text.slice(nameStart, i);
  const doctype: NonNullable<XmlHead['doctype']> = { name };
  i = skipSpace(text, i);
  const literal = (): string | undefined => {
    i = skipSpace(text, i);
    const q = text[i];
    if (q !== '"' && q !== "'") return undefined;
    const end = text.indexOf(q, i + 1);
    if (end < 0) return undefined;
    const v = text.slice(i + 1, end);
    i = end + 1;
    return v.trim();
  };
  if (text.startsWith('PUBLIC', i)) {
    i += 6;
    const publicId = literal();
    if (publicId !== undefined) doctype.publicId = publicId;
    const systemId = literal();
    if (systemId !== undefined) doctype.systemId = systemId;
  } else if (text.startsWith('SYSTEM', i)) {
    i += 6;
    const systemId = literal();
    if (systemId !== undefined) doctype.systemId = systemId;
  }
  i = skipSpace(text, i);
  if (text[i] === '[') {
    // Internal subset: skip to its closing bracket, quoted strings and comments included.
    i++;
    while (i < text.length && text[i] !== ']') {
      const c = text[i];
      if (c === '"' || c === "'") {
        const end = text.indexOf(c, i + 1);
        if (end < 0) return undefined;
        i = end + 1;
      } else if (text.startsWith('<!--', i)) {
        const end = text.indexOf('-->', i + 4);
        if (end < 0) return undefined;
        i = end + 3;
      } else i++;
    }
    i++;
  }
  const gt = text.indexOf('>', i);
  if (gt < 0) return undefined;
  return { doctype, end: gt + 1 };
}

function decodeBasicEntities(s: string): string {
  if (!s.includes('&')) return s;
  return s.replace(/&(lt|gt|amp|quot|apos);/g, (_m, e: string) => ({ lt: '<', gt: '>', amp: '&', quot: '"', apos: "'" })[e]!);
}

function skipSpace(text: string, i: number): number {
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}

function startsWithIgnoreCase(text: string, word: string, at: number): boolean {
  return text.slice(at, at + word.length).toUpperCase() === word;
}

function isNameStart(c: number): boolean {
  return (c >= 0x61 && c <= 0x7a) || (c >= 0x41 && c <= 0x5a) || c === 0x5f || c === 0x3a || c >= 0xc0;
}

function isNameChar(c: number): boolean {
  return isNameStart(c) || (c >= 0x30 && c <= 0x39) || c === 0x2d || c === 0x2e || c === 0xb7;
}
