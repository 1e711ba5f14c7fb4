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
// Only strings with a character outside this class need the precise check above (surrogates
// may form valid pairs); the plain class is much cheaper and almost every string passes it.
// eslint-disable-next-line no-control-regex
const MAYBE_NOT_XML_CHAR = /[^\u0020-\uD7FF\u0009\u000A\u000D\uE000-\uFFFD]/;

/** `value` as the text of scalar kind `scalar`; errors name `path`/`name` (built only then). */
function encodeScalar(scalar: Scalar, value: unknown, path: string, name: string): string {
  switch (scalar) {
    case 'string':
      if (typeof value !== 'string') throw new TypeError(`${path}/${name}: expected a string`);
      if (MAYBE_NOT_XML_CHAR.test(value) && NOT_XML_CHAR.test(value)) throw new TypeError(`${path}/${name}: contains a character XML cannot carry`);
      return value;
    case 'int':
      if (typeof value !== 'number' || !Number.isSafeInteger(value)) throw new TypeError(`${path}/${name}: expected an integer`);
      return String(value);
    case 'boolean':
      if (typeof value !== 'boolean') throw new TypeError(`${path}/${name}: expected a boolean`);
      return value ? 'true' : 'false';
    case 'datetime':
      if (!(value instanceof Date)) throw new TypeError(`${path}/${name}: expected a Date`);
      return formatDateTime(value);
  }
}

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
const NEEDS_ESCAPE = /[&<>"']/;
const ESCAPE_ALL = /[&<>"']/g;

/** Text and attribute values escaped the same way (the five predefined entities). */
function escapeXml(text: string): string {
  return NEEDS_ESCAPE.test(text) ? text.replace(ESCAPE_ALL, (c) => ESCAPES[c]!) : text;
}

/**
 * Write one element of type `spec` straight to strings (no intermediate object tree: every
 * XML answer of the node goes through here, so it is kept lean). Children in schema order;
 * v2-only children left out for v1.
 */
/**
 * A growing document: `+=` on one string (V8 ropes) beats pushing thousands of pieces and
 * joining them. A long document is cut into parts of about PART_CHARS: a string past V8's
 * large-object size (128 KiB) costs a fresh memory mapping each time one is made, more than
 * building the whole listing page it holds.
 */
interface Out {
  s: string;
  parts: string[];
}

const PART_CHARS = 32 * 1024;

/** What writing a child element needs, worked out once per type (no strings built per element). */
interface ChildPlan {
  spec: ChildSpec;
  key: string;
  open: string;
  close: string;
  /** An empty string item is left out (it would read as absent anyway). */
  dropsEmpty: boolean;
}

const plans = new WeakMap<TypeSpec, ChildPlan[]>();

function childPlans(spec: TypeSpec): ChildPlan[] {
  let plan = plans.get(spec);
  if (plan === undefined) {
    plan = (spec.children ?? []).map((c) => ({
      spec: c,
      key: c.key ?? c.name,
      open: `<${c.name}>`,
      close: `</${c.name}>`,
      dropsEmpty: typeof c.type === 'string' && (!c.empty || (c.min === 0 && c.max === 1)),
    }));
    plans.set(spec, plan);
  }
  return plan;
}

const NO_ITEMS: readonly unknown[] = [];

function writeElement(out: Out, qname: string, spec: TypeSpec, value: Model, version: ApiVersion, path: string, extraAttrs = ''): void {
  out.s += '<' + qname + extraAttrs;
  if (spec.attrs) {
    for (const a of spec.attrs) {
      const v = value[a.key ?? a.name];
      if (v === undefined || v === null) {
        if (a.required) throw new TypeError(`${path}/@${a.name}: required attribute missing`);
        continue;
      }
      out.s += ' ' + a.name + '="' + escapeXml(encodeScalar(a.scalar, v, path, `@${a.name}`)) + '"';
    }
  }
  out.s += '>';
  if (spec.text) out.s += escapeXml(encodeScalar(spec.text.scalar, value[spec.text.key], path, 'text()'));
  for (const plan of childPlans(spec)) {
    const c = plan.spec;
    if (c.v2 && version === 'v1') continue;
    const v = value[plan.key];
    const items = c.max === 'n' ? ((v as readonly unknown[] | undefined) ?? NO_ITEMS) : undefined;
    let written = 0;
    const count = items ? items.length : v === undefined || v === null ? 0 : 1;
    for (let i = 0; i < count; i++) {
      const item = items ? items[i] : v;
      if (item === '' && plan.dropsEmpty) continue;
      if (typeof c.type === 'string') out.s += plan.open + escapeXml(encodeScalar(c.type, item, path, c.name)) + plan.close;
      else writeElement(out, c.name, c.type, item as Model, version, `${path}/${c.name}`);
      written++;
      if (out.s.length >= PART_CHARS) {
        out.parts.push(out.s);
        out.s = '';
      }
    }
    if (written < c.min) throw new TypeError(`${path}/${c.name}: required element missing`);
  }
  out.s += '</' + qname + '>';
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
  const out: Out = { s: '<?xml version="1.0" encoding="UTF-8"?>', parts: [] };
  const qname = namespace ? `d1:${rootName}` : rootName;
  writeElement(out, qname, spec, value as Model, version, rootName, namespace ? ` xmlns:d1="${escapeXml(namespace)}"` : '');
  if (out.s !== '' || out.parts.length === 0) out.parts.push(out.s);
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
