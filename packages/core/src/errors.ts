import {
  AdapterError,
  createException,
  DataONEException,
  DecodeError,
  detailCodeFor,
  type AdapterErrorKind,
  type ExceptionFields,
  type ExceptionName,
} from '@memberkit/types';

/** Member Node operations, named "API.method" as in the API reference and detail-codes.tsv. */
export type MemberNodeOperation =
  | 'MNCore.ping' | 'MNCore.getCapabilities' | 'MNCore.getLogRecords'
  | 'MNRead.describe' | 'MNRead.get' | 'MNRead.getChecksum' | 'MNRead.getSystemMetadata' | 'MNRead.listObjects'
  | 'MNRead.getReplica' | 'MNRead.synchronizationFailed' | 'MNRead.systemMetadataChanged'
  | 'MNAuthorization.isAuthorized'
  | 'MNStorage.create' | 'MNStorage.update' | 'MNStorage.delete' | 'MNStorage.archive'
  | 'MNStorage.generateIdentifier' | 'MNStorage.updateSystemMetadata'
  | 'MNReplication.replicate'
  | 'MNQuery.listQueryEngines' | 'MNQuery.getQueryEngineDescription' | 'MNQuery.query'
  | 'MNView.listViews' | 'MNView.view' | 'MNPackage.getPackage';

/** Coordinating Node operations (@memberkit/cn), named as in the API reference and detail-codes.tsv. */
export type CoordinatingNodeOperation =
  | 'CNCore.ping' | 'CNCore.getCapabilities' | 'CNCore.create' | 'CNCore.listFormats' | 'CNCore.getFormat'
  | 'CNCore.getLogRecords' | 'CNCore.reserveIdentifier' | 'CNCore.generateIdentifier' | 'CNCore.hasReservation'
  | 'CNCore.listChecksumAlgorithms' | 'CNCore.setObsoletedBy' | 'CNCore.delete' | 'CNCore.archive' | 'CNCore.listNodes'
  | 'CNCore.registerSystemMetadata' | 'CNCore.updateSystemMetadata'
  | 'CNRead.get' | 'CNRead.getSystemMetadata' | 'CNRead.describe' | 'CNRead.resolve' | 'CNRead.getChecksum'
  | 'CNRead.listObjects' | 'CNRead.search' | 'CNRead.query' | 'CNRead.getQueryEngineDescription'
  | 'CNRead.listQueryEngines' | 'CNRead.synchronize'
  | 'CNAuthorization.isAuthorized' | 'CNAuthorization.setAccessPolicy' | 'CNAuthorization.setRightsHolder'
  | 'CNIdentity.registerAccount' | 'CNIdentity.updateAccount' | 'CNIdentity.verifyAccount' | 'CNIdentity.getSubjectInfo'
  | 'CNIdentity.listSubjects' | 'CNIdentity.mapIdentity' | 'CNIdentity.removeMapIdentity' | 'CNIdentity.requestMapIdentity'
  | 'CNIdentity.confirmMapIdentity' | 'CNIdentity.getPendingMapIdentity' | 'CNIdentity.denyMapIdentity'
  | 'CNIdentity.createGroup' | 'CNIdentity.updateGroup'
  | 'CNDiagnostic.echoCredentials' | 'CNDiagnostic.echoSystemMetadata' | 'CNDiagnostic.echoIndexedObject'
  | 'CNRegister.register' | 'CNRegister.updateNodeCapabilities' | 'CNRegister.getNodeCapabilities'
  | 'CNReplication.setReplicationStatus' | 'CNReplication.updateReplicationMetadata' | 'CNReplication.setReplicationPolicy'
  | 'CNReplication.isNodeAuthorized' | 'CNReplication.deleteReplicationMetadata'
  | 'CNView.view' | 'CNView.listViews';

/** Every operation a memberkit node serves (a Member Node's or a Coordinating Node's). */
export type Operation = MemberNodeOperation | CoordinatingNodeOperation;

/**
 * The exception `name` as `operation` raises it: the detailCode is the one the API
 * reference documents for that pair; where it documents none, '0'.
 */
export function fail(operation: Operation, name: ExceptionName, description: string, fields: Omit<ExceptionFields, 'description' | 'detailCode'> = {}): DataONEException {
  return createException(name, { ...fields, description, detailCode: detailCodeFor(operation, name) ?? '0' });
}

/**
 * How each adapter error kind surfaces. Exhaustive: a new kind is a compile error here.
 * `undefined` means "let the operation decide" (handled where the kind is expected).
 */
const ADAPTER_KIND_TO_EXCEPTION: Record<AdapterErrorKind, ExceptionName> = {
  'not-found': 'NotFound',
  'already-exists': 'IdentifierNotUnique',
  conflict: 'InvalidRequest',
  invalid: 'InvalidRequest',
  unsupported: 'NotImplemented',
  unavailable: 'ServiceFailure',
  internal: 'ServiceFailure',
};

const PUBLIC_DESCRIPTIONS: Record<AdapterErrorKind, string> = {
  'not-found': 'the object is not on this node',
  'already-exists': 'the identifier is already in use on this node; choose another',
  conflict: 'the object changed while this request was processed; read it again and retry',
  invalid: 'the request cannot be applied to the stored object',
  unsupported: "this node's storage does not support the operation",
  unavailable: 'the storage backend is unavailable; retry later',
  internal: 'internal storage error',
};

/**
 * Any thrown value as the DataONE exception of `operation`: DataONE exceptions pass
 * (detailCode re-read for this operation when it was '0'); adapter errors map through the
 * table; anything else is a ServiceFailure whose cause is logged, never echoed.
 */
export function toDataONEException(operation: Operation, err: unknown, pid?: string): DataONEException {
  if (DataONEException.is(err)) {
    if (err.detailCode === '0') {
      const code = detailCodeFor(operation, err.exceptionName);
      if (code) return err.withDetailCode(code);
    }
    return err;
  }
  const withPid = pid === undefined ? {} : { pid };
  if (AdapterError.is(err)) {
    // Made but not confirmed durable: "retry later" would have the caller apply it twice.
    if (err.committed) return changedButUnconfirmed(operation, pid);
    const name = ADAPTER_KIND_TO_EXCEPTION[err.kind];
    const detail = err.kind === 'invalid' || err.kind === 'conflict' ? `: ${err.message}` : '';
    return fail(operation, name, PUBLIC_DESCRIPTIONS[err.kind] + detail, withPid);
  }
  if (DecodeError.is(err)) return fail(operation, 'InvalidRequest', err.message, withPid);
  return fail(operation, 'ServiceFailure', 'internal error; the node has logged the cause', withPid);
}

/** The answer to a write that was stored although its commit reported a failure (removeUnreferencedBytes: 'committed'). */
export function storedButUnconfirmed(operation: Operation, pid: string): DataONEException {
  return fail(operation, 'ServiceFailure', `'${pid}' was stored, but the node could not confirm that it is safely on disk; read its system metadata before sending it again`, { pid });
}

/**
 * The answer to a change that was made although its operation failed: it committed, but the
 * node could not confirm that it is on disk (AdapterError.committed).
 */
export function changedButUnconfirmed(operation: Operation, pid?: string): DataONEException {
  const what = pid === undefined ? 'the change was made' : `the change to '${pid}' was made`;
  return fail(operation, 'ServiceFailure', `${what}, but the node could not confirm that it is safely on disk; read the object's system metadata before sending it again`, pid === undefined ? {} : { pid });
}

/** True when the error is a bug or backend failure whose cause must be logged. */
export function isUnexpected(err: unknown): boolean {
  if (DataONEException.is(err)) return err.errorCode >= 500;
  if (AdapterError.is(err)) return err.kind === 'internal' || err.kind === 'unavailable';
  return !DecodeError.is(err);
}
