import { OVERLAY_FIELDS, type StoredSystemMetadata } from '@memberkit/types';

/**
 * How a system metadata field may change once an object exists, from the API reference
 * (SystemMetadata.txt, "updateSystemMetadata"):
 * - `node`: moved by the node on every change (serialVersion, dateSysMetadataModified), only
 *   through `nextRevision`;
 * - `fixed`: never changes (identifier, size, checksum, submitter, dateUploaded, originMemberNode);
 * - `once`: unset until set, then fixed (seriesId, obsoletes, obsoletedBy);
 * - `forward`: false until true, never back (archived);
 * - `free`: the rights holder, the CN or the node may change it.
 */
export type FieldRule = 'node' | 'fixed' | 'once' | 'forward' | 'free';

export type SysmetaField = keyof StoredSystemMetadata;

/** Every field's rule. Exhaustive: a new field of SystemMetadata is a compile error here. */
export const SYSMETA_FIELDS: Record<SysmetaField, FieldRule> = {
  serialVersion: 'node',
  dateSysMetadataModified: 'node',
  identifier: 'fixed',
  size: 'fixed',
  checksum: 'fixed',
  submitter: 'fixed',
  dateUploaded: 'fixed',
  originMemberNode: 'fixed',
  formatId: 'free',
  rightsHolder: 'free',
  accessPolicy: 'free',
  replicationPolicy: 'free',
  authoritativeMemberNode: 'free',
  replica: 'free',
  mediaType: 'free',
  fileName: 'free',
  seriesId: 'once',
  obsoletes: 'once',
  obsoletedBy: 'once',
  archived: 'forward',
};

const ALL_FIELDS = Object.keys(SYSMETA_FIELDS) as SysmetaField[];

/** Fields whose rule is one of `rules`. */
export function fieldsWhere(...rules: FieldRule[]): SysmetaField[] {
  return ALL_FIELDS.filter((f) => rules.includes(SYSMETA_FIELDS[f]));
}

/**
 * Fields an overlay catalogue (CatalogueCapabilities.overlay) keeps beside a read-only legacy
 * archive; the contract names them (OVERLAY_FIELDS in @memberkit/types), every other field
 * comes from the archive.
 */
export const OVERLAY_FIELD_SET: ReadonlySet<SysmetaField> = new Set<SysmetaField>(OVERLAY_FIELDS);

/** True when the two values of a field are the same (dates by time, structures by value). */
export function sameFieldValue(a: unknown, b: unknown): boolean {
  if (a instanceof Date || b instanceof Date) return a instanceof Date && b instanceof Date && a.getTime() === b.getTime();
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

/** The fields (other than the node's own) whose values differ between `before` and `after`. */
export function changedFields(before: StoredSystemMetadata, after: StoredSystemMetadata): SysmetaField[] {
  return ALL_FIELDS.filter((f) => SYSMETA_FIELDS[f] !== 'node' && !sameFieldValue(before[f], after[f]));
}

/**
 * The changes that give `fields` the values of `incoming`: a value, or undefined where
 * `incoming` lacks an optional field (the field is then removed; `archived` and `replica`,
 * always present, keep their stored value).
 */
export function takeFields(current: StoredSystemMetadata, incoming: Partial<StoredSystemMetadata>, fields: Iterable<SysmetaField>): Partial<StoredSystemMetadata> {
  const changes: Record<string, unknown> = {};
  for (const f of fields) {
    const value = incoming[f];
    changes[f] = value === undefined && (f === 'archived' || f === 'replica') ? current[f] : value;
  }
  return changes as Partial<StoredSystemMetadata>;
}

