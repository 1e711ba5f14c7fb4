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
import { OPERATIONS } from '../protocol/operations.js';
import { SYSMETA_FIELDS, takeFields } from '../protocol/sysmeta-fields.js';
import { nextRevision } from '../protocol/revision.js';

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
 * updateSystemMetadata: field ownership from the API reference (SystemMetadata.txt), as the
 * field table (SYSMETA_FIELDS) holds it: identifier, size, checksum, submitter, dateUploaded
 * and originMemberNode never change; seriesId, obsoletes and obsoletedBy are set once;
 * archived only goes from false to true. Returns the record to store, its revision moved
 * by `nextRevision`.
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
  // How each fixed field compares (absent in the request: unchanged).
  const fixedValue: Record<string, (sm: SystemMetadata) => unknown> = {
    checksum: (sm) => `${normalizeChecksumAlgorithm(sm.checksum.algorithm)},${sm.checksum.value.toLowerCase()}`,
    dateUploaded: (sm) => sm.dateUploaded?.getTime(),
  };
  for (const [name, rule] of Object.entries(SYSMETA_FIELDS) as Array<[keyof SystemMetadata, string]>) {
    const was = current[name];
    const sent = incoming[name];
    if (rule === 'fixed' && name !== 'identifier') {
      const value = fixedValue[name] ?? ((sm: SystemMetadata) => sm[name]);
      const a = value(current);
      const b = value(incoming);
      if (b !== undefined && String(a) !== String(b)) throw invalid(`systemMetadata/${name} cannot change (stored '${String(a)}', sent '${String(b)}')`);
    } else if (rule === 'once') {
      if (was !== undefined && sent !== was) throw invalid(`systemMetadata/${name} is set once and cannot change (stored '${String(was)}')`);
      if (sent !== undefined) {
        const problem = identifierProblem(String(sent));
        if (problem) throw invalid(`systemMetadata/${name}: ${problem}`);
      }
    } else if (rule === 'forward' && was === true && sent === false) {
      throw invalid(`systemMetadata/${name} cannot go back to false once an object is archived`);
    }
  }
  checkFormat(op, incoming, pid);
  checkHeaderValues(op, incoming, pid);
  const changes = takeFields(
    current,
    {
      ...incoming,
      archived: current.archived || incoming.archived === true,
      // Absent: the stored value stays (a client rarely resends it).
      authoritativeMemberNode: incoming.authoritativeMemberNode ?? current.authoritativeMemberNode,
    } as Partial<StoredSystemMetadata>,
    OPERATIONS['MNStorage.updateSystemMetadata'].changes,
  );
  return nextRevision(current, changes, now);
}
