import { describe, expect, it } from 'vitest';
import { fieldsOf, parseQuery, parseSolrDate, QuerySyntaxError, type QueryNode } from '../src/parser.js';
import { parseSolrParams } from '../src/solr-engine.js';
import { QueryLimitError } from '../src/limits.js';
import { engineParams } from '../src/extension.js';

const term = (field: string, value: string): QueryNode => ({ kind: 'term', field, value });

describe('parseQuery', () => {
  it('parses field queries, bare terms and *:*', () => {
    expect(parseQuery('*:*')).toEqual({ kind: 'all' });
    expect(parseQuery('')).toEqual({ kind: 'all' });
    expect(parseQuery('formatId:eml')).toEqual(term('formatId', 'eml'));
    expect(parseQuery('soil')).toEqual(term('text', 'soil'));
    expect(parseQuery('soil', { defaultField: 'title' })).toEqual(term('title', 'soil'));
  });

  it('keeps colons in values after the field name, honours escapes', () => {
    expect(parseQuery('id:doi:10.5063/F1ABC')).toEqual(term('id', 'doi:10.5063/F1ABC'));
    expect(parseQuery('id:urn\\:uuid\\:1234-5678')).toEqual(term('id', 'urn:uuid:1234-5678'));
    expect(parseQuery('formatId:eml\\://ecoinformatics.org/eml-2.1.1')).toEqual(term('formatId', 'eml://ecoinformatics.org/eml-2.1.1'));
    expect(parseQuery('dateUploaded:2020-01-01T00:00:00Z')).toEqual(term('dateUploaded', '2020-01-01T00:00:00Z'));
  });

  it('parses phrases, wildcards and field presence', () => {
    expect(parseQuery('title:"soil moisture"')).toEqual({ kind: 'phrase', field: 'title', value: 'soil moisture' });
    expect(parseQuery('title:"a \\"quoted\\" word"')).toEqual({ kind: 'phrase', field: 'title', value: 'a "quoted" word' });
    expect(parseQuery('formatId:eml*')).toEqual({ kind: 'wildcard', field: 'formatId', pattern: 'eml*' });
    expect(parseQuery('id:ab?d')).toEqual({ kind: 'wildcard', field: 'id', pattern: 'ab?d' });
    expect(parseQuery('id:a\\*b*')).toEqual({ kind: 'wildcard', field: 'id', pattern: 'a\u0001b*' });
    expect(parseQuery('obsoletedBy:*')).toEqual({ kind: 'exists', field: 'obsoletedBy' });
    expect(parseQuery('-obsoletedBy:*')).toEqual({ kind: 'bool', clauses: [{ occur: 'mustNot', node: { kind: 'exists', field: 'obsoletedBy' } }] });
  });

  it('parses ranges with inclusive/exclusive and open ends', () => {
    expect(parseQuery('size:[100 TO 2000]')).toEqual({ kind: 'range', field: 'size', lower: '100', upper: '2000', includeLower: true, includeUpper: true });
    expect(parseQuery('size:{100 TO *]')).toEqual({ kind: 'range', field: 'size', lower: '100', includeLower: false, includeUpper: true });
    expect(parseQuery('dateUploaded:[* TO NOW-1DAY}')).toEqual({ kind: 'range', field: 'dateUploaded', upper: 'NOW-1DAY', includeLower: true, includeUpper: false });
    expect(parseQuery('beginDate:[2000-01-01T00:00:00Z TO 2010-12-31T23:59:59Z]')).toMatchObject({ lower: '2000-01-01T00:00:00Z', upper: '2010-12-31T23:59:59Z' });
    expect(parseQuery('southBoundCoord:[-90 TO -45.5]')).toMatchObject({ lower: '-90', upper: '-45.5' });
  });

  it('follows Lucene boolean rules for AND, OR, NOT, + and -', () => {
    expect(parseQuery('a AND b')).toEqual({ kind: 'bool', clauses: [{ occur: 'must', node: term('text', 'a') }, { occur: 'must', node: term('text', 'b') }] });
    expect(parseQuery('a OR b')).toEqual({ kind: 'bool', clauses: [{ occur: 'should', node: term('text', 'a') }, { occur: 'should', node: term('text', 'b') }] });
    expect(parseQuery('a b')).toEqual(parseQuery('a OR b'));
    expect(parseQuery('a && b')).toEqual(parseQuery('a AND b'));
    expect(parseQuery('a || b')).toEqual(parseQuery('a OR b'));
    expect(parseQuery('+a -b c')).toEqual({
      kind: 'bool',
      clauses: [
        { occur: 'must', node: term('text', 'a') },
        { occur: 'mustNot', node: term('text', 'b') },
        { occur: 'should', node: term('text', 'c') },
      ],
    });
    expect(parseQuery('a AND NOT b')).toEqual({ kind: 'bool', clauses: [{ occur: 'must', node: term('text', 'a') }, { occur: 'mustNot', node: term('text', 'b') }] });
    expect(parseQuery('a !b')).toEqual({ kind: 'bool', clauses: [{ occur: 'should', node: term('text', 'a') }, { occur: 'mustNot', node: term('text', 'b') }] });
    expect(parseQuery('a b', { defaultOperator: 'AND' })).toEqual(parseQuery('a AND b'));
  });

  it('parses groups and field groups', () => {
    expect(parseQuery('(a OR b) AND c')).toEqual({
      kind: 'bool',
      clauses: [
        { occur: 'must', node: { kind: 'bool', clauses: [{ occur: 'should', node: term('text', 'a') }, { occur: 'should', node: term('text', 'b') }] } },
        { occur: 'must', node: term('text', 'c') },
      ],
    });
    expect(parseQuery('keywords:(soil OR "snow depth")')).toEqual({
      kind: 'bool',
      clauses: [
        { occur: 'should', node: term('keywords', 'soil') },
        { occur: 'should', node: { kind: 'phrase', field: 'keywords', value: 'snow depth' } },
      ],
    });
  });

  it('ignores boosts and fuzzy suffixes', () => {
    expect(parseQuery('title:soil^2')).toEqual(term('title', 'soil'));
    expect(parseQuery('title:"soil water"~3')).toEqual({ kind: 'phrase', field: 'title', value: 'soil water' });
  });

  it('reports syntax errors with their position', () => {
    const cases: Array<[string, number]> = [
      ['title:(soil', 6],
      ['title:"soil', 6],
      ['a AND', 5],
      ['AND a', 0],
      ['a )', 2],
      ['size:[1 TO', 10],
      ['size:[1 2]', 8],
      ['title:', 6],
      ['a AND OR b', 6],
    ];
    for (const [q, pos] of cases) {
      let err: unknown;
      try {
        parseQuery(q);
      } catch (e) {
        err = e;
      }
      expect(err, q).toBeInstanceOf(QuerySyntaxError);
      expect((err as QuerySyntaxError).position, q).toBe(pos);
    }
  });

  it('lists the fields a query names', () => {
    expect([...fieldsOf(parseQuery('a AND (archived:true OR -formatId:x)'))].sort()).toEqual(['archived', 'formatId', 'text']);
  });
});

describe('parseSolrDate', () => {
  const now = new Date('2024-05-17T13:45:30.123Z');
  it('reads ISO datetimes, bare dates and date math', () => {
    expect(parseSolrDate('2020-01-31T10:00:00Z')?.toISOString()).toBe('2020-01-31T10:00:00.000Z');
    expect(parseSolrDate('2020-01-31T10:00:00.423+02:00')?.toISOString()).toBe('2020-01-31T08:00:00.423Z');
    expect(parseSolrDate('2020-01-31T10:00:00')?.toISOString()).toBe('2020-01-31T10:00:00.000Z');
    expect(parseSolrDate('2020-01-31')?.toISOString()).toBe('2020-01-31T00:00:00.000Z');
    expect(parseSolrDate('1998')?.toISOString()).toBe('1998-01-01T00:00:00.000Z');
    expect(parseSolrDate('NOW', now)?.toISOString()).toBe(now.toISOString());
    expect(parseSolrDate('NOW-1DAY', now)?.toISOString()).toBe('2024-05-16T13:45:30.123Z');
    expect(parseSolrDate('NOW/DAY', now)?.toISOString()).toBe('2024-05-17T00:00:00.000Z');
    expect(parseSolrDate('NOW/DAY+1MONTH', now)?.toISOString()).toBe('2024-06-17T00:00:00.000Z');
    expect(parseSolrDate('2020-01-01T00:00:00Z+1YEAR')?.toISOString()).toBe('2021-01-01T00:00:00.000Z');
    expect(parseSolrDate('yesterday')).toBeUndefined();
    expect(parseSolrDate('NOW-1FORTNIGHT')).toBeUndefined();
  });
});

describe('parseSolrParams and the URL remainder', () => {
  it('takes q, repeated fq, fl, rows, start, sort, facets and wt', () => {
    const p = parseSolrParams([
      ['q', 'title:soil'],
      ['fq', 'formatType:METADATA'],
      ['fq', '-obsoletedBy:*'],
      ['fl', 'id,title size'],
      ['rows', '5'],
      ['start', '10'],
      ['sort', 'dateUploaded desc,id asc'],
      ['facet', 'true'],
      ['facet.field', 'formatId'],
      ['wt', 'json'],
    ]);
    expect(p.request.queries).toHaveLength(3);
    expect(p.request.fields).toEqual(['id', 'title', 'size']);
    expect(p.request.rows).toBe(5);
    expect(p.request.start).toBe(10);
    expect(p.request.sort).toEqual([
      { field: 'dateUploaded', direction: 'desc' },
      { field: 'id', direction: 'asc' },
    ]);
    expect(p.request.facet).toEqual({ fields: ['formatId'], limit: 100, minCount: 0 });
    expect(p.request.hideArchived).toBe(true);
    expect(p.wt).toBe('json');
    expect(parseSolrParams([['fq', 'archived:*']]).request.hideArchived).toBe(false);
  });

  it('rejects unknown fields, bad rows and bad sorts', () => {
    expect(() => parseSolrParams([['fl', 'nosuchfield']])).toThrow(/undefined field/);
    expect(() => parseSolrParams([['rows', 'ten']])).toThrow(/rows/);
    expect(() => parseSolrParams([['sort', 'keywords asc']])).toThrow(/not sortable/);
    expect(() => parseSolrParams([['wt', 'csv']])).toThrow(/wt/);
  });

  it('reads the remainder of the URL in its usual shapes', () => {
    expect(engineParams('/?q=id:a&fl=id')).toEqual([['q', 'id:a'], ['fl', 'id']]);
    expect(engineParams('/select?q=title%3A%22soil+moisture%22')).toEqual([['q', 'title:"soil moisture"']]);
    expect(engineParams('?q=*:*')).toEqual([['q', '*:*']]);
    expect(engineParams('/q=*:*&rows=1')).toEqual([['q', '*:*'], ['rows', '1']]);
    expect(engineParams('/')).toEqual([]);
  });
});

describe('parse limits', () => {
  const limitOf = (fn: () => unknown): string => {
    try {
      fn();
    } catch (err) {
      if (err instanceof QueryLimitError) return `${err.limit}=${err.value}`;
      throw err;
    }
    return 'none';
  };

  it('refuses deep nesting, long terms, many wildcards and clauses, naming the limit', () => {
    expect(limitOf(() => parseQuery('('.repeat(100_000)))).toBe('maxDepth=32');
    expect(limitOf(() => parseQuery(`${'('.repeat(32)}a${')'.repeat(32)}`))).toBe('none');
    expect(limitOf(() => parseQuery(`id:(${'('.repeat(32)}a${')'.repeat(32)})`))).toBe('maxDepth=32');
    expect(limitOf(() => parseQuery('x'.repeat(1025)))).toBe('maxTermLength=1024');
    expect(limitOf(() => parseQuery(`"${'x'.repeat(5000)}`))).toBe('maxTermLength=1024');
    expect(limitOf(() => parseQuery('id:a*b*c*d*e*f*g*h*i*'))).toBe('maxWildcards=8');
    expect(limitOf(() => parseQuery(Array.from({ length: 1025 }, (_, i) => `t${i}`).join(' OR ')))).toBe('maxClauses=1024');
    // One budget shared by the q and fq of a request.
    const budget = { remaining: 1024 };
    parseQuery(Array.from({ length: 1000 }, (_, i) => `t${i}`).join(' '), { clauseBudget: budget });
    expect(limitOf(() => parseQuery(Array.from({ length: 25 }, (_, i) => `t${i}`).join(' '), { clauseBudget: budget }))).toBe('maxClauses=1024');
  });

  it('parses in time linear in the input', () => {
    // 1 MB of the shapes that used to cost most: whitespace, escapes, phrases, operators.
    const inputs = [' '.repeat(1 << 20) + 'a', 'a\\:'.repeat(300) + ' b', `"${'ab '.repeat(300)}" `.repeat(3), 'NOT a AND b OR c '.repeat(60)];
    for (const input of inputs) {
      const t0 = performance.now();
      parseQuery(input);
      expect(performance.now() - t0, input.slice(0, 20)).toBeLessThan(500);
    }
  });

  it('parseSolrParams: fq count, start and link clauses', () => {
    const fqs = Array.from({ length: 101 }, () => ['fq', 'a'] as [string, string]);
    expect(limitOf(() => parseSolrParams([['q', '*:*'], ...fqs]))).toBe('maxFilterQueries=100');
    expect(limitOf(() => parseSolrParams([['q', '*:*'], ['start', '10000001']]))).toBe('maxStart=10000000');
    expect(limitOf(() => parseSolrParams([['q', Array.from({ length: 65 }, (_, i) => `resourceMap:m${i}`).join(' ')]]))).toBe('maxLinkClauses=64');
    expect(limitOf(() => parseSolrParams([['q', '*:*'], ['fq', 'id:a'], ['start', '5']], { limits: { maxFilterQueries: 0 } }))).toBe('maxFilterQueries=0');
  });
});
