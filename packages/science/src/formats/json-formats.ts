/**
 * JSON documents: JSON-LD by `@context` and `@type` (schema.org Dataset → the federation's
 * science-on-schema.org format, CodeMeta), GeoJSON, Jupyter notebooks, plain JSON. One
 * linear tokenizing pass over the head, tolerant of a document cut at the end of the head.
 */
import type { ContentMatch } from './content-match.js';

export const SCIENCE_ON_SCHEMA_ORG = 'science-on-schema.org/Dataset;ld+json';
const GEOJSON_TYPES = new Set(['FeatureCollection', 'Feature', 'Point', 'MultiPoint', 'LineString', 'MultiLineString', 'Polygon', 'MultiPolygon', 'GeometryCollection']);
const MAX_DEPTH = 64;

interface Facts {
  /** Every string inside the top-level (or @graph member) `@context` values. */
  context: string[];
  /** `@type` values of the document's main node or of its @graph members. */
  types: string[];
  /** Keys and string values of the top-level object. */
  topKeys: Set<string>;
  topType?: string;
}

/** What a JSON head says; undefined when `text` does not start like JSON. */
export function matchJson(text: string, truncated: boolean): ContentMatch | undefined {
  const facts = scan(text, truncated);
  if (!facts) return undefined;
  const json = (formatId: string, mediaType: string, reason: string, exact = true): ContentMatch => ({ formatId, exact, mediaType, reason });
  if (facts.context.length > 0) {
    const schemaOrg = facts.context.some((c) => /^https?:\/\/schema\.org\/?$/i.test(c.trim()));
    const dataset = facts.types.some((t) => /^(?:(?:https?:\/\/schema\.org\/)|(?:schema|sdo|so):)?Dataset$/i.test(t.trim()));
    if (schemaOrg && dataset) return json(SCIENCE_ON_SCHEMA_ORG, 'application/ld+json', 'JSON-LD schema.org Dataset');
    if (facts.context.some((c) => /codemeta[-/]2\.0/i.test(c))) return json('https://doi.org/10.5063/schema/codemeta-2.0', 'application/ld+json', 'CodeMeta 2.0 context');
    if (facts.context.some((c) => /codemeta[-/]1\.0/i.test(c))) return json('https://doi.org/10.5063/schema/codemeta-1.0', 'application/ld+json', 'CodeMeta 1.0 context');
    return json('application/json-ld', 'application/ld+json', 'JSON-LD (@context)');
  }
  if (facts.topKeys.has('nbformat') && facts.topKeys.has('cells')) return json('application/x-ipynb+json', 'application/x-ipynb+json', 'Jupyter notebook');
  if (facts.topType !== undefined && GEOJSON_TYPES.has(facts.topType)) return json('application/geo+json', 'application/geo+json', `GeoJSON ${facts.topType}`);
  return json('application/json', 'application/json', 'JSON', false);
}

/**
 * Tokenizes the head once. Undefined when it is not JSON (a syntax error before the end of
 * the head, a bare scalar, nesting deeper than MAX_DEPTH).
 */
function scan(text: string, truncated: boolean): Facts | undefined {
  let i = 0;
  const n = text.length;
  while (i < n && isSpace(text.charCodeAt(i))) i++;
  const first = text[i];
  if (first !== '{' && first !== '[') return undefined;
  const facts: Facts = { context: [], types: [], topKeys: new Set() };

  // One frame per open container: its kind, the key being read, whether it is the main node
  // (top-level object or a member of its @graph), and whether it lies inside an @context.
  interface Frame { kind: '{' | '['; key?: string; expectKey: boolean; main: boolean; inContext: boolean; graph: boolean; depth: number }
  const stack: Frame[] = [];
  let ended = false;

  const valueRole = (): { main: boolean; inContext: boolean; key?: string; depth: number; graphMember: boolean } => {
    const top = stack[stack.length - 1];
    if (!top) return { main: true, inContext: false, depth: 0, graphMember: false };
    if (top.kind === '{') return { main: top.main, inContext: top.inContext || top.key === '@context', ...(top.key !== undefined ? { key: top.key } : {}), depth: top.depth, graphMember: false };
    return { main: top.main, inContext: top.inContext, depth: top.depth, graphMember: top.graph };
  };

  const onString = (value: string): void => {
    const role = valueRole();
    if (role.inContext) facts.context.push(value);
    const top = stack[stack.length - 1];
    const key = top?.kind === '{' ? top.key : stack[stack.length - 2]?.key;
    const owner = top?.kind === '{' ? top : stack[stack.length - 2];
    if (key === '@type' && owner?.main) facts.types.push(value);
    if (top?.kind === '{' && top.depth === 1 && key === 'type') facts.topType = value;
  };

  while (i < n) {
    const c = text[i]!;
    if (isSpace(c.charCodeAt(0))) { i++; continue; }
    if (ended) return undefined; // content after the top-level value
    const top = stack[stack.length - 1];
    if (c === '{' || c === '[') {
      if (stack.length >= MAX_DEPTH) return undefined;
      if (top?.kind === '{' && top.expectKey) return undefined;
      const role = valueRole();
      const main = stack.length === 0 || (c === '{' && role.graphMember && role.main);
      stack.push({ kind: c, expectKey: c === '{', main: c === '{' ? main : role.main, inContext: role.inContext, graph: c === '[' && role.key === '@graph', depth: stack.length + 1 });
      i++;
      continue;
    }
    if (c === '}' || c === ']') {
      if (!top || top.kind !== (c === '}' ? '{' : '[')) return undefined;
      stack.pop();
      if (stack.length === 0) ended = true;
      else afterValue();
      i++;
      continue;
    }
    if (c === ',') {
      if (!top) return undefined;
      if (top.kind === '{') { top.expectKey = true; top.key = undefined; }
      i++;
      continue;
    }
    if (c === ':') {
      if (!top || top.kind !== '{' || top.expectKey || top.key === undefined) return undefined;
      i++;
      continue;
    }
    if (c === '"') {
      const end = stringEnd(text, i + 1);
      if (end === -2) return undefined;
      if (end < 0) return truncated ? facts : undefined;
      const value = unescape(text.slice(i + 1, end));
      i = end + 1;
      if (!top) return undefined;
      if (top.kind === '{' && top.expectKey) {
        top.key = value;
        top.expectKey = false;
        if (top.depth === 1) facts.topKeys.add(value);
      } else onString(value);
      continue;
    }
    // A number, true, false or null.
    const start = i;
    while (i < n && /[-+.0-9eEa-z]/.test(text[i]!)) i++;
    if (i === start || !top || (top.kind === '{' && top.expectKey)) return undefined;
    const word = text.slice(start, i);
    if (!/^(?:true|false|null|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)$/.test(word) && !(i === n && truncated)) return undefined;
  }
  if (!ended && !truncated) return undefined;
  return facts;

  function afterValue(): void {
    // Nothing to do: a key stays set until the next comma.
  }
}

function stringEnd(text: string, from: number): number {
  for (let i = from; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x5c /* \ */) i++;
    else if (c === 0x22) return i;
    else if (c < 0x20) return -2; // raw control characters are not JSON
  }
  return -1;
}

function unescape(s: string): string {
  if (!s.includes('\\') || s.length > 2048) return s;
  try {
    return JSON.parse(`"${s}"`) as string;
  } catch {
    return s;
  }
}

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x09 || c === 0x0a || c === 0x0d;
}
