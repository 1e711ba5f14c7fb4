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
  const [Y, MO, D, H, MI, SE] = [y, mo, da, h, mi, se].map(Number) as [number, number, number, number, number, number];
  const invalid = (why: string): DecodeError => new DecodeError(`'${text}' is not a valid datetime (${why})`, field);
  if (MO < 1 || MO > 12) throw invalid('month out of range');
  const daysInMonth = new Date(Date.UTC(2000, MO, 0)).getUTCDate() - (MO === 2 && !isLeapYear(Y) ? 1 : 0);
  if (D < 1 || D > daysInMonth) throw invalid('day out of range');
  // xs:dateTime allows 24:00:00 (the end of the day) but no leap second.
  const endOfDay = H === 24 && MI === 0 && SE === 0 && !/[1-9]/.test(frac ?? '');
  if ((H > 23 && !endOfDay) || MI > 59 || SE > 59) throw invalid('time out of range');
  const ms = frac ? Number((frac + '00').slice(0, 3)) : 0;
  let t = Date.UTC(Y, MO - 1, D, H, MI, SE, ms);
  if (Y < 100 && Y >= 0) {
    const d = new Date(t);
    d.setUTCFullYear(Y);
    t = d.getTime();
  }
  if (zone && zone !== 'Z') {
    const sign = zone[0] === '-' ? -1 : 1;
    const digits = zone.slice(1).replace(':', '');
    const zh = Number(digits.slice(0, 2));
    const zm = Number(digits.slice(2, 4) || '0');
    if (zh > 14 || zm > 59 || (zh === 14 && zm > 0)) throw invalid('zone offset out of range');
    t -= sign * (zh * 60 + zm) * 60_000;
  }
  const date = new Date(t);
  // Years 0001-9999 only: beyond them formatDateTime writes an expanded year ('+010000-…')
  // that no xs:dateTime reader (this one included) takes back.
  if (Number.isNaN(t) || t < MIN_INSTANT || t > MAX_INSTANT) throw invalid('out of range: years 0001 to 9999 (UTC)');
  return date;
}

/** 0001-01-01T00:00:00Z (Date.UTC would read year 1 as 1901). */
const MIN_INSTANT = -62_135_596_800_000;
const MAX_INSTANT = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

function isLeapYear(y: number): boolean {
  return (y % 4 === 0 && y % 100 !== 0) || y % 400 === 0;
}

/** Format a datetime for the wire: UTC, millisecond precision, `Z` (e.g. 2026-11-22T01:49:30.278Z). */
export function formatDateTime(date: Date): string {
  const t = date.getTime();
  if (Number.isNaN(t)) throw new RangeError('invalid Date');
  // Listings format thousands of dates: the day's prefix is cached, the time of day written by
  // hand (same text as toISOString, which stays the path for years before 1970 or after 9999).
  if (t < 0 || t >= YEAR_10000) return date.toISOString();
  const day = Math.floor(t / DAY_MS);
  if (day !== lastDay) {
    lastDay = day;
    lastDayPrefix = date.toISOString().slice(0, 11);
  }
  let rest = t - day * DAY_MS;
  const ms = rest % 1000;
  rest = (rest - ms) / 1000;
  const sec = rest % 60;
  rest = (rest - sec) / 60;
  const min = rest % 60;
  const hour = (rest - min) / 60;
  return `${lastDayPrefix}${hour < 10 ? '0' : ''}${hour}:${min < 10 ? '0' : ''}${min}:${sec < 10 ? '0' : ''}${sec}.${ms < 10 ? '00' : ms < 100 ? '0' : ''}${ms}Z`;
}

const DAY_MS = 86_400_000;
const YEAR_10000 = Date.UTC(10000, 0, 1);
let lastDay = NaN;
let lastDayPrefix = '';

/** Truncate a Date to the millisecond precision the protocol keeps (a no-op for JS Dates, kept for clarity). */
export function toProtocolPrecision(date: Date): Date {
  return new Date(Math.trunc(date.getTime()));
}
