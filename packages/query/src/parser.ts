/**
 * A parser for the subset of the Solr (Lucene standard) query syntax DataONE clients send,
 * to an AST the search indexes compile to their own query language.
 *
 * Supported: `field:value`, `field:"a phrase"`, bare terms on the default field, wildcards
 * (`*`, `?`), `field:*` (field present), `*:*` (everything), ranges `[a TO b]`, `{a TO b}` and
 * mixed `[a TO b}` with `*` open ends, `AND`/`&&`, `OR`/`||`, `NOT`/`!`, `+`/`-` prefixes,
 * parentheses and field groups `field:(a OR b)`, `\` escapes. Boosts (`^2`) and fuzzy or
 * proximity suffixes (`~`, `~2`) are accepted and ignored. Boolean semantics follow
 * Lucene's classic parser (see {@link addClause}).
 *
 * Leniency: after `field:`, an unescaped `:` is part of the value (`id:doi:10.5063/X` works
 * as clients expect), and `-` inside a term is a plain character.
 */

import { DEFAULT_QUERY_LIMITS, QueryLimitError, type QueryLimits } from './limits.js';

export type Occur = 'must' | 'should' | 'mustNot';

export type QueryNode =
  | { kind: 'all' }
  | { kind: 'term'; field: string; value: string }
  | { kind: 'phrase'; field: string; value: string }
  | { kind: 'wildcard'; field: string; pattern: string }
  | { kind: 'exists'; field: string }
  | { kind: 'range'; field: string; lower?: string; upper?: string; includeLower: boolean; includeUpper: boolean }
  | { kind: 'bool'; clauses: Array<{ occur: Occur; node: QueryNode }> };

export class QuerySyntaxError extends Error {
  constructor(
    message: string,
    readonly position: number,
    readonly input: string,
  ) {
    super(`${message} at position ${position}`);
    this.name = 'QuerySyntaxError';
  }
}

type Tok =
  | { t: 'lparen' | 'rparen' | 'and' | 'or' | 'not' | 'plus' | 'minus' | 'colon' | 'eof'; pos: number }
  | { t: 'term'; raw: string; value: string; wild: boolean; pos: number }
  | { t: 'phrase'; value: string; pos: number }
  | { t: 'range'; lower?: string; upper?: string; incL: boolean; incU: boolean; pos: number };

const SPECIAL = new Set(['(', ')', '"', '[', ']', '{', '}', '^', '~', ':', '\\', ' ', '\t', '\n', '\r']);

const WHITESPACE = /\s*/y;

class Lexer {
  private i = 0;
  /** Set by the parser right after a `field:`: the next term may contain ':'. */
  valueMode = false;
  constructor(
    private readonly s: string,
    private readonly limits: Pick<QueryLimits, 'maxTermLength' | 'maxWildcards'>,
  ) {}

  /** Checked as a term grows, so an oversized one is refused before it is copied whole. */
  private checkLength(length: number): void {
    const max = this.limits.maxTermLength;
    if (length > max) throw new QueryLimitError('maxTermLength', max, `a term, phrase or range bound is longer than ${max} characters`);
  }

  private err(msg: string, pos = this.i): never {
    throw new QuerySyntaxError(msg, pos, this.s);
  }

  private skipWs(): void {
    // One sticky match (linear, no backtracking) instead of a regex call per character.
    WHITESPACE.lastIndex = this.i;
    WHITESPACE.test(this.s);
    this.i = WHITESPACE.lastIndex;
  }

  /** Skip ^boost and ~fuzzy suffixes. */
  private skipSuffix(): void {
    while (this.s[this.i] === '^' || this.s[this.i] === '~') {
      this.i++;
      while (this.i < this.s.length && /[0-9.]/.test(this.s[this.i]!)) this.i++;
    }
  }

  next(): Tok {
    this.skipWs();
    const s = this.s;
    const pos = this.i;
    if (this.i >= s.length) return { t: 'eof', pos };
    const c = s[this.i]!;
    const valueMode = this.valueMode;
    this.valueMode = false;
    if (c === '(') return this.i++, { t: 'lparen', pos };
    if (c === ')') {
      this.i++;
      this.skipSuffix();
      return { t: 'rparen', pos };
    }
    if (c === ':') return this.i++, { t: 'colon', pos };
    const signedValue = valueMode && (c === '-' || c === '+') && this.i + 1 < s.length && !SPECIAL.has(s[this.i + 1]!);
    if (c === '+' && !signedValue) return this.i++, { t: 'plus', pos };
    if (c === '-' && !signedValue) return this.i++, { t: 'minus', pos };
    if (c === '!') return this.i++, { t: 'not', pos };
    if (c === '&' && s[this.i + 1] === '&') return (this.i += 2), { t: 'and', pos };
    if (c === '|' && s[this.i + 1] === '|') return (this.i += 2), { t: 'or', pos };
    if (c === '"') {
      this.i++;
      let v = '';
      while (this.i < s.length && s[this.i] !== '"') {
        if (s[this.i] === '\\' && this.i + 1 < s.length) this.i++;
        v += s[this.i++];
        this.checkLength(v.length);
      }
      if (this.i >= s.length) this.err('unterminated phrase (missing closing ")', pos);
      this.i++;
      this.skipSuffix();
      return { t: 'phrase', value: v, pos };
    }
    if (c === '[' || c === '{') return this.range(pos);
    if (c === ']' || c === '}' || c === '^' || c === '~') this.err(`unexpected '${c}'`);
    // A term: up to whitespace or a special character; '\' escapes.
    let raw = '';
    let value = '';
    let wild = false;
    let wildcards = 0;
    if (signedValue) {
      raw = value = c;
      this.i++;
    }
    while (this.i < s.length) {
      const ch = s[this.i]!;
      if (ch === '\\') {
        if (this.i + 1 >= s.length) this.err('dangling escape character \\');
        raw += ch + s[this.i + 1];
        value += s[this.i + 1];
        this.i += 2;
        this.checkLength(value.length);
        continue;
      }
      if (ch === ':' && valueMode) {
        raw += ch;
        value += ch;
        this.i++;
        this.checkLength(value.length);
        continue;
      }
      if (SPECIAL.has(ch)) break;
      if (ch === '*' || ch === '?') {
        wild = true;
        if (++wildcards > this.limits.maxWildcards) {
          throw new QueryLimitError('maxWildcards', this.limits.maxWildcards, `a term has more than ${this.limits.maxWildcards} wildcards (* or ?)`);
        }
      }
      raw += ch;
      value += ch;
      this.i++;
      this.checkLength(value.length);
    }
    if (raw === '') this.err(`unexpected '${c}'`);
    this.skipSuffix();
    if (!wild) {
      if (raw === 'AND') return { t: 'and', pos };
      if (raw === 'OR') return { t: 'or', pos };
      if (raw === 'NOT') return { t: 'not', pos };
    }
    return { t: 'term', raw, value, wild, pos };
  }

  private range(pos: number): Tok {
    const s = this.s;
    const incL = s[this.i] === '[';
    this.i++;
    const word = (): string => {
      this.skipWs();
      if (s[this.i] === '"') {
        this.i++;
        let v = '';
        while (this.i < s.length && s[this.i] !== '"') {
          if (s[this.i] === '\\' && this.i + 1 < s.length) this.i++;
          v += s[this.i++];
          this.checkLength(v.length);
        }
        if (this.i >= s.length) this.err('unterminated phrase in range', pos);
        this.i++;
        return v;
      }
      let v = '';
      while (this.i < s.length && !/[\s\]}]/.test(s[this.i]!)) {
        if (s[this.i] === '\\' && this.i + 1 < s.length) this.i++;
        v += s[this.i++];
        this.checkLength(v.length);
      }
      if (v === '') this.err('expected a range bound', this.i);
      return v;
    };
    const lower = word();
    this.skipWs();
    if (s.slice(this.i, this.i + 2) !== 'TO') this.err("expected 'TO' in range", this.i);
    this.i += 2;
    const upper = word();
    this.skipWs();
    const close = s[this.i];
    if (close !== ']' && close !== '}') this.err("expected ']' or '}' to close the range", this.i);
    this.i++;
    this.skipSuffix();
    return {
      t: 'range',
      ...(lower === '*' ? {} : { lower }),
      ...(upper === '*' ? {} : { upper }),
      incL,
      incU: close === ']',
      pos,
    };
  }
}

type Conj = 'none' | 'and' | 'or';
type Mod = 'none' | 'req' | 'not';

export interface ParseOptions {
  /** Default field for bare terms (Solr's df). */
  defaultField?: string;
  /** Default operator between clauses (Solr's q.op). */
  defaultOperator?: 'OR' | 'AND';
  /** Bounds on depth, term length and wildcards (default: DEFAULT_QUERY_LIMITS). */
  limits?: Partial<Pick<QueryLimits, 'maxDepth' | 'maxClauses' | 'maxTermLength' | 'maxWildcards'>>;
  /**
   * Clauses still allowed, shared by the `q` and every `fq` of one request (decremented as
   * clauses are parsed); default: a budget of its own of `limits.maxClauses`.
   */
  clauseBudget?: { remaining: number };
}

class Parser {
  private tok: Tok;
  private readonly lx: Lexer;
  private readonly op: 'OR' | 'AND';
  private readonly maxDepth: number;
  private readonly maxClauses: number;
  private readonly budget: { remaining: number };
  /** Open parentheses and field groups around the current position. */
  private depth = 0;
  constructor(
    private readonly s: string,
    opts: ParseOptions,
  ) {
    const limits = { ...DEFAULT_QUERY_LIMITS, ...opts.limits };
    this.maxDepth = limits.maxDepth;
    this.maxClauses = limits.maxClauses;
    this.budget = opts.clauseBudget ?? { remaining: limits.maxClauses };
    this.lx = new Lexer(s, limits);
    this.tok = this.lx.next();
    this.op = opts.defaultOperator ?? 'OR';
  }

  /** A group opens: recursion stays bounded by maxDepth, whatever the input. */
  private enter(): void {
    if (++this.depth > this.maxDepth) throw new QueryLimitError('maxDepth', this.maxDepth, `parentheses are nested more than ${this.maxDepth} deep`);
  }

  private countClause(): void {
    if (--this.budget.remaining < 0) throw new QueryLimitError('maxClauses', this.maxClauses, `the query has more than ${this.maxClauses} clauses (q and every fq together)`);
  }

  /** The current token (a method, so that narrowing does not survive advance()). */
  private peek(): Tok {
    return this.tok;
  }

  private advance(): Tok {
    const t = this.tok;
    this.tok = this.lx.next();
    return t;
  }

  private err(msg: string, pos = this.tok.pos): never {
    throw new QuerySyntaxError(msg, pos, this.s);
  }

  parseTop(field: string): QueryNode {
    const node = this.query(field);
    if (this.tok.t !== 'eof') this.err(this.tok.t === 'rparen' ? "unbalanced ')'" : 'unexpected input');
    return node;
  }

  /** Query ::= ( Conjunction? Modifiers? Clause )* */
  private query(field: string): QueryNode {
    const clauses: Array<{ occur: Occur; node: QueryNode }> = [];
    let conj: Conj = 'none';
    for (;;) {
      const t = this.tok;
      if (t.t === 'eof' || t.t === 'rparen') break;
      if (t.t === 'and' || t.t === 'or') {
        if (clauses.length === 0) this.err(`'${t.t.toUpperCase()}' needs a clause before it`);
        if (conj !== 'none') this.err(`'${t.t.toUpperCase()}' after another operator`);
        conj = t.t;
        this.advance();
        continue;
      }
      let mod: Mod = 'none';
      if (t.t === 'plus') {
        mod = 'req';
        this.advance();
      } else if (t.t === 'minus' || t.t === 'not') {
        mod = 'not';
        this.advance();
      }
      const node = this.clause(field);
      this.addClause(clauses, conj, mod, node);
      conj = 'none';
    }
    if (conj !== 'none') this.err('an operator needs a clause after it');
    if (clauses.length === 1 && clauses[0]!.occur !== 'mustNot') return clauses[0]!.node;
    if (clauses.length === 0) this.err('empty query');
    return { kind: 'bool', clauses };
  }

  /** Lucene's QueryParser.addClause rules for AND/OR/+/- mixing. */
  private addClause(clauses: Array<{ occur: Occur; node: QueryNode }>, conj: Conj, mod: Mod, node: QueryNode): void {
    const last = clauses[clauses.length - 1];
    if (last && conj === 'and' && last.occur !== 'mustNot') last.occur = 'must';
    if (last && this.op === 'AND' && conj === 'or' && last.occur !== 'mustNot') last.occur = 'should';
    let occur: Occur;
    if (this.op === 'OR') {
      occur = mod === 'not' ? 'mustNot' : mod === 'req' || conj === 'and' ? 'must' : 'should';
    } else {
      occur = mod === 'not' ? 'mustNot' : conj !== 'or' ? 'must' : 'should';
    }
    clauses.push({ occur, node });
  }

  private clause(field: string): QueryNode {
    const t = this.tok;
    if (t.t === 'lparen') {
      this.enter();
      this.advance();
      const inner = this.query(field);
      if (this.peek().t !== 'rparen') this.err("missing ')'", t.pos);
      this.advance();
      this.depth--;
      return inner;
    }
    if (t.t === 'term') {
      // field:... ?
      this.advance();
      if (this.peek().t === 'colon') {
        if (t.wild && t.value !== '*') this.err('a field name cannot contain wildcards', t.pos);
        const name = t.value;
        this.lx.valueMode = true;
        this.advance();
        const v = this.peek();
        if (name === '*') {
          if (v.t === 'term' && v.value === '*') {
            this.advance();
            this.countClause();
            return { kind: 'all' };
          }
          this.err("'*' as a field name is only valid in *:*", t.pos);
        }
        if (v.t === 'lparen') {
          this.enter();
          this.advance();
          const inner = this.query(name);
          if (this.peek().t !== 'rparen') this.err("missing ')'", v.pos);
          this.advance();
          this.depth--;
          return inner;
        }
        if (v.t === 'term' || v.t === 'phrase' || v.t === 'range') {
          this.advance();
          return this.leaf(name, v);
        }
        this.err(`expected a value after '${name}:'`, v.pos);
      }
      // A bare term: the lexer's valueMode did not apply (the term came first), fine.
      return this.leaf(field, t);
    }
    if (t.t === 'phrase' || t.t === 'range') {
      this.advance();
      return this.leaf(field, t);
    }
    if (t.t === 'eof') this.err('a clause is missing at the end of the query');
    this.err(`unexpected '${this.s.slice(t.pos, t.pos + 1)}'`);
  }

  private leaf(field: string, t: Tok): QueryNode {
    this.countClause();
    if (t.t === 'phrase') return { kind: 'phrase', field, value: t.value };
    if (t.t === 'range') {
      return {
        kind: 'range',
        field,
        ...(t.lower !== undefined ? { lower: t.lower } : {}),
        ...(t.upper !== undefined ? { upper: t.upper } : {}),
        includeLower: t.incL,
        includeUpper: t.incU,
      };
    }
    if (t.t !== 'term') this.err('expected a term', t.pos);
    if (t.value === '*' && t.raw === '*') return field === '*' ? { kind: 'all' } : { kind: 'exists', field };
    if (t.wild) return { kind: 'wildcard', field, pattern: wildcardPattern(t.raw) };
    return { kind: 'term', field, value: t.value };
  }
}

/**
 * A wildcard term as a pattern in which `*` and `?` are wildcards and every other
 * character is literal: escaped `\*`/`\?` become `\u0001`/`\u0002` placeholders.
 */
function wildcardPattern(raw: string): string {
  let out = '';
  for (let i = 0; i < raw.length; i++) {
    const ch = raw[i]!;
    if (ch === '\\' && i + 1 < raw.length) {
      const n = raw[++i]!;
      out += n === '*' ? '\u0001' : n === '?' ? '\u0002' : n;
    } else out += ch;
  }
  return out;
}

/** Parse a `q` or `fq` value. Throws QuerySyntaxError with the position of the problem. */
export function parseQuery(input: string, options: ParseOptions = {}): QueryNode {
  if (input.trim() === '') return { kind: 'all' };
  return new Parser(input, options).parseTop(options.defaultField ?? 'text');
}

/** Every field a query names (for "archived hidden unless the query mentions archived"). */
export function fieldsOf(node: QueryNode, out = new Set<string>()): Set<string> {
  if (node.kind === 'bool') for (const c of node.clauses) fieldsOf(c.node, out);
  else if (node.kind !== 'all') out.add(node.field);
  return out;
}

const UNIT_MS: Record<string, number> = {
  MILLI: 1, MILLIS: 1, MILLISECOND: 1, MILLISECONDS: 1,
  SECOND: 1000, SECONDS: 1000,
  MINUTE: 60_000, MINUTES: 60_000,
  HOUR: 3_600_000, HOURS: 3_600_000,
  DAY: 86_400_000, DAYS: 86_400_000, DATE: 86_400_000,
};

function addUnit(d: Date, n: number, unit: string): Date {
  const u = unit.toUpperCase();
  const r = new Date(d.getTime());
  if (u === 'YEAR' || u === 'YEARS') r.setUTCFullYear(r.getUTCFullYear() + n);
  else if (u === 'MONTH' || u === 'MONTHS') r.setUTCMonth(r.getUTCMonth() + n);
  else if (u === 'WEEK' || u === 'WEEKS') r.setTime(r.getTime() + n * 7 * 86_400_000);
  else if (UNIT_MS[u] !== undefined) r.setTime(r.getTime() + n * UNIT_MS[u]!);
  else throw new Error(`unknown date unit ${unit}`);
  return r;
}

function roundDown(d: Date, unit: string): Date {
  const u = unit.toUpperCase().replace(/S$/, '');
  const r = new Date(d.getTime());
  switch (u) {
    case 'YEAR': r.setUTCMonth(0, 1); r.setUTCHours(0, 0, 0, 0); break;
    case 'MONTH': r.setUTCDate(1); r.setUTCHours(0, 0, 0, 0); break;
    case 'DAY': case 'DATE': r.setUTCHours(0, 0, 0, 0); break;
    case 'HOUR': r.setUTCMinutes(0, 0, 0); break;
    case 'MINUTE': r.setUTCSeconds(0, 0); break;
    case 'SECOND': r.setUTCMilliseconds(0); break;
    default: throw new Error(`unknown date unit ${unit}`);
  }
  return r;
}

/**
 * A Solr date (`2020-01-31T10:00:00Z`, with or without fraction or zone; a bare date or
 * year is accepted too) or date math expression (`NOW`, `NOW-1DAY`, `NOW/DAY+1MONTH`,
 * `2020-01-01T00:00:00Z+1YEAR`) as a Date; undefined when unreadable.
 */
export function parseSolrDate(input: string, now: Date = new Date()): Date | undefined {
  const s = input.trim();
  const m = /^(NOW|\d{4}(?:-\d{2}(?:-\d{2}(?:T[0-9:.]+(?:Z|[+-]\d{2}:?\d{2})?)?)?)?)((?:[+\-/]\d*[A-Za-z]+)*)$/.exec(s);
  if (!m) return undefined;
  let base: Date;
  if (m[1] === 'NOW') base = new Date(now.getTime());
  else {
    let iso = m[1]!;
    if (/^\d{4}$/.test(iso)) iso += '-01-01';
    else if (/^\d{4}-\d{2}$/.test(iso)) iso += '-01';
    if (/^\d{4}-\d{2}-\d{2}$/.test(iso)) iso += 'T00:00:00Z';
    else if (!/(Z|[+-]\d{2}:?\d{2})$/.test(iso)) iso += 'Z';
    base = new Date(iso);
    if (Number.isNaN(base.getTime())) return undefined;
  }
  const ops = m[2] ?? '';
  const re = /([+\-/])(\d*)([A-Za-z]+)/g;
  let op: RegExpExecArray | null;
  try {
    while ((op = re.exec(ops))) {
      const [, sign, num, unit] = op;
      if (sign === '/') {
        if (num) return undefined;
        base = roundDown(base, unit!);
      } else {
        if (!num) return undefined;
        base = addUnit(base, (sign === '-' ? -1 : 1) * Number(num), unit!);
      }
    }
  } catch {
    return undefined;
  }
  return base;
}
