import { randomUUID } from 'node:crypto';
import { inject, injectable } from 'inversify';
import {
  AdapterError,
  DataONEException,
  DecodeError,
  SystemMetadataCodec,
  exceptionFromXml,
  identifierProblem,
  type MetadataAdapter,
  type PendingWrite,
  type StorageAdapter,
  type StoredSystemMetadata,
  type SystemMetadata,
} from '@memberkit/types';
import type { CoreConfig } from '../config.js';
import type { Clock } from '../clock.js';
import { fail, toDataONEException, type Operation } from '../errors.js';
import type { Logger } from '../logger.js';
import type { CallContext } from '../session.js';
import { TOKENS } from '../tokens.js';
import type { ChangeNotifier } from '../extension.js';
import type { FederationHandle } from '../container.js';
import { AccessControl } from './access-control.js';
import { EventService } from './event-service.js';
import { resolveObject } from './resolve.js';
import { applySystemMetadataUpdate, checkNewObject, completeNewSystemMetadata } from './sysmeta-rules.js';

/** The object part of a create/update, already spooled to storage's temporary area. */
export interface ObjectUpload {
  pending: PendingWrite;
}

/** MNStorage (and the CN notifications MNRead receives): every operation that changes the node. */
@injectable()
export class StorageService {
  constructor(
    @inject(TOKENS.Metadata) private readonly metadata: MetadataAdapter,
    @inject(TOKENS.Storage) private readonly storage: StorageAdapter,
    @inject(TOKENS.AccessControl) private readonly access: AccessControl,
    @inject(TOKENS.Events) private readonly events: EventService,
    @inject(TOKENS.Config) private readonly config: CoreConfig,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(TOKENS.Changes) private readonly changes: ChangeNotifier,
    @inject(TOKENS.Federation) private readonly federation: FederationHandle,
  ) {}

  /** True when this node accepts new content (managed storage and a writable catalogue). */
  get writable(): boolean {
    return this.storage.capabilities.write && !!this.storage.write && this.metadata.capabilities.write && !!this.metadata.apply;
  }

  private requireWritable(op: Operation): void {
    if (!this.writable) throw fail(op, 'NotImplemented', 'this node exposes a read-only archive; it does not accept new content');
  }

  /** Refuse early, before a large body is read: create needs the create policy. */
  assertMayCreate(ctx: CallContext): void {
    this.requireWritable('MNStorage.create');
    if (!this.access.mayCreate(ctx.session)) {
      throw fail('MNStorage.create', 'NotAuthorized', `'${ctx.session.subject}' may not create objects on this node`);
    }
  }

  /** Refuse early: update needs write permission on the object it obsoletes. */
  async assertMayUpdate(ctx: CallContext, pid: string): Promise<void> {
    this.requireWritable('MNStorage.update');
    const old = await resolveObject(this.metadata, 'MNStorage.update', pid, { allowSid: false });
    if (!this.access.allows(ctx.session, old.sysmeta, 'write')) {
      throw fail('MNStorage.update', 'NotAuthorized', `'${ctx.session.subject}' may not update '${pid}'`, { pid });
    }
  }

  /** Refuse early, before the body is read: operations only administrators and CNs may call. */
  assertPrivileged(op: Operation, ctx: CallContext, message: string): void {
    if (!this.access.isPrivileged(ctx.session)) throw fail(op, 'NotAuthorized', message);
  }

  /** Refuse early: generateIdentifier needs an authenticated caller (or one the create policy admits). */
  assertMayGenerateIdentifier(ctx: CallContext): void {
    if (!ctx.session.authenticated && !this.access.mayCreate(ctx.session)) {
      throw fail('MNStorage.generateIdentifier', 'NotAuthorized', 'generateIdentifier needs an authenticated caller');
    }
  }

  /**
   * Refuse early: updateSystemMetadata needs changePermission on the object, which the body
   * names; before reading it, a node that cannot change system metadata or an anonymous
   * caller is refused (changePermission is never granted to an unauthenticated caller here).
   */
  assertMayUpdateSystemMetadata(ctx: CallContext): void {
    const op = 'MNStorage.updateSystemMetadata';
    if (!this.metadata.capabilities.write || !this.metadata.apply) throw fail(op, 'NotImplemented', 'this node cannot change system metadata');
    if (!ctx.session.authenticated) throw fail(op, 'NotAuthorized', 'updateSystemMetadata needs an authenticated caller with changePermission on the object');
  }

  /**
   * Stream an object part into storage's temporary area, hashing as it flows. Size limits
   * surface as InsufficientResources.
   */
  async spool(op: Operation, source: AsyncIterable<Uint8Array>, signal?: AbortSignal): Promise<ObjectUpload> {
    this.requireWritable(op);
    try {
      const pending = await this.storage.write!(source, {
        ...(this.config.maxObjectBytes !== undefined ? { maxBytes: this.config.maxObjectBytes } : {}),
        ...(signal ? { signal } : {}),
      });
      return { pending };
    } catch (err) {
      if (AdapterError.is(err, 'invalid') && this.config.maxObjectBytes !== undefined) {
        throw fail(op, 'InsufficientResources', `the object is larger than this node accepts (${this.config.maxObjectBytes} bytes)`);
      }
      throw err;
    }
  }

  private decodeSysmeta(op: Operation, xml: string | Uint8Array | undefined, pid?: string): SystemMetadata {
    const withPid = pid === undefined ? {} : { pid };
    if (xml === undefined) throw fail(op, 'InvalidRequest', "the 'sysmeta' part is missing", withPid);
    try {
      return SystemMetadataCodec.decode(xml);
    } catch (err) {
      if (DecodeError.is(err)) throw fail(op, 'InvalidSystemMetadata', `the sysmeta part is not valid system metadata: ${err.message}`, withPid);
      throw err;
    }
  }

  private checkPid(op: Operation, pid: string | undefined, part: string): string {
    if (pid === undefined) throw fail(op, 'InvalidRequest', `the '${part}' part is missing`);
    const problem = identifierProblem(pid);
    if (problem) throw fail(op, 'InvalidRequest', `${part}: ${problem}`, { pid });
    return pid;
  }

  /** Commit bytes then catalogue; undo the bytes if the catalogue refuses. Never leaves a half-visible object. */
  private async commit(op: Operation, upload: ObjectUpload, pid: string, change: (storageKey: string) => Parameters<NonNullable<MetadataAdapter['apply']>>[0]): Promise<string> {
    const key = await upload.pending.commit(pid);
    try {
      await this.metadata.apply!(change(key));
      return key;
    } catch (err) {
      await this.storage.delete?.(key).catch((e: unknown) => this.logger.error({ err: e, key }, 'could not remove bytes of a refused write'));
      if (AdapterError.is(err, 'already-exists')) {
        throw fail(op, 'IdentifierNotUnique', `'${pid}' (or its seriesId) is already in use on this node; choose another identifier`, { pid });
      }
      throw err;
    }
  }

  /** A new identifier (PID or SID) must be unused as a PID and as a SID. */
  private async assertUnused(op: Operation, id: string, what: string, exception: 'IdentifierNotUnique' | 'InvalidSystemMetadata' = 'IdentifierNotUnique', pid = id): Promise<void> {
    const use = await this.metadata.identifierUse(id);
    if (use) throw fail(op, exception, `${what} '${id}' is already in use on this node as a ${use === 'pid' ? 'PID' : 'SID'}; choose another`, { pid });
  }

  /**
   * create: "pid must not exist ...; obsoletes and obsoletedBy must not be set; caller must be
   * authorized to write; duplicate gives IdentifierNotUnique."
   */
  async create(ctx: CallContext, input: { pid: string | undefined; sysmeta: string | Uint8Array | undefined; upload: ObjectUpload }): Promise<string> {
    const op = 'MNStorage.create';
    const { upload } = input;
    try {
      this.assertMayCreate(ctx);
      const pid = this.checkPid(op, input.pid, 'pid');
      const sm = this.decodeSysmeta(op, input.sysmeta, pid);
      if (sm.obsoletes !== undefined) throw fail(op, 'InvalidSystemMetadata', 'systemMetadata/obsoletes must not be set on create; use update to make a new version', { pid });
      checkNewObject(op, sm, pid, upload.pending);
      await this.assertUnused(op, pid, 'pid');
      if (sm.seriesId !== undefined) await this.assertUnused(op, sm.seriesId, 'seriesId');
      await this.federation.current?.checkReservation(op, pid, ctx.session);
      const sysmeta = completeNewSystemMetadata(sm, { submitter: ctx.session.subject, now: this.clock.now(), nodeId: this.config.node.identifier });
      const storageKey = await this.commit(op, upload, pid, (key) => ({ insert: [{ sysmeta, storageKey: key, isReplica: false }] }));
      await this.events.record(ctx, 'create', pid);
      await this.changes.emit({ kind: 'create', pid, record: { sysmeta, storageKey, isReplica: false } });
      return pid;
    } finally {
      await upload.pending.abort();
    }
  }

  /** update: the States table's row for "object with obsoletedBy unset". */
  async update(ctx: CallContext, input: { pid: string; newPid: string | undefined; sysmeta: string | Uint8Array | undefined; upload: ObjectUpload }): Promise<string> {
    const op = 'MNStorage.update';
    const { upload, pid } = input;
    try {
      this.requireWritable(op);
      const old = await resolveObject(this.metadata, op, pid, { allowSid: false });
      if (!this.access.allows(ctx.session, old.sysmeta, 'write')) throw fail(op, 'NotAuthorized', `'${ctx.session.subject}' may not update '${pid}'`, { pid });
      const newPid = this.checkPid(op, input.newPid, 'newPid');
      const sm = this.decodeSysmeta(op, input.sysmeta, newPid);
      if (old.sysmeta.archived) throw fail(op, 'InvalidRequest', `'${pid}' is archived; an archived object cannot be updated`, { pid });
      if (old.sysmeta.obsoletedBy !== undefined) {
        throw fail(op, 'InvalidSystemMetadata', `'${pid}' is already obsoleted by '${old.sysmeta.obsoletedBy}'; update the head of the chain instead`, { pid });
      }
      if (sm.obsoletes !== pid) throw fail(op, 'InvalidSystemMetadata', `systemMetadata/obsoletes must equal the pid being updated ('${pid}'), got '${sm.obsoletes ?? ''}'`, { pid: newPid });
      checkNewObject(op, sm, newPid, upload.pending);
      await this.assertUnused(op, newPid, 'newPid');
      await this.federation.current?.checkReservation(op, newPid, ctx.session);
      // A new object continues its predecessor's series, or starts a series with an unused SID;
      // a SID that names another series is a fault of the system metadata (the official
      // integration suite expects InvalidSystemMetadata).
      if (sm.seriesId !== undefined && sm.seriesId !== old.sysmeta.seriesId) await this.assertUnused(op, sm.seriesId, 'systemMetadata/seriesId', 'InvalidSystemMetadata', newPid);
      const now = this.clock.now();
      const sysmeta = completeNewSystemMetadata(sm, { submitter: ctx.session.subject, now, nodeId: this.config.node.identifier });
      const oldNext: StoredSystemMetadata = { ...old.sysmeta, obsoletedBy: newPid, serialVersion: old.sysmeta.serialVersion + 1, dateSysMetadataModified: now };
      const storageKey = await this.commit(op, upload, newPid, (key) => ({
        insert: [{ sysmeta, storageKey: key, isReplica: false }],
        replace: [{ pid, expectedSerialVersion: old.sysmeta.serialVersion, sysmeta: oldNext }],
      }));
      await this.events.record(ctx, 'update', newPid);
      await this.changes.emit({ kind: 'update', pid, record: { ...old, sysmeta: oldNext } });
      await this.changes.emit({ kind: 'create', pid: newPid, record: { sysmeta, storageKey, isReplica: false } });
      return newPid;
    } catch (err) {
      if (AdapterError.is(err, 'conflict')) throw fail(op, 'InvalidRequest', `'${pid}' changed while it was being updated; retry`, { pid });
      throw err;
    } finally {
      await upload.pending.abort();
    }
  }

  /** archive: "bytes kept; object still resolvable; a SID archives its head PID". Twice is InvalidRequest. */
  async archive(ctx: CallContext, id: string): Promise<string> {
    const op = 'MNStorage.archive';
    if (!this.metadata.capabilities.write || !this.metadata.apply) throw fail(op, 'NotImplemented', 'this node cannot change system metadata');
    const record = await resolveObject(this.metadata, op, id, { allowSid: ctx.version === 'v2' });
    const pid = record.sysmeta.identifier;
    if (!this.access.allows(ctx.session, record.sysmeta, 'write')) throw fail(op, 'NotAuthorized', `'${ctx.session.subject}' may not archive '${pid}'`, { pid: id });
    if (record.sysmeta.archived) throw fail(op, 'InvalidRequest', `'${pid}' is already archived`, { pid });
    const sysmeta = { ...record.sysmeta, archived: true, serialVersion: record.sysmeta.serialVersion + 1, dateSysMetadataModified: this.clock.now() };
    await this.applyReplace(op, pid, record.sysmeta.serialVersion, sysmeta);
    await this.events.record(ctx, 'archive', pid);
    await this.changes.emit({ kind: 'archive', pid, record: { ...record, sysmeta } });
    return pid;
  }

  /** delete: administrators and CNs; the catalogue entry goes first, then the bytes. */
  async delete(ctx: CallContext, id: string): Promise<string> {
    const op = 'MNStorage.delete';
    if (!this.metadata.capabilities.write || !this.metadata.apply) throw fail(op, 'NotImplemented', 'this node cannot delete objects');
    const record = await resolveObject(this.metadata, op, id, { allowSid: ctx.version === 'v2' });
    const pid = record.sysmeta.identifier;
    if (!this.access.isPrivileged(ctx.session)) throw fail(op, 'NotAuthorized', `only node administrators and Coordinating Nodes may delete objects ('${ctx.session.subject}' is neither)`, { pid: id });
    await this.metadata.apply({ remove: [{ pid }] });
    if (this.storage.capabilities.delete && this.storage.delete) {
      await this.storage.delete(record.storageKey).catch((err: unknown) => this.logger.error({ err, pid, key: record.storageKey }, 'could not remove bytes of a deleted object'));
    }
    await this.events.record(ctx, 'delete', pid);
    await this.changes.emit({ kind: 'delete', pid });
    return pid;
  }

  /** updateSystemMetadata (v2): changePermission on the object; field ownership in sysmeta-rules. */
  async updateSystemMetadata(ctx: CallContext, input: { pid: string | undefined; sysmeta: string | Uint8Array | undefined }): Promise<true> {
    const op = 'MNStorage.updateSystemMetadata';
    this.assertMayUpdateSystemMetadata(ctx);
    const pid = this.checkPid(op, input.pid, 'pid');
    const record = await resolveObject(this.metadata, op, pid, { allowSid: false });
    if (!this.access.allows(ctx.session, record.sysmeta, 'changePermission')) {
      throw fail(op, 'NotAuthorized', `'${ctx.session.subject}' may not change the system metadata of '${pid}'`, { pid });
    }
    const incoming = this.decodeSysmeta(op, input.sysmeta, pid);
    const next = applySystemMetadataUpdate(op, record.sysmeta, incoming, this.clock.now());
    if (next.seriesId !== undefined && record.sysmeta.seriesId === undefined) await this.assertUnused(op, next.seriesId, 'systemMetadata/seriesId', 'InvalidSystemMetadata', pid);
    await this.applyReplace(op, pid, record.sysmeta.serialVersion, next);
    await this.events.record(ctx, 'updateSystemMetadata', pid);
    await this.changes.emit({ kind: 'updateSystemMetadata', pid, record: { ...record, sysmeta: next } });
    return true;
  }

  private async applyReplace(op: Operation, pid: string, expectedSerialVersion: number, sysmeta: StoredSystemMetadata): Promise<void> {
    try {
      await this.metadata.apply!({ replace: [{ pid, expectedSerialVersion, sysmeta }] });
    } catch (err) {
      if (AdapterError.is(err, 'conflict')) throw fail(op, 'InvalidRequest', `'${pid}' changed while this request was processed; read it again and retry`, { pid });
      if (AdapterError.is(err, 'already-exists')) throw fail(op, 'InvalidSystemMetadata', `the seriesId of '${pid}' is already in use; choose another`, { pid });
      throw err;
    }
  }

  /** generateIdentifier: only the UUID scheme; the fragment is ignored. */
  async generateIdentifier(ctx: CallContext, scheme: string | undefined): Promise<string> {
    const op = 'MNStorage.generateIdentifier';
    this.assertMayGenerateIdentifier(ctx);
    if (scheme === undefined || scheme.trim().toUpperCase() !== 'UUID') {
      throw fail(op, 'InvalidRequest', `unsupported identifier scheme '${scheme ?? ''}'; this node supports scheme=UUID`);
    }
    for (;;) {
      const id = `urn:uuid:${randomUUID()}`;
      if (!(await this.metadata.identifierUse(id))) return id;
    }
  }

  /** systemMetadataChanged: accepted from CNs, recorded, and (with a CN configured) queued: the CN's copy is fetched and applied when newer. */
  async systemMetadataChanged(ctx: CallContext, input: { id: string | undefined; serialVersion: string | undefined; dateSysMetaLastModified: string | undefined }): Promise<true> {
    const op = 'MNRead.systemMetadataChanged';
    if (!this.access.isPrivileged(ctx.session)) throw fail(op, 'NotAuthorized', 'only Coordinating Nodes may call systemMetadataChanged');
    const id = input.id;
    if (id === undefined || identifierProblem(id)) throw fail(op, 'InvalidRequest', "the 'pid' (or 'id') part must hold the identifier whose system metadata changed");
    if (input.serialVersion === undefined || !/^\d+$/.test(input.serialVersion.trim())) throw fail(op, 'InvalidRequest', "the 'serialVersion' part must be an unsigned integer", { pid: id });
    const record = await resolveObject(this.metadata, op, id, { allowSid: true }).catch((err: unknown) => {
      if (DataONEException.is(err) && err.exceptionName === 'NotFound') throw fail(op, 'InvalidRequest', `no object '${id}' on this node`, { pid: id });
      throw err;
    });
    this.logger.info({ pid: record.sysmeta.identifier, serialVersion: input.serialVersion, date: input.dateSysMetaLastModified }, 'systemMetadataChanged received');
    await this.events.record(ctx, 'systemMetadataChanged', record.sysmeta.identifier);
    await this.federation.current?.enqueueRefresh(record.sysmeta.identifier);
    return true;
  }

  /** synchronizationFailed: the CN's SynchronizationFailed exception, recorded in the event log. */
  async synchronizationFailed(ctx: CallContext, message: string | Uint8Array | undefined): Promise<true> {
    const op = 'MNRead.synchronizationFailed';
    if (!this.access.isPrivileged(ctx.session)) throw fail(op, 'NotAuthorized', 'only Coordinating Nodes may report synchronization failures');
    if (message === undefined) throw fail(op, 'InvalidRequest', "the 'message' part is missing");
    let reported: DataONEException;
    try {
      reported = exceptionFromXml(message);
    } catch (err) {
      throw fail(op, 'InvalidRequest', `the 'message' part is not a DataONE error document: ${(err as Error).message}`);
    }
    const pid = reported.pid ?? '';
    this.logger.warn({ pid, detailCode: reported.detailCode, description: reported.description }, 'a Coordinating Node could not synchronize an object');
    if (pid) await this.events.record(ctx, 'synchronization_failed', pid);
    const report = {
      pid,
      detailCode: reported.detailCode,
      description: reported.description,
      ...(reported.nodeId !== undefined ? { nodeId: reported.nodeId } : {}),
      body: typeof message === 'string' ? message : Buffer.from(message).toString('utf8'),
      receivedAt: new Date().toISOString(),
      reportedBy: ctx.session.subject,
    };
    if (this.federation.current) await this.federation.current.enqueueSyncFailure(report);
    return true;
  }
}

export { toDataONEException };
