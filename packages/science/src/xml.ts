import { XMLParser, XMLValidator } from 'fast-xml-parser';

/** Largest science metadata or resource map document read (bytes, UTF-8); larger ones are not read. */
export const DEFAULT_MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

/** An element: attributes `@_name` (prefix removed), text `#text`, child elements always arrays. */
export type Node = { [key: string]: Node[] | string | undefined };

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const ENTITY_REF = /&(#x[0-9a-fA-F]+|#[0-9]+|[A-Za-z_][\w.-]*);/g;

/** Predefined entities and character references; anything else is left as written (lenient). */
function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(ENTITY_REF, (whole, ref: string) => {
    if (ref[0] === '#') {
      const cp = ref[1] === 'x' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      try {
        return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
      } catch {
        return whole;
      }
    }
    return XML_ENTITIES[ref] ?? whole;
  });
}

const entityDecoder = {
  setExternalEntities: () => undefined,
  addInputEntities: () => {
    throw new Error('entity declarations are not accepted');
  },
  reset: () => undefined,
  setXmlVersion: () => undefined,
  decode: decodeEntities,
};

// Namespace-agnostic: prefixes removed from elements and attributes, so EML written with
// `eml:`, `ns2:` or a default namespace reads the same. Values stay strings.
const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@_',
  removeNSPrefix: true,
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
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

/** Text of a document given as bytes: BOM or XML declaration decides, UTF-8 otherwise; undefined when undecodable. */
export function decodeDocument(input: string | Uint8Array, maxBytes = DEFAULT_MAX_DOCUMENT_BYTES): string | undefined {
  const byteLength = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.byteLength;
  if (byteLength > maxBytes || byteLength === 0) return undefined;
  if (typeof input === 'string') return input.replace(/^\uFEFF/, '');
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
  try {
    return new TextDecoder(label, { fatal: false }).decode(input.subarray(skip));
  } catch {
    return undefined;
  }
}

/**
 * Parse a science metadata document safely: bounded size, DOCTYPE and entity declarations
 * refused, well-formedness checked. Returns the root element's local name and node, or
 * undefined for anything unreadable (never throws).
 */
export function parseLenient(input: string | Uint8Array, maxBytes = DEFAULT_MAX_DOCUMENT_BYTES): { name: string; root: Node } | undefined {
  try {
    const xml = decodeDocument(input, maxBytes);
    if (xml === undefined || xml.trim() === '' || DOCTYPE.test(xml)) return undefined;
    if (XMLValidator.validate(xml) !== true) return undefined;
    const tree = parser.parse(xml) as Record<string, Node[] | string>;
    for (const [name, value] of Object.entries(tree)) {
      if (name.startsWith('#') || name.startsWith('@_') || !Array.isArray(value)) continue;
      const root = value[0];
      if (root) return { name, root };
    }
    return undefined;
  } catch {
    return undefined;
  }
}

/** Child elements named `name` (local name). */
export function kids(node: Node | undefined, name: string): Node[] {
  const v = node?.[name];
  return Array.isArray(v) ? v : [];
}

/** First child element named `name`. */
export function kid(node: Node | undefined, name: string): Node | undefined {
  return kids(node, name)[0];
}

/** Descend a path of local names, collecting every match. */
export function path(node: Node | undefined, ...names: string[]): Node[] {
  let level: Node[] = node ? [node] : [];
  for (const n of names) level = level.flatMap((x) => kids(x, n));
  return level;
}

export function attr(node: Node | undefined, name: string): string | undefined {
  const v = node?.[`@_${name}`];
  return typeof v === 'string' ? v : undefined;
}

/** All text in an element and its descendants, whitespace collapsed; undefined when empty. */
export function text(node: Node | undefined): string | undefined {
  if (!node) return undefined;
  const parts: string[] = [];
  const walk = (n: Node, depth: number): void => {
    if (depth > 64) return;
    const own = n['#text'];
    if (typeof own === 'string') parts.push(own);
    for (const [k, v] of Object.entries(n)) {
      if (k.startsWith('@_') || k === '#text' || !Array.isArray(v)) continue;
      for (const c of v) walk(c, depth + 1);
    }
  };
  walk(node, 0);
  const t = parts.join(' ').replace(/\s+/g, ' ').trim();
  return t === '' ? undefined : t;
}

/** Text of paragraphs kept apart by blank lines (EML para/section, markdown). */
export function paragraphs(node: Node | undefined): string | undefined {
  if (!node) return undefined;
  const blocks: string[] = [];
  const walk = (n: Node, depth: number): void => {
    const paras = [...kids(n, 'para'), ...kids(n, 'markdown')];
    const sections = kids(n, 'section');
    if (paras.length === 0 && sections.length === 0 || depth > 16) {
      const t = text(n);
      if (t) blocks.push(t);
      return;
    }
    for (const t of kids(n, 'title')) {
      const s = text(t);
      if (s) blocks.push(s);
    }
    for (const p of paras) {
      const s = text(p);
      if (s) blocks.push(s);
    }
    for (const s of sections) walk(s, depth + 1);
  };
  walk(node, 0);
  return blocks.length ? blocks.join('\n\n') : undefined;
}

export function num(s: string | undefined): number | undefined {
  if (s === undefined) return undefined;
  const t = s.trim();
  if (t === '') return undefined;
  const n = Number(t);
  return Number.isFinite(n) ? n : undefined;
}

export function uniq(values: Array<string | undefined>): string[] {
  const out: string[] = [];
  for (const v of values) if (v && !out.includes(v)) out.push(v);
  return out;
}

const ORCID = /(\d{4}-\d{4}-\d{4}-\d{3}[\dX])/;
/** A normalized ORCID URL from anything that carries one (`0000-...`, `https://orcid.org/...`). */
export function orcidOf(s: string | undefined): string | undefined {
  const m = s ? ORCID.exec(s) : null;
  return m ? `https://orcid.org/${m[1]}` : undefined;
}

export function firstUrl(s: string | undefined): string | undefined {
  const m = s ? /https?:\/\/[^\s<>"')]+/.exec(s) : null;
  return m ? m[0].replace(/[.,;]+$/, '') : undefined;
}
