import type { StoredSystemMetadata } from './ports/catalogue-adapter.js';

/**
 * `current` with `changes` applied: a field set to undefined in `changes` is removed (an
 * optional field the change clears).
 */
export function withChanges(current: StoredSystemMetadata, changes: Partial<StoredSystemMetadata>): StoredSystemMetadata {
  const next: Record<string, unknown> = { ...current, ...changes };
  for (const [field, value] of Object.entries(changes)) if (value === undefined) delete next[field];
  return next as unknown as StoredSystemMetadata;
}

/**
 * The one place serialVersion and dateSysMetadataModified move (requests, wrap scans, dataset
 * maps, CN refreshes). "serialVersion: incremented each time the system metadata changes";
 * dateSysMetadataModified moves forward with every change and never back (a Coordinating
 * Node harvests by it): at least `now`, and at least 1 ms after the record's previous value,
 * whatever clock `now` came from. The catalogue may move it further when it commits (one
 * clock per catalogue, so listing order is commit order).
 *
 * `changes` are the new field values (already checked against the field rules; undefined
 * removes an optional field); `options.serialVersion` raises the new serialVersion to at least
 * that value (a CN's copy that is several versions ahead keeps its number).
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
