/** compareCodePoints: the order of UTF-8 bytes (as database text columns sort), without Buffers. */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareCodePoints } from '../src/index.js';

const byBytes = (a: string, b: string): number => Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));

// Strings that share prefixes often and mix ASCII, the BMP above the surrogates, astral
// characters and lone surrogates: the cases where UTF-16 order and byte order part.
const unit = fc.constantFrom('a', 'b', '/', '\u00e9', '\ud7ff', '\ue000', '\uffff', '\u{10000}', '\u{1f9ea}', '\ud800', '\udc00', '\ufffd');
const text = fc.array(unit, { maxLength: 6 }).map((units) => units.join(''));

describe('compareCodePoints', () => {
  it('orders like the strings\' UTF-8 bytes, lone surrogates as U+FFFD', () => {
    fc.assert(fc.property(text, text, (a, b) => Math.sign(compareCodePoints(a, b)) === byBytes(a, b)), { numRuns: 5000 });
    fc.assert(fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => Math.sign(compareCodePoints(a, b)) === byBytes(a, b)), { numRuns: 2000 });
  });

  it('puts an astral character after every BMP character, as UTF-8 does (UTF-16 units would not)', () => {
    expect(compareCodePoints('\u{10000}', '\uffff')).toBeGreaterThan(0);
    expect('\u{10000}' < '\uffff').toBe(true);
    expect(compareCodePoints('d0001/f1', 'd0001/f1')).toBe(0);
    expect(compareCodePoints('d0001/f1', 'd0001/f10')).toBeLessThan(0);
  });
});
