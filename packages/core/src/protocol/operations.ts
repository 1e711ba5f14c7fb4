import type { ApiVersion, CatalogueAdapter, CatalogueCapabilities } from '@memberkit/types';
import type { Operation } from '../errors.js';
import { fieldsWhere, OVERLAY_FIELD_SET, type SysmetaField } from './sysmeta-fields.js';

/**
 * What a caller needs for an operation: an object permission (read < write <
 * changePermission, checked on the object's access policy), `privileged` (node administrators
 * and Coordinating Nodes), `create` (the node's create policy), `authenticated` (any
 * authenticated caller, or one the create policy admits) or `none`.
 */
export type Requirement = 'none' | 'read' | 'write' | 'changePermission' | 'privileged' | 'create' | 'authenticated';

/** What an operation does to the catalogue (CatalogueChange parts). */
export type CatalogueEffect = 'insert' | 'replace' | 'remove';

export interface OperationRule {
  /**
   * Accepts a series identifier, acting on its head PID ("Where an operation accepts a SID,
   * it acts on the head PID"), per API version. v1 knows no SIDs.
   */
  sid: Readonly<Record<ApiVersion, boolean>>;
  /** What the caller needs. */
  permission: Requirement;
  /** The catalogue changes it makes (empty: it only reads). */
  catalogue: readonly CatalogueEffect[];
  /** System metadata fields of an existing object it may change (the node's own fields always move). */
  changes: readonly SysmetaField[];
}

const PID_ONLY = { v1: false, v2: true } as const;
const NO_SID = { v1: false, v2: false } as const;
const read = (sid: Readonly<Record<ApiVersion, boolean>> = PID_ONLY): OperationRule => ({ sid, permission: 'read', catalogue: [], changes: [] });
const none = (permission: Requirement = 'none'): OperationRule => ({ sid: NO_SID, permission, catalogue: [], changes: [] });

/**
 * Every operation (the Member Node's, then the Coordinating Node's), once: whether it accepts a SID, what the caller needs and
 * which fields it may change. Routes, services and the capability checks read it; a missing
 * operation is a compile error. (PID_ONLY is "v2: PID or SID", the API reference's `id`.)
 */
export const OPERATIONS: Record<Operation, OperationRule> = {
  'MNCore.ping': none(),
  'MNCore.getCapabilities': none(),
  'MNCore.getLogRecords': none(),
  'MNRead.describe': read(),
  'MNRead.get': read(),
  'MNRead.getSystemMetadata': read(),
  // getChecksum(pid): the reference names a PID on both versions.
  'MNRead.getChecksum': read(NO_SID),
  'MNRead.listObjects': none(),
  // getReplica(pid): a node replicates a PID.
  'MNRead.getReplica': read(NO_SID),
  'MNRead.synchronizationFailed': none('privileged'),
  // The CN names whatever identifier changed; the refresh takes the CN's copy of the
  // fields this node does not own.
  'MNRead.systemMetadataChanged': {
    sid: { v1: true, v2: true },
    permission: 'privileged',
    catalogue: ['replace'],
    changes: fieldsWhere('free', 'once', 'forward'),
  },
  'MNAuthorization.isAuthorized': read(),
  'MNStorage.create': { sid: NO_SID, permission: 'create', catalogue: ['insert'], changes: [] },
  // update(pid): the predecessor, by PID, gains obsoletedBy.
  'MNStorage.update': { sid: NO_SID, permission: 'write', catalogue: ['insert', 'replace'], changes: ['obsoletedBy'] },
  'MNStorage.delete': { sid: PID_ONLY, permission: 'privileged', catalogue: ['remove'], changes: [] },
  'MNStorage.archive': { sid: PID_ONLY, permission: 'write', catalogue: ['replace'], changes: ['archived'] },
  'MNStorage.generateIdentifier': none('authenticated'),
  // Replica entries describe copies on other nodes: the CN maintains them, not a client.
  'MNStorage.updateSystemMetadata': { sid: NO_SID, permission: 'changePermission', catalogue: ['replace'], changes: fieldsWhere('free', 'once', 'forward').filter((f) => f !== 'replica') },
  'MNReplication.replicate': { sid: NO_SID, permission: 'privileged', catalogue: ['insert'], changes: [] },
  'MNQuery.listQueryEngines': none(),
  'MNQuery.getQueryEngineDescription': none(),
  'MNQuery.query': none(),
  'MNView.listViews': none(),
  'MNView.view': read(),
  'MNPackage.getPackage': read(),
  // Coordinating Node operations (@memberkit/cn). The CN's own copies are read and changed
  // through the same services; its private operations are for CN subjects and administrators.
  'CNCore.ping': none(),
  'CNCore.getCapabilities': none(),
  'CNCore.listFormats': none(),
  'CNCore.getFormat': none(),
  'CNCore.listChecksumAlgorithms': none(),
  'CNCore.listNodes': none(),
  'CNCore.getLogRecords': none(),
  'CNCore.reserveIdentifier': none('authenticated'),
  'CNCore.generateIdentifier': none('authenticated'),
  'CNCore.hasReservation': none(),
  'CNCore.create': { sid: NO_SID, permission: 'privileged', catalogue: ['insert'], changes: [] },
  'CNCore.registerSystemMetadata': { sid: NO_SID, permission: 'privileged', catalogue: ['insert'], changes: [] },
  // The CN holds the authoritative copy: it may change replicas too (the MN's own update may not).
  'CNCore.updateSystemMetadata': { sid: NO_SID, permission: 'privileged', catalogue: ['replace'], changes: fieldsWhere('free', 'once', 'forward') },
  'CNCore.setObsoletedBy': { sid: NO_SID, permission: 'privileged', catalogue: ['replace'], changes: ['obsoletedBy'] },
  'CNCore.archive': { sid: PID_ONLY, permission: 'privileged', catalogue: ['replace'], changes: ['archived'] },
  'CNCore.delete': { sid: PID_ONLY, permission: 'privileged', catalogue: ['remove'], changes: [] },
  'CNRead.get': read(),
  'CNRead.getSystemMetadata': read(),
  'CNRead.describe': read(),
  'CNRead.resolve': read(),
  'CNRead.getChecksum': read(NO_SID),
  'CNRead.listObjects': none(),
  'CNRead.search': none(),
  'CNRead.query': none(),
  'CNRead.getQueryEngineDescription': none(),
  'CNRead.listQueryEngines': none(),
  'CNRead.synchronize': none('authenticated'),
  'CNAuthorization.isAuthorized': read(),
  'CNAuthorization.setAccessPolicy': { sid: PID_ONLY, permission: 'changePermission', catalogue: ['replace'], changes: ['accessPolicy'] },
  'CNAuthorization.setRightsHolder': { sid: PID_ONLY, permission: 'changePermission', catalogue: ['replace'], changes: ['rightsHolder'] },
  'CNIdentity.registerAccount': none('authenticated'),
  'CNIdentity.updateAccount': none('authenticated'),
  'CNIdentity.verifyAccount': none('authenticated'),
  'CNIdentity.getSubjectInfo': none(),
  'CNIdentity.listSubjects': none(),
  'CNIdentity.mapIdentity': none('authenticated'),
  'CNIdentity.removeMapIdentity': none('authenticated'),
  'CNIdentity.requestMapIdentity': none('authenticated'),
  'CNIdentity.confirmMapIdentity': none('authenticated'),
  'CNIdentity.getPendingMapIdentity': none('authenticated'),
  'CNIdentity.denyMapIdentity': none('authenticated'),
  'CNIdentity.createGroup': none('authenticated'),
  'CNIdentity.updateGroup': none('authenticated'),
  'CNDiagnostic.echoCredentials': none(),
  'CNDiagnostic.echoSystemMetadata': none(),
  'CNDiagnostic.echoIndexedObject': none(),
  'CNRegister.register': none('authenticated'),
  'CNRegister.updateNodeCapabilities': none('authenticated'),
  'CNRegister.getNodeCapabilities': none(),
  'CNReplication.setReplicationStatus': none('authenticated'),
  'CNReplication.updateReplicationMetadata': none('privileged'),
  'CNReplication.setReplicationPolicy': { sid: PID_ONLY, permission: 'changePermission', catalogue: ['replace'], changes: ['replicationPolicy'] },
  'CNReplication.isNodeAuthorized': none(),
  'CNReplication.deleteReplicationMetadata': none('privileged'),
  'CNView.listViews': none(),
  'CNView.view': read(),
};

/** True when `op` on API `version` accepts a SID for its identifier. */
export function acceptsSid(op: Operation, version: ApiVersion): boolean {
  return OPERATIONS[op].sid[version];
}

/**
 * The fields `op` may change on a catalogue with these capabilities: every field the
 * operation may change on a writable catalogue; on an overlay catalogue (a read-only legacy
 * archive) only those the overlay keeps; none on a read-only one.
 */
export function changeableFields(op: Operation, capabilities: CatalogueCapabilities): SysmetaField[] {
  const rule = OPERATIONS[op];
  if (capabilities.write) return [...rule.changes];
  if (capabilities.overlay) return rule.changes.filter((f) => OVERLAY_FIELD_SET.has(f));
  return [];
}

/**
 * True when the catalogue can carry out `op`: an operation that only reads always; one that
 * changes the catalogue needs `apply` and either capabilities.write, or capabilities.overlay
 * when it only replaces records and may change at least one overlay field (archive,
 * updateSystemMetadata of access policy, rights holder and replicas, a CN refresh).
 */
export function catalogueSupports(metadata: Pick<CatalogueAdapter, 'capabilities' | 'apply'>, op: Operation): boolean {
  const rule = OPERATIONS[op];
  if (rule.catalogue.length === 0) return true;
  if (!metadata.apply) return false;
  if (metadata.capabilities.write) return true;
  return !!metadata.capabilities.overlay && rule.catalogue.every((e) => e === 'replace') && changeableFields(op, metadata.capabilities).length > 0;
}
