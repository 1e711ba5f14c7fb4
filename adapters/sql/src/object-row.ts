import { epochMs, formatDateTime, type ObjectSummary, type StoredSystemMetadata } from '@memberkit/types';
import { text } from './dialect.js';

/**
 * How an object is kept in a row of the store's tables: its system metadata as JSON, the
 * subjects of its access rows, and the summary columns listings read without decoding JSON.
 */

/**
 * Stored system metadata as JSON: Dates as ISO strings; properties that are `undefined` are
 * left out, so they read back absent. 'invalid' when a date the catalogue relies on is bad.
 */
export function serializeSysmeta(sysmeta: StoredSystemMetadata): string {
  epochMs(sysmeta.dateUploaded, 'dateUploaded');
  epochMs(sysmeta.dateSysMetadataModified, 'dateSysMetadataModified');
  for (const replica of sysmeta.replica ?? []) epochMs(replica.replicaVerified, 'replicaVerified');
  // The two dates written by formatDateTime (the same text as Date's toJSON, which took
  // ~2 µs each: half of the JSON's cost); keys keep their order. Replicas are rare.
  return JSON.stringify({ ...sysmeta, dateUploaded: formatDateTime(sysmeta.dateUploaded), dateSysMetadataModified: formatDateTime(sysmeta.dateSysMetadataModified) });
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
 * The subjects ObjectQuery.readableBy matches an object for (its access rows): the
 * rightsHolder and every subject an access rule grants any permission (compared literally).
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

/** The columns of a listing summary (row alias `r`), in the order `summaryOf` reads values. */
export const SUMMARY_COLUMNS = 'r.pid, r.format_id, r.size, r.checksum_algorithm, r.checksum_value, r.date_modified';

/**
 * An ObjectSummary from a row of SUMMARY_COLUMNS, given as an object or as values in order,
 * from any driver (MySQL VARBINARY arrives as Buffers, PostgreSQL BIGINT as strings).
 */
export function summaryOf(row: Record<string, unknown> | unknown[]): ObjectSummary {
  // Indexed, not destructured: a page builds a thousand of these, and destructuring walks an iterator.
  if (Array.isArray(row)) {
    return {
      identifier: text(row[0]),
      formatId: text(row[1]),
      size: Number(row[2]),
      checksum: { algorithm: text(row[3]), value: text(row[4]) },
      dateSysMetadataModified: new Date(Number(row[5])),
    };
  }
  return {
    identifier: text(row.pid),
    formatId: text(row.format_id),
    size: Number(row.size),
    checksum: { algorithm: text(row.checksum_algorithm), value: text(row.checksum_value) },
    dateSysMetadataModified: new Date(Number(row.date_modified)),
  };
}
