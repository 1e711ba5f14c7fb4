/**
 * Dates as people read them ("12 March 2024"), from the ISO 8601 forms metadata and system
 * metadata use. Partial dates stay partial ("June 2016", "2016"); anything else is shown as
 * written. `machine` is the value for `<time datetime>` when the text is a valid one.
 */
const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

export interface HumanDate {
  text: string;
  /** A valid HTML `datetime` value, when the input is an ISO 8601 date (or date and time). */
  machine?: string;
}

const ISO = /^(\d{4})(?:-(\d{2})(?:-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?)?)?$/;

export function humanDate(value: string | Date | undefined): HumanDate | undefined {
  if (value === undefined) return undefined;
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return undefined;
    return { text: `${value.getUTCDate()} ${MONTHS[value.getUTCMonth()]} ${value.getUTCFullYear()}`, machine: value.toISOString() };
  }
  const raw = value.trim();
  const m = ISO.exec(raw);
  if (!m) return raw === '' ? undefined : { text: raw };
  const [, y, mo, d, hh, mm, ss, zone] = m;
  const month = mo ? Number(mo) : undefined;
  const day = d ? Number(d) : undefined;
  if (month !== undefined && (month < 1 || month > 12)) return { text: raw };
  if (day !== undefined && (day < 1 || day > new Date(Date.UTC(Number(y), month!, 0)).getUTCDate())) return { text: raw };
  if (month === undefined) return { text: y!, machine: y! };
  if (day === undefined) return { text: `${MONTHS[month - 1]} ${y}`, machine: `${y}-${mo}` };
  const date = `${day} ${MONTHS[month - 1]} ${y}`;
  if (hh === undefined) return { text: date, machine: `${y}-${mo}-${d}` };
  // A time of day is kept in the machine value; people get the calendar date as written.
  const z = zone ? (zone === 'Z' ? 'Z' : zone.length === 5 ? `${zone.slice(0, 3)}:${zone.slice(3)}` : zone) : '';
  return { text: date, machine: `${y}-${mo}-${d}T${hh}:${mm}${ss ? `:${ss}` : ''}${z}` };
}

/** "1 June 2016 to 31 August 2019", "since 1 June 2016", "until ...", or one date. */
export function humanRange(begin: string | undefined, end: string | undefined): string {
  const b = humanDate(begin)?.text;
  const e = humanDate(end)?.text;
  if (b && e) return b === e ? b : `${b} to ${e}`;
  if (b) return `from ${b}`;
  if (e) return `until ${e}`;
  return '';
}
