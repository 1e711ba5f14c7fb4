import { AdapterError, type StoredSystemMetadata } from '@memberkit/types';

/** Epoch milliseconds of a Date; kind 'invalid' when it is not a valid Date. */
export function epochMs(value: unknown, field: string): number {
  if (!(value instanceof Date) || Number.isNaN(value.getTime())) {
    throw new AdapterError('invalid', `${field} must be a valid Date`);
  }
  return value.getTime();
}

/**
 * Serialises system metadata for the `sysmeta` column. Dates become ISO strings (Date#toJSON);
 * properties that are `undefined` are left out, so they read back absent.
 * Throws 'invalid' when a date the catalogue relies on is not a valid Date.
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
