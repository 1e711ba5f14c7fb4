import { inject, injectable } from 'inversify';
import type { Keyv } from 'keyv';
import {
  createChecksumHash,
  normalizeChecksumAlgorithm,
  sameDigest,
  DEFAULT_CHECKSUM_ALGORITHM,
  type ByteRange,
  type Checksum,
  type CatalogueAdapter,
  type ObjectList,
  type ObjectQuery,
  type ObjectRecord,
  type Permission,
  type StorageAdapter,
  type StorageReadResult,
} from '@memberkit/types';
import { DEFAULT_MAX_PAGE_SIZE, type CoreConfig } from '../config.js';
import { fail, type Operation } from '../errors.js';
import type { CallContext } from '../session.js';
import { TOKENS } from '../tokens.js';
import { AccessControl } from './access-control.js';
import { EventService } from './event-service.js';
import { resolveObject } from './resolve.js';
import { RecordCache } from './record-cache.js';
import { OPERATIONS } from '../protocol/operations.js';
import { readBytes } from '../protocol/range.js';
import type { FederationHandle } from '../container.js';

export interface ListObjectsQuery {
  fromDate?: Date;
  toDate?: Date;
  formatId?: string;
  identifier?: string;
  replicaStatus?: boolean;
  start: number;
  count: number;
}

export interface ObjectDownload {
  record: ObjectRecord;
  content: StorageReadResult;
}

/** The operations served from the record cache: they only read the record they look up. */
const CACHED: ReadonlySet<Operation> = new Set<Operation>(['MNRead.describe', 'MNRead.getSystemMetadata', 'MNRead.get', 'MNRead.getChecksum', 'MNAuthorization.isAuthorized']);

/** MNRead and MNAuthorization: everything that reads objects and their system metadata. */
@injectable()
export class ObjectService {
  private readonly records: RecordCache;

  constructor(
    @inject(TOKENS.Catalogue) private readonly metadata: CatalogueAdapter,
    @inject(TOKENS.Storage) private readonly storage: StorageAdapter,
    @inject(TOKENS.AccessControl) private readonly access: AccessControl,
    @inject(TOKENS.Events) private readonly events: EventService,
    @inject(TOKENS.Config) private readonly config: CoreConfig,
    @inject(TOKENS.Cache) private readonly cache: Keyv,
    @inject(TOKENS.Federation) private readonly federation: FederationHandle,
  ) {
    this.records = new RecordCache(metadata, config.recordCacheSize);
  }

  /**
   * The record of `id` (a SID where the operation table says `op` takes one), if the caller
   * may `permission` it (default: the operation's permission in the table).
   */
  async authorized(ctx: CallContext, op: Operation, id: string, permission: Permission = objectPermission(op)): Promise<ObjectRecord> {
    const record = CACHED.has(op) ? await this.records.lookup(id, () => resolveObject(this.metadata, op, id, ctx.version)) : await resolveObject(this.metadata, op, id, ctx.version);
    if (!this.access.allows(ctx.session, record.sysmeta, permission)) {
      throw fail(op, 'NotAuthorized', `'${ctx.session.subject}' may not ${permission} '${record.sysmeta.identifier}'`, { pid: id });
    }
    return record;
  }

  /** describe: the record behind the headers (HEAD /object/{id}). */
  describe(ctx: CallContext, id: string): Promise<ObjectRecord> {
    return this.authorized(ctx, 'MNRead.describe', id);
  }

  getSystemMetadata(ctx: CallContext, id: string): Promise<ObjectRecord> {
    return this.authorized(ctx, 'MNRead.getSystemMetadata', id);
  }

  /** get, first half: the record whose bytes the caller may read. */
  authorizeGet(ctx: CallContext, id: string): Promise<ObjectRecord> {
    return this.authorized(ctx, 'MNRead.get', id);
  }

  /** get: the bytes, logged as a read. */
  async get(ctx: CallContext, id: string, range?: ByteRange): Promise<ObjectDownload> {
    const record = await this.authorizeGet(ctx, id);
    return { record, content: await this.read(ctx, record, range) };
  }

  /**
   * get, second half: open the bytes of a record `authorized` for read and log the read.
   * The caller builds its headers from the record before calling this, so that nothing
   * that can fail happens while a stream is open and unowned.
   */
  async read(ctx: CallContext, record: ObjectRecord, range?: ByteRange): Promise<StorageReadResult> {
    const content = await this.open('MNRead.get', record, range);
    this.events.recordBehind(ctx, 'read', record.sysmeta.identifier);
    return content;
  }

  /**
   * getReplica: the bytes for another node, "logged as a replication event, not a read
   * event". Takes a PID only. Callers that may read the object get it; for restricted
   * content, "a tier 2 or higher node must call CNReplication.isNodeAuthorized": the CN
   * decides whether the calling node may replicate it.
   */
  async getReplica(ctx: CallContext, pid: string): Promise<ObjectDownload> {
    const record = await this.authorizeReplica(ctx, pid);
    return { record, content: await this.readReplica(ctx, record) };
  }

  /** getReplica, first half: the record the calling node may replicate. */
  async authorizeReplica(ctx: CallContext, pid: string): Promise<ObjectRecord> {
    const op = 'MNRead.getReplica';
    const record = await resolveObject(this.metadata, op, pid, ctx.version);
    if (!this.access.allows(ctx.session, record.sysmeta, objectPermission(op))) {
      const federation = this.federation.current;
      if (!federation || !(await federation.nodeMayReplicate(pid, ctx.session))) {
        throw fail(op, 'NotAuthorized', `'${ctx.session.subject}' may not replicate '${pid}' (not readable, and the Coordinating Node does not authorize it)`, { pid });
      }
    }
    return record;
  }

  /** getReplica, second half: open the bytes and log a replicate event. */
  async readReplica(ctx: CallContext, record: ObjectRecord): Promise<StorageReadResult> {
    const content = await this.open('MNRead.getReplica', record);
    try {
      await this.events.record(ctx, 'replicate', record.sysmeta.identifier);
    } catch (err) {
      content.stream.destroy();
      throw err;
    }
    return content;
  }

  private async open(op: Operation, record: ObjectRecord, range?: ByteRange): Promise<StorageReadResult> {
    const content = await readBytes(this.storage, record.storageKey, { ...(range ? { range } : {}), sizeHint: record.sysmeta.size });
    if (!content) {
      throw fail(op, 'ServiceFailure', `the bytes of '${record.sysmeta.identifier}' are missing from storage; the operator has been told`, { pid: record.sysmeta.identifier });
    }
    return content;
  }

  /**
   * getChecksum: "must be valid for the object (computed or certainly-correct cached value)".
   * The recorded checksum when the algorithm matches; otherwise computed from the bytes once
   * and cached.
   */
  async getChecksum(ctx: CallContext, pid: string, algorithmParam?: string): Promise<Checksum> {
    const op = 'MNRead.getChecksum';
    const record = await this.authorized(ctx, op, pid);
    const recorded = record.sysmeta.checksum;
    const requested = algorithmParam ?? recorded.algorithm ?? DEFAULT_CHECKSUM_ALGORITHM;
    const algorithm = normalizeChecksumAlgorithm(requested);
    if (!algorithm) throw fail(op, 'InvalidRequest', `unsupported checksumAlgorithm '${requested}'; use SHA-1, MD5 or SHA-256`, { pid });
    if (normalizeChecksumAlgorithm(recorded.algorithm) === algorithm) return { algorithm: recorded.algorithm, value: recorded.value };
    // The recorded digest names the bytes: a wrapped file rewritten under the same key gets a new one.
    const cacheKey = `checksum:${record.storageKey}:${recorded.algorithm}:${recorded.value}:${algorithm}`;
    const cached = await this.cache.get<string>(cacheKey);
    if (cached) return { algorithm, value: cached };
    const stat = await this.storage.stat(record.storageKey);
    const native = stat?.checksums?.[algorithm];
    const value = native ?? (await this.digest(op, record, algorithm));
    await this.cache.set(cacheKey, value);
    return { algorithm, value };
  }

  private async digest(op: Operation, record: ObjectRecord, algorithm: NonNullable<ReturnType<typeof normalizeChecksumAlgorithm>>): Promise<string> {
    const { stream } = await this.open(op, record);
    const hash = createChecksumHash(algorithm);
    // for await destroys the stream when the loop ends early or throws.
    for await (const chunk of stream) hash.update(chunk as Buffer);
    return hash.digest('hex');
  }

  /** Verify stored bytes against the recorded checksum (used by audits and tests). */
  async verify(record: ObjectRecord): Promise<boolean> {
    const algorithm = normalizeChecksumAlgorithm(record.sysmeta.checksum.algorithm);
    if (!algorithm) return false;
    return sameDigest(await this.digest('MNRead.get', record, algorithm), record.sysmeta.checksum.value);
  }

  /**
   * listObjects over dateSysMetadataModified, ordered by it then PID. Callers see the
   * objects they may read; administrators and CNs see all.
   */
  async listObjects(ctx: CallContext, q: ListObjectsQuery): Promise<ObjectList> {
    const readableBy = this.access.listingFilter(ctx.session);
    const maxPage = this.config.maxPageSize ?? DEFAULT_MAX_PAGE_SIZE;
    const query: ObjectQuery = {
      ...(q.fromDate ? { fromDate: q.fromDate } : {}),
      ...(q.toDate ? { toDate: q.toDate } : {}),
      ...(q.formatId ? { formatId: q.formatId } : {}),
      ...(q.identifier ? { identifier: q.identifier } : {}),
      ...(q.replicaStatus === false ? { replicas: false } : {}),
      ...(readableBy ? { readableBy } : {}),
      start: q.start,
      count: Math.min(q.count, maxPage),
    };
    // Summaries are already ObjectInfo entries; full records are cut down to one.
    const page = this.metadata.listSummaries
      ? await this.metadata.listSummaries(query)
      : await this.metadata.list(query).then(({ total, items }) => ({ total, items: items.map(({ sysmeta: s }) => ({
        identifier: s.identifier,
        formatId: s.formatId,
        checksum: s.checksum,
        dateSysMetadataModified: s.dateSysMetadataModified,
        size: s.size,
      })) }));
    return { start: q.start, count: page.items.length, total: page.total, objectInfo: page.items };
  }

  /** isAuthorized: true when allowed; NotAuthorized (401) otherwise, never 403. */
  async isAuthorized(ctx: CallContext, id: string, action: string | undefined): Promise<true> {
    const op = 'MNAuthorization.isAuthorized';
    if (action !== 'read' && action !== 'write' && action !== 'changePermission') {
      throw fail(op, 'InvalidRequest', `action must be read, write or changePermission (got '${action ?? ''}')`, { pid: id });
    }
    await this.authorized(ctx, op, id, action);
    return true;
  }
}

/** The object permission the operation table gives `op` (read for operations that need none on an object). */
function objectPermission(op: Operation): Permission {
  const p = OPERATIONS[op].permission;
  return p === 'read' || p === 'write' || p === 'changePermission' ? p : 'read';
}
