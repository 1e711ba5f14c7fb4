import {
  formatById,
  identifierProblem,
  normalizeChecksumAlgorithm,
  sameDigest,
  type Checksum,
  type PendingWrite,
  type StoredSystemMetadata,
  type SystemMetadata,
} from '@memberkit/types';
import { fail, type Operation } from '../errors.js';
import { fileNameProblem, mediaTypeProblem } from './header-values.js';

/**
 * Rules on system metadata a client sends, in one place. The node sets serialVersion,
 * submitter, dateUploaded and dateSysMetadataModified; the client must set the rest.
 */

/** Checks shared by create and update: the sysmeta must agree with the pid and the bytes that arrived. */
export function checkNewObject(op: Operation, sm: SystemMetadata, pid: string, upload: PendingWrite): void {
  const invalid = (msg: string) => fail(op, 'InvalidSystemMetadata', msg, { pid });
  if (sm.identifier !== pid) throw invalid(`systemMetadata/identifier '${sm.identifier}' differs from the pid '${pid}' of the request`);
  if (sm.obsoletedBy !== undefined) throw invalid('systemMetadata/obsoletedBy must not be set on a new object');
  checkFormat(op, sm, pid);
  const algorithm = normalizeChecksumAlgorithm(sm.checksum.algorithm);
  if (!algorithm) throw invalid(`systemMetadata/checksum/@algorithm '${sm.checksum.algorithm}' is not supported; use SHA-1, MD5 or SHA-256`);
  if (sm.size !== upload.size) throw invalid(`systemMetadata/size is ${sm.size} but ${upload.size} bytes arrived`);
  if (!sameDigest(sm.checksum.value, upload.checksums[algorithm])) {
    throw invalid(`systemMetadata/checksum ${algorithm} ${sm.checksum.value} does not match the bytes that arrived (${upload.checksums[algorithm]})`);
  }
  if (sm.seriesId !== undefined) {
    const problem = identifierProblem(sm.seriesId);
    if (problem) throw invalid(`systemMetadata/seriesId: ${problem}`);
    if (sm.seriesId === pid) throw invalid('systemMetadata/seriesId must differ from the identifier');
  }
  checkHeaderValues(op, sm, pid);
}

/**
 * Values that end up in response headers (mediaType as Content-Type, fileName in
 * Content-Disposition) must be sendable there: refused here rather than failing every
 * later get and describe.
 */
export function checkHeaderValues(op: Operation, sm: SystemMetadata, pid: string): void {
  const problem = (sm.mediaType && mediaTypeProblem(sm.mediaType)) || (sm.fileName !== undefined && fileNameProblem(sm.fileName));
  if (problem) throw fail(op, 'InvalidSystemMetadata', problem, { pid });
}

/** The formatId must be in the federation's format list (CNs fail synchronization otherwise). */
export function checkFormat(op: Operation, sm: SystemMetadata, pid: string): void {
  if (!formatById(sm.formatId)) {
    throw fail(op, 'InvalidSystemMetadata', `systemMetadata/formatId '${sm.formatId}' is not in the federation's format list (CNCore.listFormats)`, { pid });
  }
}

/** A checksum as stored: the algorithm's canonical name, the digest without surrounding blanks. */
export function normalizedChecksum(checksum: Checksum): Checksum {
  return { algorithm: normalizeChecksumAlgorithm(checksum.algorithm) ?? checksum.algorithm.trim(), value: checksum.value.trim() };
}

/** System metadata as the node stores it for a new object: node-set fields filled in. */
export function completeNewSystemMetadata(
  sm: SystemMetadata,
  fields: { submitter: string; now: Date; nodeId: string },
): StoredSystemMetadata {
  return {
    ...sm,
    // Sent in the DataONE-Checksum header and compared by other nodes.
    checksum: normalizedChecksum(sm.checksum),
    serialVersion: 1,
    submitter: fields.submitter,
    dateUploaded: fields.now,
    dateSysMetadataModified: fields.now,
    // A client may create an object already archived (kept, resolvable, not listed as current).
    archived: sm.archived === true,
    originMemberNode: sm.originMemberNode ?? fields.nodeId,
    authoritativeMemberNode: sm.authoritativeMemberNode ?? fields.nodeId,
    // Replica entries describe copies on other nodes; the CN maintains them, not a client.
    replica: [],
  };
}

/**
 * updateSystemMetadata: field ownership from the API reference (SystemMetadata.txt).
 * identifier, size, checksum, submitter, dateUploaded and originMemberNode never change;
 * seriesId, obsoletes and obsoletedBy are set once; archived only goes from false to true.
 * Returns the record to store (serialVersion + 1, dateSysMetadataModified = now).
 */
export function applySystemMetadataUpdate(
  op: Operation,
  current: StoredSystemMetadata,
  incoming: SystemMetadata,
  now: Date,
): StoredSystemMetadata {
  const pid = current.identifier;
  const invalid = (msg: string) => fail(op, 'InvalidSystemMetadata', msg, { pid });
  // The official integration suite expects InvalidRequest (4869) here, where the API allows either.
  if (incoming.identifier !== current.identifier) throw fail(op, 'InvalidRequest', `systemMetadata/identifier '${incoming.identifier}' differs from the pid '${pid}' of the request`, { pid });
  if (incoming.serialVersion !== undefined && incoming.serialVersion < current.serialVersion) {
    throw fail(op, 'InvalidRequest', `systemMetadata/serialVersion ${incoming.serialVersion} is older than the stored ${current.serialVersion}; read the system metadata again and resend`, { pid });
  }
  const immutable = (name: string, a: unknown, b: unknown) => {
    if (b !== undefined && String(a) !== String(b)) throw invalid(`systemMetadata/${name} cannot change (stored '${String(a)}', sent '${String(b)}')`);
  };
  immutable('size', current.size, incoming.size);
  immutable('checksum', `${normalizeChecksumAlgorithm(current.checksum.algorithm)},${current.checksum.value.toLowerCase()}`, `${normalizeChecksumAlgorithm(incoming.checksum.algorithm)},${incoming.checksum.value.toLowerCase()}`);
  immutable('submitter', current.submitter, incoming.submitter);
  immutable('dateUploaded', current.dateUploaded.getTime(), incoming.dateUploaded?.getTime());
  immutable('originMemberNode', current.originMemberNode, incoming.originMemberNode);
  const setOnce = (name: 'seriesId' | 'obsoletes' | 'obsoletedBy') => {
    const was = current[name];
    const now_ = incoming[name];
    if (was !== undefined && now_ !== was) throw invalid(`systemMetadata/${name} is set once and cannot change (stored '${was}')`);
    if (now_ !== undefined) {
      const problem = identifierProblem(now_);
      if (problem) throw invalid(`systemMetadata/${name}: ${problem}`);
    }
  };
  setOnce('seriesId');
  setOnce('obsoletes');
  setOnce('obsoletedBy');
  if (current.archived && incoming.archived === false) throw invalid('systemMetadata/archived cannot go back to false once an object is archived');
  checkFormat(op, incoming, pid);
  checkHeaderValues(op, incoming, pid);
  return {
    ...incoming,
    identifier: current.identifier,
    size: current.size,
    checksum: current.checksum,
    submitter: current.submitter,
    dateUploaded: current.dateUploaded,
    originMemberNode: current.originMemberNode ?? incoming.originMemberNode,
    authoritativeMemberNode: incoming.authoritativeMemberNode ?? current.authoritativeMemberNode,
    archived: current.archived || incoming.archived === true,
    replica: current.replica,
    serialVersion: current.serialVersion + 1,
    dateSysMetadataModified: now,
  } as StoredSystemMetadata;
}
