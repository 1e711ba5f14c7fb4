import { DecodeError } from '../decode-error.js';
import { formatDateTime, parseDateTime } from '../datetime.js';
import type { ApiVersion } from '../namespaces.js';
import type { XmlNode } from './safe-parse.js';

/**
 * A small schema language mirroring the XSDs: each DataONE type is described once (element
 * order, cardinality, scalar kinds, v2-only parts) and one generic encoder/decoder reads the
 * description. Element order in `children` IS the schema's sequence order.
 */
export type Scalar = 'string' | 'int' | 'boolean' | 'datetime';

export interface AttrSpec {
  name: string;
  /** Model property name when it differs from the attribute name. */
  key?: string;
  scalar: Scalar;
  required?: boolean;
}

export interface ChildSpec {
  name: string;
  key?: string;
  type: Scalar | TypeSpec;
  /** minOccurs: 1 makes the element required. */
  min: 0 | 1;
  /** maxOccurs: 'n' (unbounded) makes the model property an array. */
  max: 1 | 'n';
  /** Present only in the v2 schema (left out when encoding for v1). */
  v2?: boolean;
  /**
   * A plain xs:string element that may be empty (ipAddress, userAgent, formatName...).
   * Other string elements are NonEmptyString-like: an empty or blank one is refused.
   */
  empty?: boolean;
}

export interface TypeSpec {
  name: string;
  attrs?: AttrSpec[];
  children?: ChildSpec[];
  /** Simple content (text) of the element, e.g. Checksum's digest. */
  text?: { key: string; scalar: Scalar; required?: boolean };
}

type Model = Record<string, unknown>;

// Code points XML 1.0 cannot carry at all (not even escaped).
// eslint-disable-next-line no-control-regex
const NOT_XML_CHAR = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
// One test for the common case: a string with no character outside this class is written as it
// is (nothing to escape, nothing XML cannot carry). The rest (the five escaped characters,
// controls, surrogates, U+FFFE/U+FFFF) take the precise check and the escape.
// eslint-disable-next-line no-control-regex
const NOT_PLAIN = /[^\u0009\u000A\u000D\u0020\u0021\u0023-\u0025\u0028-\u003B\u003D\u003F-\uD7FF\uE000-\uFFFD]/;

/**
 * The text of a value of each scalar kind, ready for the document (escaped); errors name
 * `path`/`name` (built only then). Only strings can need escaping: integers, booleans and
 * datetimes are written with digits, letters and `-+:.` alone.
 */
const encodeScalar: Record<Scalar, (value: unknown, path: string, name: string) => string> = {
  string(value, path, name) {
    if (typeof value !== 'string') throw new TypeError(`${path}/${name}: expected a string`);
    if (!NOT_PLAIN.test(value)) return value;
    if (NOT_XML_CHAR.test(value)) throw new TypeError(`${path}/${name}: contains a character XML cannot carry`);
    return escapeXml(value);
  },
  int(value, path, name) {
    if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new TypeError(`${path}/${name}: expected an integer`);
    return String(value);
  },
  boolean(value, path, name) {
    if (typeof value !== 'boolean') throw new TypeError(`${path}/${name}: expected a boolean`);
    return value ? 'true' : 'false';
  },
  datetime(value, path, name) {
    if (!(value instanceof Date)) throw new TypeError(`${path}/${name}: expected a Date`);
    return formatDateTime(value);
  },
};

const INTEGER = /^[+-]?\d+$/;

function decodeScalar(scalar: Scalar, text: string, path: string): unknown {
  switch (scalar) {
    case 'string':
      return text;
    case 'int': {
      const t = text.trim();
      const n = Number(t);
      if (!INTEGER.test(t) || !Number.isSafeInteger(n)) throw new DecodeError(`'${text}' is not an integer`, path);
      return n;
    }
    case 'boolean': {
      const t = text.trim();
      if (t === 'true' || t === '1') return true;
      if (t === 'false' || t === '0') return false;
      throw new DecodeError(`'${text}' is not a boolean (true or false)`, path);
    }
    case 'datetime':
      return parseDateTime(text, path);
  }
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };
const ESCAPE_ALL = /[&<>"']/g;

/** Text and attribute values escaped the same way (the five predefined entities). */
function escapeXml(text: string): string {
  return text.replace(ESCAPE_ALL, (c) => ESCAPES[c]!);
}

/**
 * A document being written. Each item of a repeated element is one string (a short V8 rope: `+`
 * on a few pieces), kept as a piece; the pieces are joined into parts of about PART_CHARS.
 * `+=` on one string over a whole part is cheaper to build, but measured on 1,000-entry
 * listings the page then cost about a third more in all: Buffer.byteLength and the socket write
 * flatten the rope first, and its cells live long enough to be copied by the scavenger; a join
 * per part leaves flat strings. Parts stay small: a string past V8's large-object size (128 KiB)
 * costs a fresh memory mapping each time one is made, more than building the whole listing
 * page it holds.
 */
interface Out {
  pieces: string[];
  chars: number;
  parts: string[];
}

const PART_CHARS = 32 * 1024;

/** Ends an item of a repeated element: `text` becomes a piece, and a part once there are PART_CHARS. */
function endItem(out: Out, text: string): string {
  out.pieces.push(text);
  out.chars += text.length;
  if (out.chars >= PART_CHARS) {
    out.parts.push(out.pieces.join(''));
    out.pieces = [];
    out.chars = 0;
  }
  return '';
}

const NO_ITEMS: readonly unknown[] = [];

/**
 * The items of a repeated element's value: none when it is absent; a falsy value that is no
 * array (0, '', false: a model typed wrong) is one item, for the checks to refuse.
 */
function itemsOf(value: unknown): ArrayLike<unknown> {
  return value === undefined || value === null ? NO_ITEMS : ((value || [value]) as ArrayLike<unknown>);
}

const missingElement = (path: string, name: string): TypeError => new TypeError(`${path}/${name}: required element missing`);
const missingAttribute = (path: string, name: string): TypeError => new TypeError(`${path}/@${name}: required attribute missing`);

/**
 * Writes the content of an element (attributes, `>`, text, children) after `text`, which holds
 * the document so far from the last piece on; returns the text it leaves for the caller.
 */
type ContentWriter = (out: Out, value: Model, text: string) => string;

/**
 * Source of a ContentWriter, compiled once per type, version and root (every XML answer of the
 * node goes through here, listings thousands of elements a page). Straight-line code reads each
 * property by its name and writes each run of fixed markup as one string
 * ('</identifier><formatId>'). Measured on 1,000-entry listings: about 1.5x faster than
 * interpreting the spec, 1.4x faster than closures composed per child (their shared call sites
 * and keyed loads go megamorphic). Only the spec's names and paths (constants of this package)
 * enter the code, each as a JSON string literal; values never do, they are read from the model
 * at run time and go through encodeScalar.
 */
class WriterSource {
  private readonly lines: string[] = [];
  /** Fixed markup not written yet: merged with the next value written. */
  private markup = '';
  private vars = 0;

  constructor(private readonly version: ApiVersion) {}

  private markupThen(expr: string): void {
    this.lines.push(this.markup ? `s = s + ${lit(this.markup)} + ${expr};` : `s = s + ${expr};`);
    this.markup = '';
  }

  /** Writes the fixed markup now (before a branch or a loop). */
  private settle(): void {
    if (this.markup) this.lines.push(`s += ${lit(this.markup)};`);
    this.markup = '';
  }

  private scalar(scalar: Scalar, expr: string, path: string, name: string): void {
    this.markupThen(`encodeScalar.${scalar}(${expr}, ${lit(path)}, ${lit(name)})`);
  }

  content(spec: TypeSpec, path: string, v: string, ancestors: ReadonlySet<TypeSpec>): void {
    if (ancestors.has(spec)) throw new Error(`${path}: a recursive TypeSpec cannot be compiled`);
    const within = new Set(ancestors).add(spec);
    for (const a of spec.attrs ?? []) {
      this.lines.push(`x = ${v}[${lit(a.key ?? a.name)}];`);
      if (a.required) this.lines.push(`if (x === undefined || x === null) throw missingAttribute(${lit(path)}, ${lit(a.name)});`);
      else {
        this.settle();
        this.lines.push('if (x !== undefined && x !== null) {');
      }
      this.markup += ` ${a.name}="`;
      this.scalar(a.scalar, 'x', path, `@${a.name}`);
      this.markup += '"';
      if (!a.required) this.closeBlock();
    }
    this.markup += '>';
    if (spec.text) this.scalar(spec.text.scalar, `${v}[${lit(spec.text.key)}]`, path, 'text()');
    for (const c of spec.children ?? []) {
      if (c.v2 && this.version === 'v1') continue;
      if (typeof c.type === 'string') this.scalarChild(c, c.type, path, v);
      else this.complexChild(c, c.type, path, v, within);
    }
  }

  private scalarChild(c: ChildSpec, scalar: Scalar, path: string, v: string): void {
    const get = `${v}[${lit(c.key ?? c.name)}]`;
    const missing = `throw missingElement(${lit(path)}, ${lit(c.name)});`;
    // An empty string item is left out (it would read as absent anyway).
    const dropsEmpty = !c.empty || (c.min === 0 && c.max === 1);
    const write = (): void => {
      this.markup += `<${c.name}>`;
      this.scalar(scalar, 'x', path, c.name);
      this.markup += `</${c.name}>`;
    };
    if (c.max === 'n') {
      const n = ++this.vars;
      this.settle();
      this.lines.push(`const items${n} = itemsOf(${get});`);
      if (c.min === 1) this.lines.push(`let written${n} = 0;`);
      this.lines.push(`for (let i${n} = 0; i${n} < items${n}.length; i${n}++) {`, `x = items${n}[i${n}];`);
      if (dropsEmpty) this.lines.push(`if (x === '') continue;`);
      write();
      this.endItem();
      if (c.min === 1) this.lines.push(`written${n}++;`);
      this.lines.push('}');
      if (c.min === 1) this.lines.push(`if (written${n} === 0) ${missing}`);
      return;
    }
    this.lines.push(`x = ${get};`);
    const absent = `x === undefined || x === null${dropsEmpty ? " || x === ''" : ''}`;
    if (c.min === 1) {
      this.lines.push(`if (${absent}) ${missing}`);
      write();
    } else {
      this.settle();
      this.lines.push(`if (!(${absent})) {`);
      write();
      this.closeBlock();
    }
  }

  private complexChild(c: ChildSpec, spec: TypeSpec, path: string, v: string, ancestors: ReadonlySet<TypeSpec>): void {
    const get = `${v}[${lit(c.key ?? c.name)}]`;
    const missing = `throw missingElement(${lit(path)}, ${lit(c.name)});`;
    const n = ++this.vars;
    const item = `v${n}`;
    const write = (): void => {
      this.markup += `<${c.name}`;
      this.content(spec, `${path}/${c.name}`, item, ancestors);
      this.markup += `</${c.name}>`;
    };
    if (c.max === 'n') {
      this.settle();
      this.lines.push(`const items${n} = itemsOf(${get});`);
      if (c.min === 1) this.lines.push(`if (!(items${n}.length > 0)) ${missing}`);
      this.lines.push(`for (let i${n} = 0; i${n} < items${n}.length; i${n}++) {`, `const ${item} = items${n}[i${n}];`);
      write();
      this.endItem();
      this.lines.push('}');
      return;
    }
    this.lines.push(`const ${item} = ${get};`);
    if (c.min === 1) {
      this.lines.push(`if (${item} === undefined || ${item} === null) ${missing}`);
      write();
    } else {
      this.settle();
      this.lines.push(`if (${item} !== undefined && ${item} !== null) {`);
      write();
      this.closeBlock();
    }
  }

  private endItem(): void {
    this.lines.push(this.markup ? `s = endItem(out, s + ${lit(this.markup)});` : 's = endItem(out, s);');
    this.markup = '';
  }

  private closeBlock(): void {
    this.settle();
    this.lines.push('}');
  }

  finish(): string {
    this.settle();
    return this.lines.join('\n');
  }
}

const lit = (text: string): string => JSON.stringify(text);

function compileWriter(spec: TypeSpec, version: ApiVersion, path: string): ContentWriter {
  const source = new WriterSource(version);
  source.content(spec, path, 'v0', new Set());
  // Named after the type, for profiles.
  const body = `return function write${spec.name.replace(/\W/g, '_')}(out, v0, s) {\nlet x;\n${source.finish()}\nreturn s;\n};`;
  const factory = new Function('encodeScalar', 'endItem', 'itemsOf', 'missingElement', 'missingAttribute', body) as (...helpers: unknown[]) => ContentWriter;
  return factory(encodeScalar, endItem, itemsOf, missingElement, missingAttribute);
}

/** Compiled writers by spec, then by version and root path (error messages name the path). */
const writers = new WeakMap<TypeSpec, Map<string, ContentWriter>>();

function writerFor(spec: TypeSpec, version: ApiVersion, path: string): ContentWriter {
  let byPosition = writers.get(spec);
  if (byPosition === undefined) writers.set(spec, (byPosition = new Map()));
  const key = `${version} ${path}`;
  let writer = byPosition.get(key);
  if (writer === undefined) byPosition.set(key, (writer = compileWriter(spec, version, path)));
  return writer;
}

/**
 * Serialize `value` as a document whose root `rootName` is in `namespace` (prefix `d1`,
 * children unqualified, as clients expect). Throws TypeError if the value breaks the spec:
 * that is a programming error, never the caller's input.
 */
export function encodeDocument(spec: TypeSpec, rootName: string, namespace: string | undefined, value: object, version: ApiVersion): string {
  const parts = encodeDocumentParts(spec, rootName, namespace, value, version);
  return parts.length === 1 ? parts[0]! : parts.join('');
}

/** `encodeDocument`'s document as consecutive parts of about 32 K characters (one when short). */
export function encodeDocumentParts(spec: TypeSpec, rootName: string, namespace: string | undefined, value: object, version: ApiVersion): string[] {
  const qname = namespace ? `d1:${rootName}` : rootName;
  const out: Out = { pieces: [], chars: 0, parts: [] };
  const head = `<?xml version="1.0" encoding="UTF-8"?><${qname}${namespace ? ` xmlns:d1="${escapeXml(namespace)}"` : ''}`;
  const rest = writerFor(spec, version, rootName)(out, value as Model, head);
  out.pieces.push(rest + '</' + qname + '>');
  out.parts.push(out.pieces.join(''));
  return out.parts;
}

function textOf(node: XmlNode | string): string {
  if (typeof node === 'string') return node;
  const t = node['#text'];
  return typeof t === 'string' ? t : '';
}

/**
 * Production nodes send empty optional elements (`<seriesId/>`, `<preferredMemberNode/>`,
 * `<obsoletes></obsoletes>`): an empty element that may be left out reads as left out, and an
 * empty item of a repeated element as no item. A required single element stays required (an
 * empty `<identifier/>` is refused); a required element the schema lets be empty (`empty`:
 * LogEntry/userAgent) is kept as ''; an empty complex element is decoded as what it is.
 */
function readsAsAbsent(c: ChildSpec, item: XmlNode | string): boolean {
  if (typeof item !== 'string' && Object.keys(item).some((k) => k !== '#text' && !k.startsWith('@_'))) return false;
  if (textOf(item) !== '') return false;
  // Complex types stay strict: an empty `<accessPolicy/>` breaks the schema, not a habit of production nodes.
  if (typeof c.type !== 'string') return false;
  // Items of a repeated element the schema lets be empty (QueryField/description) are kept.
  if (c.type === 'string' && c.empty && c.max === 'n') return false;
  return c.min === 0 || (c.max === 'n' && !c.empty);
}

/** Decode an element of type `spec`; strict where the schema is: required parts and cardinality. */
export function decodeNode(spec: TypeSpec, node: XmlNode, path: string): Model {
  const out: Model = {};
  for (const a of spec.attrs ?? []) {
    const raw = node[`@_${a.name}`];
    if (raw === undefined) {
      if (a.required) throw new DecodeError('required attribute is missing', `${path}/@${a.name}`);
      continue;
    }
    out[a.key ?? a.name] = decodeScalar(a.scalar, String(raw), `${path}/@${a.name}`);
  }
  if (spec.text) {
    const text = textOf(node);
    if (spec.text.required && text === '') throw new DecodeError('must not be empty', path);
    out[spec.text.key] = decodeScalar(spec.text.scalar, text, path);
  }
  const known = new Set<string>();
  for (const c of spec.children ?? []) {
    known.add(c.name);
    const p = `${path}/${c.name}`;
    const raw = node[c.name];
    const items = Array.isArray(raw) ? raw.filter((item) => !readsAsAbsent(c, item)) : [];
    if (items.length < c.min) throw new DecodeError(Array.isArray(raw) && raw.length > 0 ? 'must not be empty' : 'required element is missing', p);
    if (c.max === 1 && items.length > 1) throw new DecodeError('element may appear only once', p);
    const decoded = items.map((item) => {
      if (typeof c.type === 'string') {
        if (typeof item !== 'string') {
          const child = Object.keys(item).find((k) => k !== '#text' && !k.startsWith('@_'));
          if (child !== undefined) throw new DecodeError(`unexpected element <${child}> in a text-only element`, p);
        }
        const text = textOf(item);
        if (c.type === 'string' && !c.empty && text === '') throw new DecodeError('must not be empty', p);
        return decodeScalar(c.type, text, p);
      }
      return decodeNode(c.type, typeof item === 'string' ? { '#text': item } : item, p);
    });
    if (c.max === 'n') out[c.key ?? c.name] = decoded;
    else if (decoded.length) out[c.key ?? c.name] = decoded[0];
  }
  if (!spec.text && textOf(node) !== '') throw new DecodeError(`unexpected text '${textOf(node).slice(0, 40)}' in element-only content`, path);
  for (const key of Object.keys(node)) {
    if (key === '#text' || key.startsWith('@_')) continue;
    if (!known.has(key)) throw new DecodeError(`unexpected element <${key}>`, path);
  }
  return out;
}
