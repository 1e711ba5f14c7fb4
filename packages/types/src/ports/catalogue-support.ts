import { AdapterError } from './adapter-error.js';
import type { ObjectSummary, StoredSystemMetadata } from './metadata-adapter.js';

/**
 * Helpers every catalogue adapter needs to honour the contracts the same way (the SQLite
 * default and adapters/sql use them; so may any third-party catalogue).
 */

/** Epoch milliseconds of a Date; AdapterError 'invalid' when it is not a valid Date. */
export function epochMs(value: unknown, field: string): number {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new AdapterError('invalid', `${field} must be a valid Date`);
  }
  return value.getTime();
}

/**
 * Stored system metadata as JSON: Dates as ISO strings; properties that are `undefined` are
 * left out, so they read back absent. 'invalid' when a date the catalogue relies on is bad.
 */
export function serializeSysmeta(sysmeta: StoredSystemMetadata): string {
  epochMs(sysmeta.dateUploaded, 'dateUploaded');
  epochMs(sysmeta.dateSysMetadataModified, 'dateSysMetadataModified');
  for (const replica of sysmeta.replica ?? []) epochMs(replica.replicaVerified, 'replicaVerified');
  return JSON.stringify(sysmeta);
}

/**
 * Reads back what serializeSysmeta wrote. Only the known Date fields are revived (a generic
 * reviver would turn a fileName that looks like a date into a Date).
 */
export function reviveSysmeta(json: string): StoredSystemMetadata {
  const raw = JSON.parse(json) as Record<string, unknown> & { replica?: Array<Record<string, unknown>> };
  for (const field of ['dateUploaded', 'dateSysMetadataModified'] as const) {
    if (typeof raw[field] === 'string') raw[field] = new Date(raw[field]);
  }
  for (const replica of raw.replica ?? []) {
    if (typeof replica.replicaVerified === 'string') replica.replicaVerified = new Date(replica.replicaVerified);
  }
  return raw as unknown as StoredSystemMetadata;
}

/**
 * The subjects ObjectQuery.readableBy matches an object for: the rightsHolder and every
 * subject an access rule grants any permission (compared literally).
 */
export function readers(sysmeta: Pick<StoredSystemMetadata, 'rightsHolder' | 'accessPolicy'>): Set<string> {
  const subjects = new Set<string>();
  if (typeof sysmeta.rightsHolder === 'string') subjects.add(sysmeta.rightsHolder);
  for (const rule of sysmeta.accessPolicy?.allow ?? []) {
    if ((rule.permission?.length ?? 0) === 0) continue;
    for (const subject of rule.subject ?? []) subjects.add(subject);
  }
  return subjects;
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
 * The smallest string greater than every string starting with `prefix` in code point order
 * (SQLite BINARY, PostgreSQL COLLATE "C" and MySQL VARBINARY all compare UTF-8 bytes, which
 * is code point order), or undefined when there is none. `x >= prefix AND x < upper` is then
 * "x starts with prefix" as an index range, with no LIKE escaping (EventQuery.idPrefix).
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

/** The columns of a listing summary in memberkit's catalogue tables (row alias `r`), in the order `summaryOf` reads values. */
export const SUMMARY_COLUMNS = 'r.pid, r.format_id, r.size, r.checksum_algorithm, r.checksum_value, r.date_modified';

/**
 * An ObjectSummary from a row of SUMMARY_COLUMNS, given as an object or as values in order,
 * from any driver (MySQL VARBINARY arrives as Buffers, PostgreSQL BIGINT as strings).
 */
export function summaryOf(row: Record<string, unknown> | unknown[]): ObjectSummary {
  const [pid, formatId, size, algorithm, value, modified] = Array.isArray(row)
    ? row
    : [row.pid, row.format_id, row.size, row.checksum_algorithm, row.checksum_value, row.date_modified];
  const str = (v: unknown) => (v instanceof Uint8Array ? Buffer.from(v).toString('utf8') : String(v));
  return {
    identifier: str(pid),
    formatId: str(formatId),
    size: Number(size),
    checksum: { algorithm: str(algorithm), value: str(value) },
    dateSysMetadataModified: new Date(Number(modified)),
  };
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
  const stamp = Math.max(base, existing.dateSysMetadataModified.getTime() + 1);
  const sysmeta: StoredSystemMetadata = {
    ...existing,
    size: file.size,
    checksum: { algorithm: file.algorithm, value: file.checksum },
    serialVersion: existing.serialVersion + 1,
    dateSysMetadataModified: new Date(stamp),
    ...(file.reformat ? { formatId: file.reformat.formatId, mediaType: { name: file.reformat.mediaType, property: [] } } : {}),
  };
  return { outcome: 'changed', stamp, sysmeta };
}
