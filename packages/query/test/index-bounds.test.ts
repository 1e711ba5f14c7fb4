import { describe, expect, it } from 'vitest';
import { MAX_VALUES_PER_FIELD, multiRows } from '../src/sql/compile.js';
import { READERS_FIELD } from '../src/schema.js';

describe('what one document writes into the search index is bounded', () => {
  it('descriptive fields keep their first distinct values; access fields are never cut', () => {
    const many = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}${i}`);
    const rows = multiRows({ id: 'x', keywords: many('k', 120_000), readPermission: many('CN=r', 3_000), [READERS_FIELD]: many('CN=r', 3_000) } as never);
    const of = (field: string) => rows.filter((r) => r[0] === field).map((r) => r[1]);
    expect(of("keywords")).toEqual(many("k", MAX_VALUES_PER_FIELD));
    expect(of('readPermission')).toHaveLength(3_000);
    expect(of(READERS_FIELD)).toHaveLength(3_000);
  });
});
