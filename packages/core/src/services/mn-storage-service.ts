import { randomUUID } from 'node:crypto';
import { inject, injectable } from 'inversify';
import {
  AdapterError,
  DataONEException,
  exceptionFromXml,
  identifierProblem,
  type CatalogueChange,
  type CatalogueAdapter,
  type ObjectRecord,
  type PendingWrite,
  type StorageAdapter,
  type StoredSystemMetadata,
} from '@memberkit/types';
import type { CoreConfig } from '../config.js';
import type { Clock } from '../clock.js';
import { fail, storedButUnconfirmed, toDataONEException, type Operation } from '../errors.js';
import type { Logger } from '../logger.js';
import { actorOf, type CallContext } from '../session.js';
import { TOKENS } from '../tokens.js';
import type { ObjectChange } from '../extension.js';
import type { FederationHandle } from '../container.js';
import { AccessControl } from './access-control.js';
import { EventService } from './event-service.js';
import type { CatalogueWriter } from './catalogue-writer.js';
import { resolveObject } from './resolve.js';
import { applySystemMetadataUpdate, checkNewObject, completeNewSystemMetadata } from './sysmeta-rules.js';
import { catalogueSupports, changeableFields, OPERATIONS } from '../protocol/operations.js';
import { changedFields } from '../protocol/sysmeta-fields.js';
import { nextRevision } from '../protocol/revision.js';
import { receiveUpload } from '../protocol/upload.js';
import { decodeSysmetaPart } from '../protocol/sysmeta-part.js';
import { removeUnreferencedBytes } from './refused-write.js';

/** The object part of a create/update, already spooled to storage's temporary area. */
export interface ObjectUpload {
  pending: PendingWrite;
}

/** A new identifier of a write, and what to answer when it is in use (IdentifierNotUnique on `id` unless said). */
interface UnusedIdentifier {
  id: string;
  /** Names it in the answer ('pid', 'seriesId', ...). */
  what: string;
  exception?: 'IdentifierNotUnique' | 'InvalidSystemMetadata';
  /** The pid the exception names. */
  pid?: string;
}

/** A write's PID or SID turned out to be in use when the catalogue recorded it (no read named which). */
function identifierTaken(op: Operation, pid: string): DataONEException {
  return fail(op, 'IdentifierNotUnique', `'${pid}' (or its seriesId) is already in use on this node; choose another identifier`, { pid });
}

/** MNStorage (and the CN notifications MNRead receives): every operation that changes the node. */
@injectable()
export class MNStorageService {
  constructor(
    @inject(TOKENS.Catalogue) private readonly metadata: CatalogueAdapter,
    @inject(TOKENS.Storage) private readonly storage: StorageAdapter,
    @inject(TOKENS.AccessControl) private readonly access: AccessControl,
    @inject(TOKENS.Events) private readonly events: EventService,
    @inject(TOKENS.Config) private readonly config: CoreConfig,
    @inject(TOKENS.Clock) private readonly clock: Clock,
    @inject(TOKENS.Logger) private readonly logger: Logger,
    @inject(TOKENS.Writer) private readonly writer: CatalogueWriter,
    @inject(TOKENS.Federation) private readonly federation: FederationHandle,
  ) {}

  /** True when this node accepts new content (managed storage and a writable catalogue). */
  get writable(): boolean {
    return this.storage.capabilities.write && !!this.storage.openTemp && catalogueSupports(this.metadata, 'MNStorage.create');
  }

  private requireWritable(op: Operation): void {
    if (!this.writable) throw fail(op, 'NotImplemented', 'this node exposes a read-only archive; it does not accept new content');
  }

  /** Refuse an operation the catalogue's capabilities do not allow (write, or overlay for the fields it keeps). */
  private requireCatalogue(op: Operation, message: string): void {
    if (!catalogueSupports(this.metadata, op)) throw fail(op, 'NotImplemented', message);
  }

  /** The caller must meet `op`'s requirement in the operation table (on `record` for object permissions). */
  private requireAllowed(op: Operation, ctx: CallContext, message: string, record?: ObjectRecord, pid?: string): void {
    if (!this.access.meets(ctx.session, OPERATIONS[op].permission, record?.sysmeta)) throw fail(op, 'NotAuthorized', message, pid === undefined ? {} : { pid });
  }

  /** Commit a change through the CatalogueWriter: the change, its event and the extensions' notices in one call. */
  private async commitChange(ctx: CallContext, change: CatalogueChange, event: { event: string; pid: string }, notices: ObjectChange[], intents: readonly string[] = []): Promise<void> {
    await this.writer.commit({
      change,
      events: [event],
      actor: actorOf(ctx),
      notices,
      intents,
    });
  }

  /** Refuse early, before a large body is read: create needs the create policy. */
  assertMayCreate(ctx: CallContext): void {
    this.requireWritable('MNStorage.create');
    this.requireAllowed('MNStorage.create', ctx, `'${ctx.session.subject}' may not create objects on this node`);
  }

  /** Refuse early: update needs write permission on the object it obsoletes. */
  async assertMayUpdate(ctx: CallContext, pid: string): Promise<void> {
    this.requireWritable('MNStorage.update');
    const old = await resolveObject(this.metadata, 'MNStorage.update', pid, ctx.version);
    this.requireAllowed('MNStorage.update', ctx, `'${ctx.session.subject}' may not update '${pid}'`, old, pid);
  }

  /**
   * Refuse early, before the body is read, a caller who does not meet `op`'s requirement in
   * the operation table (for requirements that need no object: privileged, create, ...).
   */
  assertAllowed(op: Operation, ctx: CallContext, message: string): void {
    this.requireAllowed(op, ctx, message);
  }

  /** Refuse early: generateIdentifier needs an authenticated caller (or one the create policy admits). */
  assertMayGenerateIdentifier(ctx: CallContext): void {
    this.requireAllowed('MNStorage.generateIdentifier', ctx, 'generateIdentifier needs an authenticated caller');
  }

  /**
   * Refuse early: updateSystemMetadata needs changePermission on the object, which the body
   * names; before reading it, a node that cannot change system metadata or an anonymous
   * caller is refused (changePermission is never granted to an unauthenticated caller here).
   */
  assertMayUpdateSystemMetadata(ctx: CallContext): void {
    const op = 'MNStorage.updateSystemMetadata';
    this.requireCatalogue(op, 'this node cannot change system metadata');
    if (!ctx.session.authenticated) throw fail(op, 'NotAuthorized', 'updateSystemMetadata needs an authenticated caller with changePermission on the object');
  }

  /**
   * Stream an object part into storage's temporary area, hashing as it flows. Size limits
   * surface as InsufficientResources.
   */
  async spool(op: Operation, source: AsyncIterable<Uint8Array>, signal?: AbortSignal): Promise<ObjectUpload> {
    this.requireWritable(op);
    try {
      const pending = await receiveUpload(this.storage, source, {
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

  private checkPid(op: Operation, pid: string | undefined, part: string): string {
    if (pid === undefined) throw fail(op, 'InvalidRequest', `the '${part}' part is missing`);
    const problem = identifierProblem(pid);
    if (problem) throw fail(op, 'InvalidRequest', `${part}: ${problem}`, { pid });
    return pid;
  }

  /**
   * Commit bytes then catalogue (with the event and notices, through the CatalogueWriter);
   * undo the bytes if the catalogue refuses. Never leaves a half-visible object. `unused` are
   * the new identifiers, checked before the bytes are committed.
   */
  private async commit(ctx: CallContext, op: Operation, upload: ObjectUpload, pid: string, unused: readonly UnusedIdentifier[], build: (storageKey: string) => { change: CatalogueChange; event: { event: string; pid: string }; notices: ObjectChange[] }): Promise<string> {
    // The intent outlives the bytes only if the catalogue commit never happens: the sweep then removes them.
    const intent = await this.intendUnused(op, pid, unused);
    const key = await upload.pending.commit(pid);
    const { change, event, notices } = build(key);
    try {
      await this.commitChange(ctx, change, event, notices, intent === undefined ? [] : [intent]);
      return key;
    } catch (err) {
      const bytes = await removeUnreferencedBytes({ metadata: this.metadata, storage: this.storage, logger: this.logger }, pid, key, err);
      if (AdapterError.is(err, 'already-exists')) {
        throw identifierTaken(op, pid);
      }
      if (bytes === 'committed') throw storedButUnconfirmed(op, pid);
      throw err;
    }
  }

  /**
   * The write intent of `pid`'s bytes, recorded only while every `unused` identifier is unused:
   * a catalogue with intents checks them in the intent's own statement (no read before it);
   * without intents, each is read. An identifier in use fails with the exception its check names.
   */
  private async intendUnused(op: Operation, pid: string, unused: readonly UnusedIdentifier[]): Promise<string | undefined> {
    if (!this.writer.keepsIntents) {
      for (const u of unused) await this.assertUnused(op, u);
      return undefined;
    }
    try {
      return await this.writer.intend(pid, unused.map((u) => u.id));
    } catch (err) {
      if (!AdapterError.is(err, 'already-exists')) throw err;
      // Which one, for the caller: read them (only on this path).
      for (const u of unused) await this.assertUnused(op, u);
      throw identifierTaken(op, pid);
    }
  }

  /** A new identifier (PID or SID) must be unused as a PID and as a SID. */
  private async assertUnused(op: Operation, { id, what, exception = 'IdentifierNotUnique', pid = id }: UnusedIdentifier): Promise<void> {
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
      const sm = decodeSysmetaPart(op, input.sysmeta, pid);
      if (sm.obsoletes !== undefined) throw fail(op, 'InvalidSystemMetadata', 'systemMetadata/obsoletes must not be set on create; use update to make a new version', { pid });
      checkNewObject(op, sm, pid, upload.pending);
      const unused: UnusedIdentifier[] = [{ id: pid, what: 'pid' }];
      if (sm.seriesId !== undefined) unused.push({ id: sm.seriesId, what: 'seriesId' });
      await this.federation.current?.checkReservation(op, pid, ctx.session);
      const sysmeta = completeNewSystemMetadata(sm, { submitter: ctx.session.subject, now: this.clock.now(), nodeId: this.config.node.identifier });
      await this.commit(ctx, op, upload, pid, unused, (storageKey) => ({
        change: { insert: [{ sysmeta, storageKey, isReplica: false }] },
        event: { event: 'create', pid },
        notices: [{ kind: 'create', pid, record: { sysmeta, storageKey, isReplica: false } }],
      }));
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
      const old = await resolveObject(this.metadata, op, pid, ctx.version);
      this.requireAllowed(op, ctx, `'${ctx.session.subject}' may not update '${pid}'`, old, pid);
      const newPid = this.checkPid(op, input.newPid, 'newPid');
      const sm = decodeSysmetaPart(op, input.sysmeta, newPid);
      if (old.sysmeta.archived) throw fail(op, 'InvalidRequest', `'${pid}' is archived; an archived object cannot be updated`, { pid });
      if (old.sysmeta.obsoletedBy !== undefined) {
        throw fail(op, 'InvalidSystemMetadata', `'${pid}' is already obsoleted by '${old.sysmeta.obsoletedBy}'; update the head of the chain instead`, { pid });
      }
      if (sm.obsoletes !== pid) throw fail(op, 'InvalidSystemMetadata', `systemMetadata/obsoletes must equal the pid being updated ('${pid}'), got '${sm.obsoletes ?? ''}'`, { pid: newPid });
      checkNewObject(op, sm, newPid, upload.pending);
      const unused: UnusedIdentifier[] = [{ id: newPid, what: 'newPid' }];
      // A new object continues its predecessor's series, or starts a series with an unused SID;
      // a SID that names another series is a fault of the system metadata (the official
      // integration suite expects InvalidSystemMetadata).
      if (sm.seriesId !== undefined && sm.seriesId !== old.sysmeta.seriesId) unused.push({ id: sm.seriesId, what: 'systemMetadata/seriesId', exception: 'InvalidSystemMetadata', pid: newPid });
      await this.federation.current?.checkReservation(op, newPid, ctx.session);
      const oldNext = nextRevision(old.sysmeta, { obsoletedBy: newPid }, this.clock.now());
      // One change, one instant: the new version is dated as its predecessor's revision.
      const sysmeta = completeNewSystemMetadata(sm, { submitter: ctx.session.subject, now: oldNext.dateSysMetadataModified, nodeId: this.config.node.identifier });
      await this.commit(ctx, op, upload, newPid, unused, (storageKey) => ({
        change: {
          insert: [{ sysmeta, storageKey, isReplica: false }],
          replace: [{ pid, expectedSerialVersion: old.sysmeta.serialVersion, sysmeta: oldNext }],
        },
        event: { event: 'update', pid: newPid },
        notices: [
          { kind: 'update', pid, record: { ...old, sysmeta: oldNext } },
          { kind: 'create', pid: newPid, record: { sysmeta, storageKey, isReplica: false } },
        ],
      }));
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
    this.requireCatalogue(op, 'this node cannot change system metadata');
    const record = await resolveObject(this.metadata, op, id, ctx.version);
    const pid = record.sysmeta.identifier;
    this.requireAllowed(op, ctx, `'${ctx.session.subject}' may not archive '${pid}'`, record, id);
    if (record.sysmeta.archived) throw fail(op, 'InvalidRequest', `'${pid}' is already archived`, { pid });
    const sysmeta = nextRevision(record.sysmeta, { archived: true }, this.clock.now());
    await this.applyReplace(ctx, op, record, sysmeta, 'archive', { kind: 'archive', pid, record: { ...record, sysmeta } });
    return pid;
  }

  /** delete: administrators and CNs; the catalogue entry goes first, then the bytes. */
  async delete(ctx: CallContext, id: string): Promise<string> {
    const op = 'MNStorage.delete';
    this.requireCatalogue(op, 'this node cannot delete objects');
    const record = await resolveObject(this.metadata, op, id, ctx.version);
    const pid = record.sysmeta.identifier;
    this.requireAllowed(op, ctx, `only node administrators and Coordinating Nodes may delete objects ('${ctx.session.subject}' is neither)`, record, id);
    await this.commitChange(ctx, { remove: [{ pid }] }, { event: 'delete', pid }, [{ kind: 'delete', pid }]);
    if (this.storage.capabilities.delete && this.storage.delete) {
      await this.storage.delete(record.storageKey).catch((err: unknown) => this.logger.error({ err, pid, key: record.storageKey }, 'could not remove bytes of a deleted object'));
    }
    return pid;
  }

  /** updateSystemMetadata (v2): changePermission on the object; field ownership in sysmeta-rules. */
  async updateSystemMetadata(ctx: CallContext, input: { pid: string | undefined; sysmeta: string | Uint8Array | undefined }): Promise<true> {
    const op = 'MNStorage.updateSystemMetadata';
    this.assertMayUpdateSystemMetadata(ctx);
    const pid = this.checkPid(op, input.pid, 'pid');
    const record = await resolveObject(this.metadata, op, pid, ctx.version);
    this.requireAllowed(op, ctx, `'${ctx.session.subject}' may not change the system metadata of '${pid}'`, record, pid);
    const incoming = decodeSysmetaPart(op, input.sysmeta, pid);
    const next = applySystemMetadataUpdate(op, record.sysmeta, incoming, this.clock.now());
    // A catalogue that keeps only an overlay (a read-only legacy archive) changes only its fields.
    const allowed = new Set(changeableFields(op, this.metadata.capabilities));
    const refused = changedFields(record.sysmeta, next).filter((f) => !allowed.has(f));
    if (refused.length > 0) {
      throw fail(op, 'InvalidRequest', `this node keeps ${refused.join(', ')} in its legacy catalogue and cannot change ${refused.length === 1 ? 'it' : 'them'}; only ${[...allowed].join(', ')} may change`, { pid });
    }
    if (next.seriesId !== undefined && record.sysmeta.seriesId === undefined) await this.assertUnused(op, { id: next.seriesId, what: 'systemMetadata/seriesId', exception: 'InvalidSystemMetadata', pid });
    await this.applyReplace(ctx, op, record, next, 'updateSystemMetadata', { kind: 'updateSystemMetadata', pid, record: { ...record, sysmeta: next } });
    return true;
  }

  /** Replace one record (compare-and-set on its serialVersion), with its event and notice. */
  private async applyReplace(ctx: CallContext, op: Operation, record: ObjectRecord, sysmeta: StoredSystemMetadata, event: string, notice: ObjectChange): Promise<void> {
    const pid = record.sysmeta.identifier;
    try {
      await this.commitChange(ctx, { replace: [{ pid, expectedSerialVersion: record.sysmeta.serialVersion, sysmeta }] }, { event, pid }, [notice]);
    } catch (err) {
      if (AdapterError.is(err, 'conflict')) {
        throw fail(op, 'InvalidRequest', `'${pid}' changed while this request was processed (its serialVersion moved past ${record.sysmeta.serialVersion}); read its system metadata again and retry`, { pid });
      }
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
    this.requireAllowed(op, ctx, 'only Coordinating Nodes may call systemMetadataChanged');
    const id = input.id;
    if (id === undefined || identifierProblem(id)) throw fail(op, 'InvalidRequest', "the 'pid' (or 'id') part must hold the identifier whose system metadata changed");
    if (input.serialVersion === undefined || !/^\d+$/.test(input.serialVersion.trim())) throw fail(op, 'InvalidRequest', "the 'serialVersion' part must be an unsigned integer", { pid: id });
    const record = await resolveObject(this.metadata, op, id, ctx.version).catch((err: unknown) => {
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
    this.requireAllowed(op, ctx, 'only Coordinating Nodes may report synchronization failures');
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
