import { nextRevision } from '../revision.js';
import { AdapterError } from './adapter-error.js';
import type { StoredSystemMetadata } from './catalogue-adapter.js';

/**
 * Rules every catalogue honours the same way (adapters/sql uses them; so may any
 * third-party catalogue).
 */

/** Epoch milliseconds of a Date; AdapterError 'invalid' when it is not a valid Date. */
export function epochMs(value: unknown, field: string): number {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new AdapterError('invalid', `${field} must be a valid Date`);
  }
  return value.getTime();
}

/** start and count MUST be non-negative integers (AdapterError 'invalid' otherwise). */
export function checkSlice(start: number, count: number): void {
  if (!Number.isSafeInteger(start) || start < 0) throw new AdapterError('invalid', `start must be a non-negative integer, got ${start}`);
  if (!Number.isSafeInteger(count) || count < 0) throw new AdapterError('invalid', `count must be a non-negative integer, got ${count}`);
}

/** `value` with lone surrogates replaced by U+FFFD, as a database will store it. */
export function wellFormed(value: string): string {
  return value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}

/**
 * Code point order of two strings: the order of their UTF-8 bytes, as every dialect's text
 * columns sort (lone surrogates count as U+FFFD, as a database stores them). The first
 * differing UTF-16 unit decides unless a surrogate is involved, where the bytes are compared:
 * no Buffer per comparison (a batch's sort is thousands of them).
 */
export function compareCodePoints(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  const x = i < a.length ? a.charCodeAt(i) : -1;
  const y = i < b.length ? b.charCodeAt(i) : -1;
  if (surrogate(x) || surrogate(y) || (i > 0 && surrogate(a.charCodeAt(i - 1)))) return Buffer.compare(Buffer.from(a), Buffer.from(b));
  return x < y ? -1 : 1;
}

function surrogate(unit: number): boolean {
  return unit >= 0xd800 && unit <= 0xdfff;
}

/**
 * The smallest string greater than every string starting with `prefix` in code point order
 * (the order of UTF-8 bytes), or undefined when there is none. `x >= prefix` and `x < upper`
 * is then "x starts with prefix" as a range of an ordered index (EventQuery.idPrefix).
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const codePoints = Array.from(wellFormed(prefix), (c) => c.codePointAt(0) as number);
  while (codePoints.length > 0) {
    const last = codePoints.pop() as number;
    if (last < 0x10ffff) {
      codePoints.push(last === 0xd7ff ? 0xe000 : last + 1);
      return String.fromCodePoint(...codePoints);
    }
  }
  return undefined;
}

/**
 * What a wrap rescan does to a file's existing record: only size, checksum and (when the
 * scanner set it) the format come from the file; every other field is the stored record's.
 * Same bytes and format: 'unchanged', stamped with the record's own dateSysMetadataModified.
 * Otherwise serialVersion + 1 and dateSysMetadataModified moved forward, never back (at least
 * `base`, after the record's own), so a Coordinating Node harvesting by date sees the change.
 */
export function rescannedRecord(
  existing: StoredSystemMetadata,
  file: { size: number; algorithm: string; checksum: string; reformat?: { formatId: string; mediaType: string } },
  base: number,
): { outcome: 'unchanged'; stamp: number } | { outcome: 'changed'; stamp: number; sysmeta: StoredSystemMetadata } {
  if (existing.size === file.size && existing.checksum.algorithm === file.algorithm && existing.checksum.value.toLowerCase() === file.checksum && !file.reformat) {
    return { outcome: 'unchanged', stamp: existing.dateSysMetadataModified.getTime() };
  }
  const sysmeta = nextRevision(existing, {
    size: file.size,
    checksum: { algorithm: file.algorithm, value: file.checksum },
    ...(file.reformat ? { formatId: file.reformat.formatId, mediaType: { name: file.reformat.mediaType, property: [] } } : {}),
  }, new Date(base));
  const stamp = sysmeta.dateSysMetadataModified.getTime();
  return { outcome: 'changed', stamp, sysmeta };
}
