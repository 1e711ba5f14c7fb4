import { DecodeError } from './decode-error.js';

// xs:dateTime as DataONE peers send it: date 'T' time, optional fraction (any number of
// digits, microseconds are common), optional zone ('Z', '+hh:mm', '+hhmm', '+hh').
const DATETIME =
  /^(-?\d{4,})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2}):(\d{2})(?:[.,](\d+))?(Z|[+-]\d{2}(?::?\d{2})?)?$/;
const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;

/**
 * Parse an ISO 8601 datetime the way the spec reads it: precision is one millisecond
 * (extra digits are truncated), and a datetime without a zone is UTC.
 * A bare date (`2024-01-31`) is read as midnight UTC.
 * @throws DecodeError when the text is not a datetime.
 */
export function parseDateTime(text: string, field = 'dateTime'): Date {
  const s = text.trim();
  let m = DATETIME.exec(s);
  if (!m) {
    const d = DATE_ONLY.exec(s);
    if (!d) throw new DecodeError(`'${text}' is not an ISO 8601 datetime (expected e.g. 2024-01-31T10:00:00Z)`, field);
    m = [s, d[1]!, d[2]!, d[3]!, '00', '00', '00', undefined, 'Z'] as unknown as RegExpExecArray;
  }
  const [, y, mo, da, h, mi, se, frac, zone] = m;
  const ms = frac ? Number((frac + '00').slice(0, 3)) : 0;
  let t = Date.UTC(Number(y), Number(mo) - 1, Number(da), Number(h), Number(mi), Number(se), ms);
  if (Number(y) < 100 && Number(y) >= 0) {
    const d = new Date(t);
    d.setUTCFullYear(Number(y));
    t = d.getTime();
  }
  if (zone && zone !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const offsetMin = Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2, 4) || '0');
    t -= sign * offsetMin * 60_000;
  }
  const date = new Date(t);
  const checks = Number(mo) >= 1 && Number(mo) <= 12 && Number(da) >= 1 && Number(da) <= 31 && Number(h) <= 24 && Number(mi) <= 59 && Number(se) <= 60;
  if (!checks || Number.isNaN(date.getTime())) throw new DecodeError(`'${text}' is not a valid datetime`, field);
  return date;
}

/** Format a datetime for the wire: UTC, millisecond precision, `Z` (e.g. 2026-11-22T01:49:30.278Z). */
export function formatDateTime(date: Date): string {
  if (Number.isNaN(date.getTime())) throw new RangeError('invalid Date');
  return date.toISOString();
}

/** Truncate a Date to the millisecond precision the protocol keeps (a no-op for JS Dates, kept for clarity). */
export function toProtocolPrecision(date: Date): Date {
  return new Date(Math.trunc(date.getTime()));
}
