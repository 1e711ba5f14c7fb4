// pagesAhead: the wrap scan's listing read ahead of the examination in pages.
import { describe, expect, it } from 'vitest';
import { pagesAhead } from '../../src/wrap/pages-ahead.js';

/** A source of `n` numbers that records how far it was read and whether it was ended. */
function counted(n: number, failAt?: number) {
  const seen = { read: 0, ended: false };
  async function* source(): AsyncGenerator<number> {
    try {
      for (let i = 0; i < n; i++) {
        await new Promise((r) => setImmediate(r));
        if (i === failAt) throw new Error(`failed at ${i}`);
        seen.read = i + 1;
        yield i;
      }
    } finally {
      seen.ended = true;
    }
  }
  return { seen, source: source() };
}

describe('pagesAhead', () => {
  it('gives every item once, in order, in pages of the size asked (the last one short)', async () => {
    const { source } = counted(1000);
    const pages: number[][] = [];
    for await (const page of pagesAhead(source, 256, 4)) pages.push(page);
    expect(pages.map((p) => p.length)).toEqual([256, 256, 256, 232]);
    expect(pages.flat()).toEqual(Array.from({ length: 1000 }, (_, i) => i));
  });

  it('reads ahead while the consumer works, but no more than the pages allowed', async () => {
    const { seen, source } = counted(10_000);
    const pages = pagesAhead(source, 10, 3);
    const first = await pages.next();
    expect(first.value).toHaveLength(10);
    // The consumer is busy: the source is read on, up to 3 pages beyond the one given.
    await new Promise((r) => setTimeout(r, 100));
    expect(seen.read).toBeGreaterThanOrEqual(30);
    expect(seen.read).toBeLessThanOrEqual(41);
    await pages.return(undefined);
    expect(seen.ended).toBe(true);
    expect(seen.read).toBeLessThanOrEqual(42);
  });

  it("gives the pages read before the source's error, then throws it; the partial page is not given", async () => {
    const { source } = counted(100, 25);
    const pages: number[][] = [];
    await expect((async () => {
      for await (const page of pagesAhead(source, 10, 2)) pages.push(page);
    })()).rejects.toThrow('failed at 25');
    expect(pages.flat()).toEqual(Array.from({ length: 20 }, (_, i) => i));
  });

  it('a consumer that stops early ends the source (its finally runs)', async () => {
    const { seen, source } = counted(1000);
    for await (const page of pagesAhead(source, 8, 2)) {
      expect(page[0]).toBe(0);
      break;
    }
    expect(seen.ended).toBe(true);
    expect(seen.read).toBeLessThan(1000);
  });
});
