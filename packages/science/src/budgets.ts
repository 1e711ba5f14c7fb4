/**
 * Budgets for untrusted XML (science metadata and resource maps), checked by a linear pre-scan
 * before any XML or RDF parser sees the document: the parsers' cost grows with depth times
 * size (a 1.9 MB map nested 32,000 deep took 4 GB), the pre-scan's with size only.
 */
export interface DocumentBudgets {
  /** Largest document read (bytes, UTF-8). */
  maxBytes: number;
  /** Deepest element nesting. */
  maxDepth: number;
  /** Elements in the document. */
  maxElements: number;
  /** Attributes in the document (all elements together). */
  maxAttributes: number;
  /** Characters of text (text nodes and CDATA together). */
  maxTextChars: number;
  /** Links in a resource map (`rdf:resource` attributes); not checked for science metadata. */
  maxLinks: number;
}

export const DEFAULT_BUDGETS: Readonly<DocumentBudgets> = Object.freeze({
  maxBytes: 16 * 1024 * 1024,
  maxDepth: 256,
  maxElements: 500_000,
  maxAttributes: 1_000_000,
  maxTextChars: 8 * 1024 * 1024,
  maxLinks: 250_000,
});

/** Budgets with defaults for what `partial` leaves out. */
export function budgetsOf(partial: Partial<DocumentBudgets> = {}): DocumentBudgets {
  const out = { ...DEFAULT_BUDGETS };
  for (const k of Object.keys(out) as Array<keyof DocumentBudgets>) {
    const v = partial[k];
    if (typeof v === 'number' && v > 0) out[k] = v;
  }
  return out;
}

export type ScanResult =
  | { ok: true; elements: number; text?: string }
  /** `budget`: a limit was exceeded; otherwise the document is not well-formed (or has a DOCTYPE). */
  | { ok: false; budget: boolean; reason: string; text?: string };

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };
const ENTITY_REF = /&(#x[0-9a-fA-F]{1,8}|#[0-9]{1,10}|[A-Za-z_][\w.-]{0,64});/g;

/** Predefined entities and character references; anything else is left as written. Linear. */
export function decodeEntities(text: string): string {
  if (!text.includes('&')) return text;
  return text.replace(ENTITY_REF, (whole, ref: string) => {
    if (ref[0] === '#') {
      const cp = ref[1] === 'x' ? parseInt(ref.slice(2), 16) : parseInt(ref.slice(1), 10);
      return cp > 0 && cp <= 0x10ffff ? String.fromCodePoint(cp) : whole;
    }
    return XML_ENTITIES[ref] ?? whole;
  });
}

const isSpace = (c: number): boolean => c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;

/**
 * One pass over the document, each character looked at a bounded number of times (indexOf
 * from a moving position, no backtracking regex): counts depth, elements, attributes, text
 * and links and stops at the first budget exceeded. With `collectText`, also returns the
 * document's plain text (text nodes and CDATA, entities decoded, whitespace collapsed).
 * Only the structure needed for counting is checked; full well-formedness is the parser's job.
 */
export function scanDocument(xml: string, budgets: DocumentBudgets, options: { links?: boolean; collectText?: boolean } = {}): ScanResult {
  const n = xml.length;
  const parts: string[] | undefined = options.collectText ? [] : undefined;
  let i = 0;
  let depth = 0;
  let elements = 0;
  let attributes = 0;
  let textChars = 0;
  let links = 0;
  const text = (): string | undefined => (parts ? decodeEntities(parts.join(' ')).replace(/\s+/g, ' ').trim() : undefined);
  const fail = (budget: boolean, reason: string): ScanResult => ({ ok: false, budget, reason, ...(parts ? { text: text() } : {}) });
  const addText = (from: number, to: number): boolean => {
    textChars += to - from;
    if (parts && to > from) parts.push(xml.slice(from, to));
    return textChars <= budgets.maxTextChars;
  };
  const overText = () => fail(true, `more than ${budgets.maxTextChars} characters of text`);
  while (i < n) {
    const lt = xml.indexOf('<', i);
    if (!addText(i, lt < 0 ? n : lt)) return overText();
    if (lt < 0) break;
    const c = xml.charCodeAt(lt + 1);
    if (c === 0x21 /* ! */) {
      if (xml.startsWith('<!--', lt)) {
        const close = xml.indexOf('-->', lt + 4);
        if (close < 0) return fail(false, 'a comment is not closed');
        i = close + 3;
      } else if (xml.startsWith('<![CDATA[', lt)) {
        const close = xml.indexOf(']]>', lt + 9);
        if (close < 0) return fail(false, 'a CDATA section is not closed');
        if (!addText(lt + 9, close)) return overText();
        i = close + 3;
      } else return fail(false, 'DOCTYPE and entity declarations are not accepted');
      continue;
    }
    if (c === 0x3f /* ? */) {
      const close = xml.indexOf('?>', lt + 2);
      if (close < 0) return fail(false, 'a processing instruction is not closed');
      i = close + 2;
      continue;
    }
    if (c === 0x2f /* / */) {
      const close = xml.indexOf('>', lt + 2);
      if (close < 0) return fail(false, 'an end tag is not closed');
      if (--depth < 0) return fail(false, 'an end tag has no start tag');
      i = close + 1;
      continue;
    }
    // A start tag: name, attributes, then '>' or '/>'.
    if (++elements > budgets.maxElements) return fail(true, `more than ${budgets.maxElements} elements`);
    if (depth + 1 > budgets.maxDepth) return fail(true, `elements nested more than ${budgets.maxDepth} deep`);
    let j = lt + 1;
    while (j < n) {
      const d = xml.charCodeAt(j);
      if (isSpace(d) || d === 0x3e || d === 0x2f) break;
      j++;
    }
    if (j === lt + 1) return fail(false, "'<' not followed by a name");
    for (;;) {
      while (j < n && isSpace(xml.charCodeAt(j))) j++;
      if (j >= n) return fail(false, 'a start tag is not closed');
      const d = xml.charCodeAt(j);
      if (d === 0x3e /* > */) {
        depth++;
        j++;
        break;
      }
      if (d === 0x2f /* / */ && xml.charCodeAt(j + 1) === 0x3e) {
        j += 2;
        break;
      }
      const nameStart = j;
      while (j < n) {
        const e = xml.charCodeAt(j);
        if (isSpace(e) || e === 0x3d || e === 0x3e || e === 0x2f) break;
        j++;
      }
      if (j === nameStart) return fail(false, 'a malformed attribute');
      const name = xml.slice(nameStart, j);
      while (j < n && isSpace(xml.charCodeAt(j))) j++;
      if (xml.charCodeAt(j) !== 0x3d /* = */) return fail(false, `attribute '${name.slice(0, 40)}' has no value`);
      j++;
      while (j < n && isSpace(xml.charCodeAt(j))) j++;
      const quote = xml[j];
      if (quote !== '"' && quote !== "'") return fail(false, `attribute '${name.slice(0, 40)}' is not quoted`);
      const close = xml.indexOf(quote, j + 1);
      if (close < 0) return fail(false, 'an attribute value is not closed');
      if (++attributes > budgets.maxAttributes) return fail(true, `more than ${budgets.maxAttributes} attributes`);
      if (options.links && (name === 'resource' || name.endsWith(':resource')) && ++links > budgets.maxLinks) return fail(true, `more than ${budgets.maxLinks} links`);
      j = close + 1;
    }
    i = j;
  }
  if (elements === 0) return fail(false, 'no element');
  return parts ? { ok: true, elements, text: text() } : { ok: true, elements };
}

/**
 * Plain text of an XML document (text nodes and CDATA, entities decoded, whitespace
 * collapsed), in linear time; for a malformed document, the text up to where it breaks.
 */
export function plainText(xml: string): string {
  const unbounded: DocumentBudgets = { maxBytes: Infinity, maxDepth: Infinity, maxElements: Infinity, maxAttributes: Infinity, maxTextChars: Infinity, maxLinks: Infinity };
  return scanDocument(xml, unbounded, { collectText: true }).text ?? '';
}
