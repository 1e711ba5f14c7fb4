import { AdapterError } from '@memberkit/types';

/** WHERE conditions (joined with AND) and their positional parameters. */
export interface SqlFilter {
  conditions: string[];
  params: unknown[];
}

/** The SQL placeholder of the readableBy condition, replaced per statement by readableByForm. */
export const READABLE_BY = '<<readableBy>>';

/**
 * The readableBy condition: the object named by `pidColumn` has an access row for one of the
 * subjects bound as a JSON array parameter (one statement shape for any number of subjects;
 * an empty array matches nothing). Two equivalent forms with different plans:
 * - 'exists' probes the access table per row while walking the listing index in order:
 *   best for shallow pages (stops after start + count matches);
 * - 'in' collects the readable PIDs once (access_subject index) and looks each up: best for
 *   totals and deep offsets (measured on 1M objects: count 0.14 s vs 0.69 s).
 */
export function readableByClause(pidColumn: string, form: 'exists' | 'in'): string {
  const subjects = 'SELECT value FROM json_each(?)';
  return form === 'exists'
    ? `EXISTS (SELECT 1 FROM access a WHERE a.pid = ${pidColumn} AND a.subject IN (${subjects}))`
    : `${pidColumn} IN (SELECT a.pid FROM access a WHERE a.subject IN (${subjects}))`;
}

/** Pages starting below this offset use the 'exists' form of readableBy, deeper ones 'in'. */
export const SHALLOW_OFFSET = 10_000;

/** `where` with the readableBy placeholder (if any) expanded for `pidColumn` in `form`. */
export function expandWhere(where: string, pidColumn: string, form: 'exists' | 'in'): string {
  return where.replace(READABLE_BY, () => readableByClause(pidColumn, form));
}

/** start and count MUST be non-negative integers ('invalid' otherwise). */
export function checkSlice(start: number, count: number): void {
  if (!Number.isSafeInteger(start) || start < 0) throw new AdapterError('invalid', `start must be a non-negative integer, got ${start}`);
  if (!Number.isSafeInteger(count) || count < 0) throw new AdapterError('invalid', `count must be a non-negative integer, got ${count}`);
}

/**
 * The smallest string greater than every string that starts with `prefix`, in SQLite's
 * BINARY collation (UTF-8 bytes, which is Unicode code point order), or undefined when there
 * is none (the prefix is all U+10FFFF). So `x >= prefix AND x < upper` is "x starts with
 * prefix" and runs as a range on an index, with no LIKE escaping. Lone surrogates are
 * treated as U+FFFD, which is what they become when bound.
 */
export function prefixUpperBound(prefix: string): string | undefined {
  const codePoints = Array.from(prefix, (c) => {
    const cp = c.codePointAt(0) as number;
    return cp >= 0xd800 && cp <= 0xdfff ? 0xfffd : cp;
  });
  while (codePoints.length > 0) {
    const last = codePoints.pop() as number;
    if (last < 0x10ffff) {
      codePoints.push(last === 0xd7ff ? 0xe000 : last + 1);
      return String.fromCodePoint(...codePoints);
    }
  }
  return undefined;
}

/** `prefix` with lone surrogates replaced by U+FFFD, as SQLite will see it. */
export function wellFormed(value: string): string {
  return value.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
}
