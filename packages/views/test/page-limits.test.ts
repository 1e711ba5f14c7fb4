import { describe, expect, it } from 'vitest';
import { eventLoopPacer } from '@memberkit/core';
import { PAGE_METADATA_LIMITS, safeMetadata } from '../src/landing.js';

describe('what one uploaded document can put on a page is bounded', () => {
  it('keeps the first entries of every list and clips long texts', () => {
    const many = (n: number, f: (i: number) => string) => Array.from({ length: n }, (_, i) => f(i));
    const md = safeMetadata({
      title: 't'.repeat(50_000),
      abstract: `${'a'.repeat(PAGE_METADATA_LIMITS.textChars - 1)}😀tail`,
      creators: many(5_000, (i) => i).map((i) => ({ name: `P${i}` })) as never,
      keywords: many(120_000, (i) => `k${i}`),
      temporal: many(1_000, () => ({ begin: '2020' })) as never,
      spatial: many(1_000, () => ({ west: 0, east: 1, south: 0, north: 1 })) as never,
      alternateIdentifiers: many(1_000, (i) => `id${i}`),
    } as never);
    expect(md.keywords).toEqual(many(PAGE_METADATA_LIMITS.keywords, (i) => `k${i}`));
    expect(md.creators).toHaveLength(PAGE_METADATA_LIMITS.creators);
    expect(md.temporal).toHaveLength(PAGE_METADATA_LIMITS.temporal);
    expect(md.spatial).toHaveLength(PAGE_METADATA_LIMITS.spatial);
    expect(md.alternateIdentifiers).toHaveLength(PAGE_METADATA_LIMITS.alternateIdentifiers);
    expect(md.title).toHaveLength(PAGE_METADATA_LIMITS.textChars + 1);
    // Never cut inside a surrogate pair.
    expect(md.abstract!.endsWith('a…')).toBe(true);
  });

  it('a loop of synchronously settled awaits lets timers run when paced', async () => {
    let ticks = 0;
    const timer = setInterval(() => ticks++, 1);
    const pace = eventLoopPacer(5);
    const until = performance.now() + 150;
    while (performance.now() < until) {
      await pace();
      await Promise.resolve();
    }
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(5);
  });
});
