import type { StoredSystemMetadata } from '@memberkit/types';
import { withChanges } from './sysmeta-fields.js';

/**
 * The one place serialVersion and dateSysMetadataModified move. "serialVersion: incremented
 * each time the system metadata changes"; dateSysMetadataModified moves forward with every
 * change and never back (a Coordinating Node harvests by it): at least `now`, and at least
 * 1 ms after the record's previous value, whatever clock `now` came from.
 *
 * `changes` are the new field values (already checked against the field rules; undefined
 * removes an optional field);
 * `options.serialVersion` raises the new serialVersion to at least that value (a CN's copy
 * that is several versions ahead keeps its number).
 */
export function nextRevision(
  current: StoredSystemMetadata,
  changes: Partial<StoredSystemMetadata>,
  now: Date,
  options: { serialVersion?: number } = {},
): StoredSystemMetadata {
  return {
    ...withChanges(current, changes),
    serialVersion: Math.max(current.serialVersion + 1, options.serialVersion ?? 0),
    dateSysMetadataModified: new Date(Math.max(now.getTime(), current.dateSysMetadataModified.getTime() + 1)),
  };
}
