import {
  AdapterError,
  OCTET_STREAM_FORMAT_ID,
  identifierProblem,
  nextRevision,
  normalizeChecksumAlgorithm,
  type ApiVersion,
  type CatalogueChange,
  type ObjectRecord,
  type StoredSystemMetadata,
  type SystemMetadata,
} from '@memberkit/types';
import {
  actorOf,
  applySystemMetadataUpdate,
  checkHeaderValues,
  checkNewObject,
  completeNewSystemMetadata,
  decodeSysmetaPart,
  fail,
  normalizedChecksum,
  removeUnreferencedBytes,
  resolveObject,
  storedButUnconfirmed,
  type CallContext,
  type ObjectChange,
  type Operation,
} from '@memberkit/core';
import type { ObjectUpload } from './upload.js';
import type { CnServices } from './services.js';

/** The subject of the tombstone a CN delete leaves: "the PID/SID stays in use". */
export const DELETED_SUBJECT = 'memberkit:deleted';
/** A tombstone never expires. */
const FOREVER = 8_640_000_000_000_000 - Date.now();

/** "private to CNs": the CN's own subjects (its peers) and its administrators. */
function requirePrivileged(s: CnServices, op: Operation, ctx: CallContext, what: string, pid?: string): void {
  if (!s.access.isPrivileged(ctx.session)) {
    throw fail(op, 'NotAuthorized', `${what} is private to Coordinating Nodes: '${ctx.session.subject}' is neither a CN subject nor a CN administrator`, pid === undefined ? {} : { pid });
  }
}

/** The identifier of a request part, checked ("identifier syntax: PIDs.txt"). */
export function requireIdentifier(op: Operation, value: string | undefined, part: string): string {
  if (value === undefined) throw fail(op, 'InvalidRequest', `the '${part}' part is missing`);
  const problem = identifierProblem(value);
  if (problem) throw fail(op, 'InvalidRequest', `${part}: ${problem}`, { pid: value });
  return value;
}

/** A serialVersion request part: an unsigned integer. */
export function requireSerialVersion(op: Operation, value: string | undefined, pid: string): number {
  if (value === undefined || !/^\s*\d+\s*$/.test(value)) throw fail(op, 'InvalidRequest', "the 'serialVersion' part must be the unsigned integer serialVersion of the system metadata the change is based on", { pid });
  return Number(value);
}

/** "v2 serialVersion checks": a change based on another revision than the stored one is refused. */
export function requireCurrentVersion(op: Operation, record: ObjectRecord, serialVersion: number): void {
  const current = record.sysmeta.serialVersion;
  if (serialVersion !== current) {
    throw fail(op, 'VersionMismatch', `serialVersion ${serialVersion} is not the current serialVersion ${current} of '${record.sysmeta.identifier}'; read the system metadata again and resend`, { pid: record.sysmeta.identifier });
  }
}


/**
 * The CN-private operations that change its authoritative copies (CNCore create,
 * registerSystemMetadata, updateSystemMetadata, setObsoletedBy, archive, delete) and the
 * CN-side authorization changes' commit. Every change goes through the core's CatalogueWriter
 * (its event in the change's transaction).
 */
export class CnWrites {
  constructor(private readonly s: CnServices) {}

  /** The formatId must be in the CN's format list (the vendored list plus formats an administrator added). */
  private async requireKnownFormat(op: Operation, sm: SystemMetadata, pid: string): Promise<void> {
    if (!(await this.s.formats.get(sm.formatId))) {
      throw fail(op, 'InvalidSystemMetadata', `systemMetadata/formatId '${sm.formatId}' is not in this Coordinating Node's format list (CNCore.listFormats)`, { pid });
    }
  }

  /**
   * A new identifier must be unused as a PID or SID and not held by another subject's
   * reservation or a deleted object's tombstone.
   */
  private async requireUnused(op: Operation, id: string, what: string, pid = id, exception: 'IdentifierNotUnique' | 'InvalidSystemMetadata' | 'InvalidRequest' = 'IdentifierNotUnique'): Promise<void> {
    const use = await this.s.metadata.identifierUse(id);
    if (use) throw fail(op, exception, `${what} '${id}' is already in use as a ${use === 'pid' ? 'PID' : 'SID'}; choose another`, { pid });
    const reservation = await this.s.reservations.get(id, this.s.clock.now());
    if (reservation?.subject === DELETED_SUBJECT) throw fail(op, exception, `${what} '${id}' belonged to an object deleted from the federation; an identifier is never reused`, { pid });
  }

  /**
   * "Later create/update calls for [a reserved identifier] must come from the same principal":
   * the object's submitter (on whose behalf the CN records it; default the caller) or one of
   * its equivalent identities must hold a live reservation of `id`.
   */
  private async requireReservationHolder(op: Operation, id: string, principal: string, pid: string): Promise<void> {
    const reservation = await this.s.reservations.get(id, this.s.clock.now());
    if (reservation === undefined || reservation.subject === DELETED_SUBJECT) return;
    if ((await this.s.subjects.expand(principal)).has(reservation.subject)) return;
    throw fail(op, 'NotAuthorized', `'${id}' is reserved by another subject until its reservation expires; only '${reservation.subject}' (or its equivalent identities) may submit it`, { pid });
  }

  /** Commit one change with its event; `conflict` and `already-exists` surface as the operation's exceptions. */
  private async commit(ctx: CallContext, op: Operation, pid: string, change: CatalogueChange, event: string, notices: ObjectChange[], intents: readonly string[] = []): Promise<void> {
    try {
      await this.s.writer.commit({
        change,
        events: [{ event, pid }],
        actor: actorOf(ctx),
        notices,
        intents,
      });
    } catch (err) {
      if (AdapterError.is(err, 'conflict')) throw fail(op, 'InvalidRequest', `'${pid}' changed while this request was processed; read it again and retry`, { pid });
      if (AdapterError.is(err, 'already-exists')) throw fail(op, op === 'CNCore.create' ? 'IdentifierNotUnique' : 'InvalidRequest', `'${pid}' (or its seriesId) is already in use; choose another identifier`, { pid });
      throw err;
    }
  }

  /** Refuse before reading a body: the caller of a CN-private operation. */
  assertPrivileged(op: Operation, ctx: CallContext, what: string): void {
    requirePrivileged(this.s, op, ctx, what);
  }

  /**
   * create: "identifier equal to pid; private". The CN holds the bytes (science metadata and
   * resource maps are stored on the CN); the system metadata's authoritative and origin
   * Member Nodes are kept as sent (default: this CN).
   */
  async create(ctx: CallContext, input: { pid: string | undefined; sysmeta: string | Uint8Array | undefined; upload: ObjectUpload }): Promise<string> {
    const op = 'CNCore.create';
    const { upload } = input;
    try {
      requirePrivileged(this.s, op, ctx, 'create');
      const pid = requireIdentifier(op, input.pid, 'pid');
      const sm = decodeSysmetaPart(op, input.sysmeta, pid);
      await this.requireKnownFormat(op, sm, pid);
      // The core's checks of a new object, with the format already checked against the CN's own list.
      checkNewObject(op, { ...sm, formatId: OCTET_STREAM_FORMAT_ID }, pid, upload.pending);
      await this.requireUnused(op, pid, 'pid');
      if (sm.seriesId !== undefined) await this.requireUnused(op, sm.seriesId, 'seriesId', pid);
      await this.requireReservationHolder(op, pid, sm.submitter ?? ctx.session.subject, pid);
      const sysmeta = completeNewSystemMetadata(sm, { submitter: sm.submitter ?? ctx.session.subject, now: this.s.clock.now(), nodeId: this.s.config.node.identifier });
      const intent = await this.s.writer.intend(pid);
      const storageKey = await upload.pending.commit(pid);
      const record = { sysmeta, storageKey, isReplica: false };
      try {
        await this.commit(ctx, op, pid, { insert: [record] }, 'create', [{ kind: 'create', pid, record }], intent === undefined ? [] : [intent]);
      } catch (err) {
        if ((await removeUnreferencedBytes(this.s, pid, storageKey, err)) === 'committed') throw storedButUnconfirmed(op, pid);
        throw err;
      }
      await this.s.reservations.release(pid);
      return pid;
    } finally {
      await upload.pending.abort();
    }
  }

  /**
   * registerSystemMetadata: "the pid updated; used internally". The CN records an object
   * held by Member Nodes: system metadata only, no bytes here (storage key '').
   */
  async registerSystemMetadata(ctx: CallContext, input: { pid: string | undefined; sysmeta: string | Uint8Array | undefined }): Promise<string> {
    const op = 'CNCore.registerSystemMetadata';
    requirePrivileged(this.s, op, ctx, 'registerSystemMetadata');
    const pid = requireIdentifier(op, input.pid, 'pid');
    const sm = decodeSysmetaPart(op, input.sysmeta, pid);
    const invalid = (msg: string) => fail(op, 'InvalidSystemMetadata', msg, { pid });
    if (sm.identifier !== pid) throw invalid(`systemMetadata/identifier '${sm.identifier}' differs from the pid '${pid}' of the request`);
    await this.requireKnownFormat(op, sm, pid);
    if (!normalizeChecksumAlgorithm(sm.checksum.algorithm)) throw invalid(`systemMetadata/checksum/@algorithm '${sm.checksum.algorithm}' is not supported; use SHA-1, MD5 or SHA-256`);
    if (sm.seriesId !== undefined) {
      const problem = identifierProblem(sm.seriesId);
      if (problem) throw invalid(`systemMetadata/seriesId: ${problem}`);
      if (sm.seriesId === pid) throw invalid('systemMetadata/seriesId must differ from the identifier');
    }
    const authoritative = sm.authoritativeMemberNode ?? sm.originMemberNode;
    if (authoritative === undefined) throw invalid('systemMetadata/authoritativeMemberNode (or originMemberNode) must name the Member Node that holds the object');
    checkHeaderValues(op, sm, pid);
    await this.requireUnused(op, pid, 'pid', pid, 'InvalidRequest');
    await this.requireReservationHolder(op, pid, sm.submitter ?? sm.rightsHolder, pid);
    // A registered object may continue a series already known here; a SID may not be a PID.
    if (sm.seriesId !== undefined && (await this.s.metadata.identifierUse(sm.seriesId)) !== 'sid') await this.requireUnused(op, sm.seriesId, 'seriesId', pid, 'InvalidSystemMetadata');
    const now = this.s.clock.now();
    // The Member Node's record as it stands: its revision, dates and replicas are kept.
    const sysmeta: StoredSystemMetadata = {
      ...sm,
      checksum: normalizedChecksum(sm.checksum),
      serialVersion: sm.serialVersion ?? 1,
      submitter: sm.submitter ?? sm.rightsHolder,
      dateUploaded: sm.dateUploaded ?? now,
      dateSysMetadataModified: sm.dateSysMetadataModified ?? now,
      archived: sm.archived === true,
      originMemberNode: sm.originMemberNode ?? authoritative,
      authoritativeMemberNode: authoritative,
      replica: sm.replica ?? [],
    };
    const record = { sysmeta, storageKey: '', isReplica: false };
    // Logged as the object's arrival in the CN's catalogue (a v1 Event too).
    await this.commit(ctx, op, pid, { insert: [record] }, 'create', [{ kind: 'create', pid, record }]);
    await this.s.reservations.release(pid);
    return pid;
  }

  /**
   * updateSystemMetadata (v2): "intended for CNs; serial version and replica list in the new
   * record are ignored": the stored replicas stay, and the serialVersion sent, when present,
   * must be the current one (VersionMismatch otherwise). Field ownership as on a Member Node (identifier, size, checksum,
   * submitter, dateUploaded, originMemberNode fixed; seriesId, obsoletes, obsoletedBy set
   * once; archived only forward); the stored replicas stay.
   */
  async updateSystemMetadata(ctx: CallContext, input: { pid: string | undefined; sysmeta: string | Uint8Array | undefined }): Promise<true> {
    const op = 'CNCore.updateSystemMetadata';
    requirePrivileged(this.s, op, ctx, 'updateSystemMetadata');
    const pid = requireIdentifier(op, input.pid, 'pid');
    const record = await resolveObject(this.s.metadata, op, pid, 'v2');
    const incoming = decodeSysmetaPart(op, input.sysmeta, pid);
    // The sent serialVersion is not taken as the new one (the CN moves it); it names the
    // revision the change was made on, and a change made on another revision is refused.
    if (incoming.serialVersion !== undefined) requireCurrentVersion(op, record, incoming.serialVersion);
    await this.requireKnownFormat(op, incoming, pid);
    const { serialVersion: _ignored, ...fields } = incoming;
    const next = applySystemMetadataUpdate(op, record.sysmeta, { ...fields, replica: record.sysmeta.replica, formatId: OCTET_STREAM_FORMAT_ID }, this.s.clock.now());
    const sysmeta = { ...next, formatId: incoming.formatId };
    if (sysmeta.seriesId !== undefined && record.sysmeta.seriesId === undefined) await this.requireUnused(op, sysmeta.seriesId, 'systemMetadata/seriesId', pid, 'InvalidSystemMetadata');
    await this.replace(ctx, op, record, sysmeta, 'updateSystemMetadata');
    return true;
  }

  /** setObsoletedBy: "sets obsoletedBy; private", based on the caller's serialVersion. */
  async setObsoletedBy(ctx: CallContext, input: { pid: string; obsoletedByPid: string | undefined; serialVersion: string | undefined }): Promise<true> {
    const op = 'CNCore.setObsoletedBy';
    requirePrivileged(this.s, op, ctx, 'setObsoletedBy', input.pid);
    const by = requireIdentifier(op, input.obsoletedByPid, 'obsoletedByPid');
    const serialVersion = requireSerialVersion(op, input.serialVersion, input.pid);
    const record = await resolveObject(this.s.metadata, op, input.pid, ctx.version);
    const pid = record.sysmeta.identifier;
    requireCurrentVersion(op, record, serialVersion);
    if (by === pid) throw fail(op, 'InvalidRequest', `an object cannot obsolete itself ('${pid}')`, { pid });
    if (record.sysmeta.obsoletedBy !== undefined) {
      if (record.sysmeta.obsoletedBy === by) return true;
      throw fail(op, 'InvalidRequest', `'${pid}' is already obsoleted by '${record.sysmeta.obsoletedBy}'; obsoletedBy is set once`, { pid });
    }
    await this.replace(ctx, op, record, nextRevision(record.sysmeta, { obsoletedBy: by }, this.s.clock.now()), 'updateSystemMetadata');
    return true;
  }

  /** archive: "archived identifier; private". An archived object stays readable and resolvable. */
  async archive(ctx: CallContext, id: string, version: ApiVersion): Promise<string> {
    const op = 'CNCore.archive';
    requirePrivileged(this.s, op, ctx, 'archive', id);
    const record = await resolveObject(this.s.metadata, op, id, version);
    const pid = record.sysmeta.identifier;
    if (record.sysmeta.archived) throw fail(op, 'InvalidRequest', `'${pid}' is already archived`, { pid });
    await this.replace(ctx, op, record, nextRevision(record.sysmeta, { archived: true }, this.s.clock.now()), 'archive', 'archive');
    return pid;
  }

  /**
   * delete: "removes the object from the whole system; the PID/SID stays in use; no longer
   * resolvable or retrievable; administrators only". A tombstone reservation keeps the
   * identifiers from being reused.
   */
  async delete(ctx: CallContext, id: string, version: ApiVersion): Promise<string> {
    const op = 'CNCore.delete';
    if (!this.s.access.isAdministrator(ctx.session) && !this.s.access.isCoordinatingNode(ctx.session)) {
      throw fail(op, 'NotAuthorized', `only Coordinating Node administrators may delete objects ('${ctx.session.subject}' is not one)`, { pid: id });
    }
    const record = await resolveObject(this.s.metadata, op, id, version);
    const pid = record.sysmeta.identifier;
    await this.commit(ctx, op, pid, { remove: [{ pid }] }, 'delete', [{ kind: 'delete', pid }]);
    const now = this.s.clock.now();
    for (const kept of [pid, ...(record.sysmeta.seriesId !== undefined && (await this.s.metadata.seriesMembers(record.sysmeta.seriesId)).length === 0 ? [record.sysmeta.seriesId] : [])]) {
      await this.s.reservations.release(kept);
      await this.s.reservations.reserve(kept, DELETED_SUBJECT, now, FOREVER);
    }
    if (record.storageKey !== '' && this.s.storage.capabilities.delete && this.s.storage.delete) {
      await this.s.storage.delete(record.storageKey).catch((err: unknown) => this.s.logger.error({ err, pid, key: record.storageKey }, 'could not remove bytes of a deleted object'));
    }
    return pid;
  }

  /** Replace one record (compare-and-set on its serialVersion), with its event and notice. */
  async replace(ctx: CallContext, op: Operation, record: ObjectRecord, sysmeta: StoredSystemMetadata, event: string, kind: ObjectChange['kind'] = 'updateSystemMetadata'): Promise<void> {
    const pid = record.sysmeta.identifier;
    await this.commit(ctx, op, pid, { replace: [{ pid, expectedSerialVersion: record.sysmeta.serialVersion, sysmeta }] }, event, [{ kind, pid, record: { ...record, sysmeta } }]);
  }
}
