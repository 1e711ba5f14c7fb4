import { parseSolrDate, type QueryNode } from '../parser.js';
import { LINK_FIELDS, lookupField, MULTI_FIELDS, READERS_FIELD, SINGLE_FIELDS, type FieldDef } from '../schema.js';
import { InvalidQueryError, type FieldValue, type IndexDoc, type SearchRequest } from '../types.js';
import type { AccessScope } from './access.js';

/**
 * The SQL shared by the SQLite and PostgreSQL indexes. Layout:
 * - `docs`: one row per document, one column per single-valued field (quoted field name;
 *   dates as ISO 8601 UTC text, numbers as floating point, booleans as 0/1);
 * - `mv(pid, field, value, ord, src)`: multi-valued fields (and `_readers`), `src` is '' for
 *   the document's own values or the PID of the resource map contributing a relation;
 * - full text per text field: an FTS5 table (SQLite) or tsvector columns (PostgreSQL).
 * Placeholders are `?`; PostgreSQL numbers them.
 */
export interface Dialect {
  /**
   * Where text fields' stored values live: columns of `docs` (PostgreSQL), or only in the
   * FTS5 table (SQLite: keeps docs rows narrow, so scans and counts stay fast).
   */
  textInDocs: boolean;
  /** A condition matching a text field: a term or phrase (tokenized), or a prefix (last token). */
  textMatch(field: string, kind: 'phrase' | 'prefix', tokens: string[], params: unknown[]): string;
  /** Case-sensitive wildcard match of `expr` (pattern: `*`, `?`, \u0001 = literal *, \u0002 = literal ?). */
  wildcard(expr: string, pattern: string, params: unknown[], caseInsensitive: boolean): string;
}

export const q = (name: string): string => `"${name.replace(/"/g, '""')}"`;

/** Tokens as both full-text engines split them: runs of letters and digits, lower-cased. */
export function tokenize(value: string): string[] {
  return (value.normalize('NFKD').replace(/\p{M}/gu, '').toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []).slice(0, 64);
}

function field(name: string): FieldDef {
  const d = lookupField(name);
  if (!d) throw new InvalidQueryError(`undefined field ${name}`);
  return d;
}

/** A value of `def`'s type as stored, or an InvalidQueryError. */
export function storedValue(def: FieldDef, value: string): string | number {
  switch (def.type) {
    case 'date': {
      const d = parseSolrDate(value);
      if (!d) throw new InvalidQueryError(`invalid date '${value}' for field ${def.name} (e.g. 2020-01-31T00:00:00Z, NOW-1DAY)`);
      return d.toISOString();
    }
    case 'long':
    case 'double': {
      const n = Number(value);
      if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidQueryError(`invalid number '${value}' for field ${def.name}`);
      return n;
    }
    case 'boolean': {
      const v = value.toLowerCase();
      if (v !== 'true' && v !== 'false') throw new InvalidQueryError(`invalid boolean '${value}' for field ${def.name} (true or false)`);
      return v === 'true' ? 1 : 0;
    }
    default:
      return value;
  }
}

/**
 * Conditions joined by `op`, grouped in a balanced tree: SQL parsers nest `a OR b OR c...`
 * one level per operator (SQLite refuses 1,000 levels), a balanced tree only log2(n).
 */
export function joinBalanced(parts: readonly string[], op: 'AND' | 'OR'): string {
  if (parts.length <= 8) return parts.join(` ${op} `);
  const mid = parts.length >> 1;
  return `(${joinBalanced(parts.slice(0, mid), op)}) ${op} (${joinBalanced(parts.slice(mid), op)})`;
}

export class SqlCompiler {
  constructor(private readonly dialect: Dialect) {}

  /** A boolean SQL condition on `docs d` for the node; link fields as `scope` may see them. */
  compile(node: QueryNode, params: unknown[], scope: AccessScope): string {
    switch (node.kind) {
      case 'all':
        return '1=1';
      case 'bool': {
        // Compiled in the order the SQL lists them: placeholders take params in that order.
        const must = node.clauses.filter((c) => c.occur === 'must').map((c) => `(${this.compile(c.node, params, scope)})`);
        // Beside a required clause, optional ones only score (Lucene): they do not filter.
        const should = must.length ? [] : this.anyOf(node.clauses.filter((c) => c.occur === 'should').map((c) => c.node), params, scope);
        // NOT a AND NOT b... as NOT (a OR b...): the alternatives merge as in anyOf.
        const excluded = node.clauses.filter((c) => c.occur === 'mustNot').map((c) => c.node);
        const not = excluded.length ? this.anyOf(excluded, params, scope) : [];
        const parts = [...must];
        if (should.length) parts.push(`(${joinBalanced(should.map((s) => `(${s})`), 'OR')})`);
        if (not.length) parts.push(`NOT COALESCE((${joinBalanced(not.map((s) => `(${s})`), 'OR')}), FALSE)`);
        return parts.length ? joinBalanced(parts, 'AND') : '1=1';
      }
      default:
        return this.leaf(node, params, scope);
    }
  }

  /**
   * Alternatives, merged so that their cost does not grow with a subquery per clause: exact
   * terms on one single-valued field become one `IN` list, and every clause on multi-valued
   * fields becomes one pass over `mv` (one visibility check per matching row). A list of
   * identifiers, package members or keywords is then one lookup.
   */
  private anyOf(nodes: readonly QueryNode[], params: unknown[], scope: AccessScope): string[] {
    const isLeaf = (n: QueryNode): n is Exclude<QueryNode, { kind: 'all' | 'bool' }> => n.kind !== 'all' && n.kind !== 'bool';
    const multi = nodes.filter((n) => isLeaf(n) && field(n.field).multivalued) as Array<Exclude<QueryNode, { kind: 'all' | 'bool' }>>;
    const rest = nodes.filter((n) => !(isLeaf(n) && field(n.field).multivalued));
    const out: string[] = [];
    if (multi.length > 1) {
      const conds: string[] = [];
      const terms = new Map<string, Set<string | number>>();
      for (const n of multi) {
        if (n.kind === 'term') {
          const set = terms.get(n.field) ?? new Set();
          terms.set(n.field, set.add(storedValue(field(n.field), n.value)));
          continue;
        }
        conds.push(
          this.leaf(n, params, scope, (def, cond) => {
            params.push(def.name);
            return `(m.field = ? AND ${cond('m.value')})`;
          }),
        );
      }
      for (const [name, values] of terms) {
        params.push(name, ...values);
        conds.push(`(m.field = ? AND m.value IN (${[...values].map(() => '?').join(', ')}))`);
      }
      const links = multi.some((n) => LINK_FIELDS.includes(n.field));
      out.push(`d.id IN (SELECT m.pid FROM mv m WHERE (${joinBalanced(conds, 'OR')})${links ? ` AND ${this.visibleValue('m', scope)}` : ''})`);
    } else rest.unshift(...multi);
    const singleTerms = new Map<string, Array<string | number>>();
    for (const n of rest) if (n.kind === 'term' && field(n.field).type !== 'text' && !field(n.field).multivalued) singleTerms.set(n.field, [...(singleTerms.get(n.field) ?? []), storedValue(field(n.field), n.value)]);
    const done = new Set<string>();
    for (const n of rest) {
      const values = n.kind === 'term' ? singleTerms.get(n.field) : undefined;
      if (n.kind === 'term' && values && values.length > 1) {
        if (done.has(n.field)) continue;
        done.add(n.field);
        const unique = [...new Set(values)];
        out.push(
          this.on(field(n.field), params, scope, (e) => {
            params.push(...unique);
            return `${e} IN (${unique.map(() => '?').join(', ')})`;
          }),
        );
      } else out.push(this.compile(n, params, scope));
    }
    return out;
  }

  /** `cond` on the column(s) holding `def`'s values, as a condition on `docs d`. */
  private on(def: FieldDef, params: unknown[], scope: AccessScope, cond: (expr: string) => string): string {
    if (def.type === 'text' && !this.dialect.textInDocs) return `d.rid IN (SELECT rowid FROM fts WHERE ${cond(`fts.${q(def.name)}`)})`;
    if (!def.multivalued) return cond(`d.${q(def.name)}`);
    params.push(def.name);
    const visible = LINK_FIELDS.includes(def.name) ? ` AND ${scope.linkVisible('m')}` : '';
    return `d.id IN (SELECT m.pid FROM mv m WHERE m.field = ? AND ${cond('m.value')}${visible})`;
  }

  /** A leaf; `where` places a condition on the field's column(s) (default: {@link on}). */
  private leaf(
    node: Exclude<QueryNode, { kind: 'all' | 'bool' }>,
    params: unknown[],
    scope: AccessScope,
    where: (def: FieldDef, cond: (expr: string) => string) => string = (def, cond) => this.on(def, params, scope, cond),
  ): string {
    const def = field(node.field);
    const on = (cond: (expr: string) => string): string => where(def, cond);
    switch (node.kind) {
      case 'exists':
        return on((e) => (def.type === 'text' ? `${e} IS NOT NULL AND ${e} <> ''` : `${e} IS NOT NULL`));
      case 'term':
      case 'phrase': {
        if (def.type === 'text') {
          const tokens = tokenize(node.value);
          return tokens.length ? this.dialect.textMatch(def.name, 'phrase', tokens, params) : '1=0';
        }
        const v = storedValue(def, node.value);
        return on((e) => {
          params.push(v);
          return `${e} = ?`;
        });
      }
      case 'wildcard': {
        if (def.type === 'text') {
          const m = /^([^*?\u0001\u0002]+)\*$/.exec(node.pattern);
          const tokens = m ? tokenize(m[1]!) : [];
          if (m && tokens.length) return this.dialect.textMatch(def.name, 'prefix', tokens, params);
          return on((e) => this.dialect.wildcard(e, `*${node.pattern.toLowerCase()}*`, params, true));
        }
        if (def.type !== 'string') throw new InvalidQueryError(`wildcards are only supported on string and text fields (field ${def.name})`);
        return on((e) => this.dialect.wildcard(e, node.pattern, params, false));
      }
      case 'range': {
        const lower = node.lower === undefined ? undefined : storedValue(def, node.lower);
        const upper = node.upper === undefined ? undefined : storedValue(def, node.upper);
        return on((e) => {
          const parts = [`${e} IS NOT NULL`];
          if (lower !== undefined) {
            params.push(lower);
            parts.push(`${e} ${node.includeLower ? '>=' : '>'} ?`);
          }
          if (upper !== undefined) {
            params.push(upper);
            parts.push(`${e} ${node.includeUpper ? '<=' : '<'} ?`);
          }
          return parts.join(' AND ');
        });
      }
    }
  }

  /**
   * WHERE clause (without the keyword) for the whole request; `params` must already hold
   * `scope.cteParams` (the statement starts with `scope.cte`).
   */
  where(req: SearchRequest, params: unknown[], scope: AccessScope): string {
    const parts = req.queries.map((n) => `(${this.compile(n, params, scope)})`);
    // Unary plus: never drive a plan from this barely selective column (SQLite would).
    if (req.hideArchived) parts.push(`+d.${q('archived')} = 0`);
    // Public objects (most of a catalogue) pass on a column of their own, without a lookup.
    if (req.readableBy) parts.push(scope.readable('d'));
    return parts.length ? joinBalanced(parts, 'AND') : '1=1';
  }

  /** A condition on an `mv` row `alias` of any multi-valued field: own values, or a link `scope` may see. */
  visibleValue(alias: string, scope: AccessScope): string {
    return `(${alias}.field NOT IN (${LINK_FIELDS.map((f) => `'${f}'`).join(', ')}) OR ${scope.linkVisible(alias)})`;
  }

  orderBy(req: SearchRequest): string {
    const parts = req.sort.map((s) => {
      const def = field(s.field);
      if (!def.sortable) throw new InvalidQueryError(`field ${s.field} is not sortable`);
      return `d.${q(def.name)} ${s.direction === 'desc' ? 'DESC' : 'ASC'} NULLS LAST`;
    });
    if (!req.sort.some((s) => s.field === 'id')) parts.push('d.id ASC');
    return parts.join(', ');
  }
}

/** SQL type of a single-valued field's column. */
export function columnType(def: FieldDef, dialect: 'sqlite' | 'postgres'): string {
  if (def.type === 'long' || def.type === 'double') return dialect === 'sqlite' ? 'REAL' : 'double precision';
  if (def.type === 'boolean') return 'INTEGER';
  return 'TEXT';
}

/** Single-valued columns of `docs` other than id, in a fixed order. */
export function docColumns(textInDocs: boolean): FieldDef[] {
  return SINGLE_FIELDS.filter((d) => d.name !== 'id' && (textInDocs || d.type !== 'text'));
}

/** A document's single-valued column values, in `columns` order. */
export function columnValues(doc: IndexDoc, columns: readonly FieldDef[]): unknown[] {
  return columns.map((d) => {
    const v = doc[d.name];
    const one = Array.isArray(v) ? v[0] : v;
    if (one === undefined || one === null) return d.name === 'archived' ? 0 : null;
    if (d.type === 'boolean') return one === true || one === 'true' ? 1 : 0;
    if (d.type === 'long' || d.type === 'double') return typeof one === 'number' ? one : Number(one);
    return String(one);
  });
}

/** A document's multi-valued rows: [field, value, ord]. */
/**
 * Distinct values one document indexes per descriptive field (keywords, names...), a budget
 * far above real records: an upload of 120,000 keywords would otherwise be 120,000 rows
 * written in one synchronous transaction. The fields access decisions read (readers,
 * permissions) are never cut.
 */
export const MAX_VALUES_PER_FIELD = 10_000;
const UNBOUNDED_FIELDS = new Set([READERS_FIELD, 'readPermission', 'writePermission', 'changePermission']);

export function multiRows(doc: IndexDoc): Array<[string, string, number]> {
  const rows: Array<[string, string, number]> = [];
  for (const name of [...MULTI_FIELDS.map((d) => d.name), READERS_FIELD]) {
    const v = doc[name];
    if (v === undefined) continue;
    const list = Array.isArray(v) ? v : [v];
    const limit = UNBOUNDED_FIELDS.has(name) ? Infinity : MAX_VALUES_PER_FIELD;
    const seen = new Set<string>();
    for (const x of list) {
      if (seen.size >= limit) break;
      const s = String(x);
      if (seen.has(s)) continue;
      seen.add(s);
      rows.push([name, s, rows.length]);
    }
  }
  return rows;
}

/** A docs row (plus its multi-values) back to a document restricted to `fields`. */
export function rowToDoc(row: Record<string, unknown>, multi: Array<{ field: string; value: string }>, fields: readonly string[]): IndexDoc {
  const doc: IndexDoc = { id: String(row.id) };
  for (const name of fields) {
    const def = lookupField(name);
    if (!def || !def.returnable || name === 'id') continue;
    if (def.multivalued) {
      const values = multi.filter((m) => m.field === name).map((m) => m.value);
      if (values.length) doc[name] = values;
      continue;
    }
    const v = row[name];
    if (v === null || v === undefined) continue;
    let out: FieldValue;
    if (def.type === 'boolean') out = v === 1 || v === true || v === '1';
    else if (def.type === 'long') out = Math.trunc(Number(v));
    else if (def.type === 'double') out = Number(v);
    else out = String(v);
    doc[name] = out;
  }
  return doc;
}

/** A facet value as Solr prints it. */
export function facetValue(def: FieldDef, v: unknown): string {
  if (def.type === 'boolean') return v === 1 || v === true || v === '1' ? 'true' : 'false';
  if (def.type === 'long') return String(Math.trunc(Number(v)));
  return String(v);
}

/** `*`, `?` pattern to a LIKE pattern with `\` as the escape character. */
export function likePattern(pattern: string): string {
  let out = '';
  for (const ch of pattern) {
    if (ch === '*') out += '%';
    else if (ch === '?') out += '_';
    else if (ch === '\u0001') out += '*';
    else if (ch === '\u0002') out += '?';
    else if (ch === '%' || ch === '_' || ch === '\\') out += '\\' + ch;
    else out += ch;
  }
  return out;
}

/** `*`, `?` pattern to an SQLite GLOB pattern (case-sensitive). */
export function globPattern(pattern: string): string {
  let out = '';
  for (const ch of pattern) {
    if (ch === '*' || ch === '?') out += ch;
    else if (ch === '\u0001') out += '[*]';
    else if (ch === '\u0002') out += '[?]';
    else if (ch === '[') out += '[[]';
    else out += ch;
  }
  return out;
}
