import { xmlTree } from '@memberkit/types';
import { budgetsOf, scanDocument, type DocumentBudgets } from './budgets.js';

/** Largest science metadata or resource map document read (bytes, UTF-8); larger ones are not read. */
export const DEFAULT_MAX_DOCUMENT_BYTES = 16 * 1024 * 1024;

/** An element: attributes `@_name` (prefix removed), text `#text`, child elements always arrays. */
export type Node = { [key: string]: Node[] | string | undefined };

/** Single-byte, ASCII-compatible encodings a declaration may name wrongly for UTF-8 bytes. */
const SINGLE_BYTE = /^(?:us-ascii|ascii|iso[-_]?8859[-_]?\d+|latin-?1|l1|windows-125\d|cp125\d|cp819|ibm819)$/;

/** True when `bytes` hold at least one multi-byte sequence and are valid UTF-8 throughout. */
function isNonAsciiUtf8(bytes: Uint8Array): boolean {
  let ascii = true;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i]! >= 0x80) {
      ascii = false;
      break;
    }
  }
  if (ascii) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(bytes);
    return true;
  } catch {
    return false;
  }
}

/**
 * Text of a document given as bytes: a BOM decides, else the XML declaration, else UTF-8;
 * undefined when undecodable or larger than `maxBytes`. A declaration is not believed when
 * it cannot be right: a single-byte encoding (ISO-8859-1, windows-1252...) over bytes that
 * are valid UTF-8 with multi-byte sequences (decoding them as declared would give mojibake
 * such as "TomÃ¡s"; real Latin-1 text is almost never valid UTF-8), or UTF-16 over a
 * declaration that was readable as ASCII. Both are read as UTF-8.
 */
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
    if (m) {
      const declared = m[1]!.toLowerCase();
      if (declared.startsWith('utf-16') || declared === 'ucs-2') label = 'utf-8';
      else if (SINGLE_BYTE.test(declared) && isNonAsciiUtf8(input)) label = 'utf-8';
      else label = declared;
    }
  }
  try {
    return new TextDecoder(label, { fatal: false }).decode(input.subarray(skip));
  } catch {
    return undefined;
  }
}

export type ParsedDocument =
  | { ok: true; name: string; root: Node; text?: string }
  /** `budget`: the document exceeded a budget (not indexed); otherwise it is not readable XML. */
  | { ok: false; budget: boolean; reason: string };

/**
 * Parse a science metadata document safely: size and structure budgets checked by a linear
 * pre-scan first (see budgets.ts), DOCTYPE and entity declarations refused, well-formedness
 * checked. `collectText`: also the document's plain text (for full-text search). Never throws.
 */
export function parseDocument(input: string | Uint8Array, budgets: Partial<DocumentBudgets> = {}, options: { collectText?: boolean } = {}): ParsedDocument {
  const b = budgetsOf(budgets);
  try {
    const size = typeof input === 'string' ? Buffer.byteLength(input, 'utf8') : input.byteLength;
    if (size > b.maxBytes) return { ok: false, budget: true, reason: `larger than ${b.maxBytes} bytes` };
    const xml = decodeDocument(input, b.maxBytes);
    if (xml === undefined || xml.trim() === '') return { ok: false, budget: false, reason: 'empty or not decodable' };
    const scan = scanDocument(xml, b, { collectText: options.collectText === true });
    if (!scan.ok) return { ok: false, budget: scan.budget, reason: scan.reason };
    // Text as written (mixed content keeps its spaces); any prefix reads the same (EML written
    // with `eml:`, `ns2:` or a default namespace).
    let tree: { rootName: string; root: Node };
    try {
      tree = xmlTree(xml, { trim: false, maxDepth: b.maxDepth });
    } catch (err) {
      // xmlTree's message names the problem and where ("not well-formed XML: 3:14: ...").
      return { ok: false, budget: false, reason: (err as Error).message.slice(0, 200) };
    }
    return scan.text === undefined ? { ok: true, name: tree.rootName, root: tree.root } : { ok: true, name: tree.rootName, root: tree.root, text: scan.text };
  } catch (err) {
    return { ok: false, budget: false, reason: `not readable: ${(err as Error)?.message ?? String(err)}`.slice(0, 200) };
  }
}

/** {@link parseDocument} reduced to the root element, or undefined for anything unreadable or over budget. */
export function parseLenient(input: string | Uint8Array, maxBytes = DEFAULT_MAX_DOCUMENT_BYTES): { name: string; root: Node } | undefined {
  const r = parseDocument(input, { maxBytes });
  return r.ok ? { name: r.name, root: r.root } : undefined;
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

/** Distinct non-empty values in first-seen order (a Set: linear, whatever the count). */
export function uniq(values: Array<string | undefined>): string[] {
  const seen = new Set<string>();
  for (const v of values) if (v) seen.add(v);
  return [...seen];
}

const ORCID = /(\d{4}-\d{4}-\d{4}-\d{3}[\dX])/;
/** A normalized ORCID URL from anything that carries one (`0000-...`, `https://orcid.org/...`). */
export function orcidOf(s: string | undefined): string | undefined {
  const m = s ? ORCID.exec(s) : null;
  return m ? `https://orcid.org/${m[1]}` : undefined;
}

export function firstUrl(s: string | undefined): string | undefined {
  const m = s ? /https?:\/\/[^\s<>"')]+/.exec(s) : null;
  if (!m) return undefined;
  // Trailing punctuation trimmed by a loop: /[.,;]+$/ is quadratic on a long run of dots.
  let end = m[0].length;
  while (end > 0 && '.,;'.includes(m[0][end - 1]!)) end--;
  return m[0].slice(0, end);
}
