/**
 * The schema-driven encoder compiles one writer per type: names and paths of the spec are the only
 * text in its code, values are read at run time. These pin what the compiled code must keep.
 */
import { describe, expect, it } from 'vitest';
import { encodeDocument, encodeDocumentParts, type TypeSpec } from '../src/xml/schema.js';

const Item: TypeSpec = {
  name: 'Item',
  attrs: [{ name: 'kind', scalar: 'string' }],
  children: [
    { name: 'id', type: 'string', min: 1, max: 1 },
    { name: 'note', type: 'string', min: 0, max: 1, empty: true },
    { name: 'tag', type: 'string', min: 0, max: 'n' },
    { name: 'seen', type: 'datetime', min: 0, max: 1, v2: true },
  ],
};
const List: TypeSpec = {
  name: 'List',
  attrs: [{ name: 'count', scalar: 'int', required: true }],
  children: [{ name: 'item', type: Item, min: 1, max: 'n' }],
};
const encode = (value: object, version: 'v1' | 'v2' = 'v2'): string => encodeDocument(List, 'list', undefined, value, version);
const HEAD = '<?xml version="1.0" encoding="UTF-8"?>';

describe('compiled encoder', () => {
  it('writes values as text only: quotes, backslashes and code-like strings are escaped data', () => {
    const id = `"); throw new Error("x"); ("\\ \${1} */ \u2028 <&>'`;
    expect(encode({ count: 1, item: [{ id, kind: '"k"', tag: ['a&b', '', 'é😀'] }] })).toBe(
      `${HEAD}<list count="1"><item kind="&quot;k&quot;"><id>&quot;); throw new Error(&quot;x&quot;); (&quot;\\ \${1} */ \u2028 &lt;&amp;&gt;&apos;</id>` +
        '<tag>a&amp;b</tag><tag>é😀</tag></item></list>',
    );
  });

  it('spec names and keys that are no identifiers are read and written as they are', () => {
    const Odd: TypeSpec = {
      name: 'Odd "type" \\ */',
      attrs: [{ name: 'a-b', key: 'a"]; x = 1; //', scalar: 'string', required: true }],
      children: [{ name: 'x.y', key: "it's\nkey", type: 'int', min: 1, max: 1 }],
    };
    expect(encodeDocument(Odd, 'odd', undefined, { 'a"]; x = 1; //': 'v', "it's\nkey": 3 }, 'v2')).toBe(`${HEAD}<odd a-b="v"><x.y>3</x.y></odd>`);
  });

  it('keeps the checks and their messages', () => {
    expect(() => encode({ item: [{ id: 'a' }] })).toThrow(new TypeError('list/@count: required attribute missing'));
    expect(() => encode({ count: 0, item: [] })).toThrow(new TypeError('list/item: required element missing'));
    expect(() => encode({ count: 1, item: [{ id: '' }] })).toThrow(new TypeError('list/item/id: required element missing'));
    expect(() => encode({ count: 1, item: [{ id: 'a\u0001' }] })).toThrow(new TypeError('list/item/id: contains a character XML cannot carry'));
    expect(() => encode({ count: 1, item: [{ id: 'a\uD800b' }] })).toThrow(new TypeError('list/item/id: contains a character XML cannot carry'));
    expect(() => encode({ count: 1, item: [{ id: 5 }] })).toThrow(new TypeError('list/item/id: expected a string'));
    expect(() => encode({ count: 1.5, item: [{ id: 'a' }] })).toThrow(new TypeError('list/@count: expected an integer'));
    expect(() => encode({ count: 1, item: [{ id: 'a', seen: 'today' }] })).toThrow(new TypeError('list/item/seen: expected a Date'));
    // A falsy value where an array belongs is one item, which the checks refuse.
    expect(() => encode({ count: 1, item: [{ id: 'a', tag: 0 }] })).toThrow(new TypeError('list/item/tag: expected a string'));
    expect(() => encode({ count: 1, item: 0 })).toThrow(TypeError);
  });

  it('leaves out v2-only children for v1, empty optional strings, and keeps an empty element the schema allows', () => {
    const seen = new Date('2024-01-02T03:04:05.678Z');
    expect(encode({ count: 1, item: [{ id: 'a', note: '', seen }] }, 'v1')).toBe(`${HEAD}<list count="1"><item><id>a</id></item></list>`);
    expect(encode({ count: 1, item: [{ id: 'a', note: 'n', seen }] })).toBe(
      `${HEAD}<list count="1"><item><id>a</id><note>n</note><seen>2024-01-02T03:04:05.678Z</seen></item></list>`,
    );
    const Entry: TypeSpec = { name: 'Entry', children: [{ name: 'agent', type: 'string', min: 1, max: 1, empty: true }] };
    expect(encodeDocument(Entry, 'entry', undefined, { agent: '' }, 'v2')).toBe(`${HEAD}<entry><agent></agent></entry>`);
  });

  it('cuts a long document after the item that reached 32 K characters, and the parts join to it', () => {
    const item = Array.from({ length: 3000 }, (_, i) => ({ id: `item-${i}`.padEnd(40, '.') }));
    const parts = encodeDocumentParts(List, 'list', 'urn:x', { count: item.length, item }, 'v2');
    expect(parts.length).toBeGreaterThan(4);
    for (const part of parts.slice(0, -1)) {
      expect(part.length).toBeGreaterThanOrEqual(32 * 1024);
      expect(part.length).toBeLessThan(33 * 1024);
      expect(part.endsWith('</item>')).toBe(true);
    }
    expect(parts.join('')).toBe(encodeDocument(List, 'list', 'urn:x', { count: item.length, item }, 'v2'));
  });
});
