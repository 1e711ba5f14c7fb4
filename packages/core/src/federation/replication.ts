import {
  AdapterError,
  DataONEException,
  DecodeError,
  ServiceFailure,
  SystemMetadataCodec,
  formatById,
  normalizeChecksumAlgorithm,
  sameDigest,
  type Job,
  type JobStore,
  type CatalogueAdapter,
  type StorageAdapter,
  type StoredSystemMetadata,
  type SystemMetadata,
} from '@memberkit/types';
import type { Clock } from '../clock.js';
import type { CoreConfig } from '../config.js';
import { fail } from '../errors.js';
import { normalizedChecksum } from '../services/sysmeta-rules.js';
import { removeUnreferencedBytes } from '../services/refused-write.js';
import { receiveUpload } from '../protocol/upload.js';
import { PermanentJobError, type JobHandler, type JobRunner } from '../jobs/job-runner.js';
import type { Logger } from '../logger.js';
import type { AccessControl } from '../services/access-control.js';
import type { CallContext } from '../session.js';
import type { CnGateway } from './cn-gateway.js';

export const REPLICATE_JOB = 'replicate';

interface ReplicatePayload {
  pid: string;
  sourceNode: string;
  /** The CN's copy of the system metadata (v2 XML). */
  sysmeta: string;
}

export interface ReplicationDeps {
  config: CoreConfig;
  metadata: CatalogueAdapter;
  storage: StorageAdapter;
  jobs: JobStore;
  runner: JobRunner;
  cn: CnGateway;
  access: AccessControl;
  clock: Clock;
  logger: Logger;
  maxAttempts?: number;
}

/**
 * MNReplication.replicate: "The node fetches the object from sourceNode with getReplica and
 * stores it." Accepting only queues a durable job; the job pulls the bytes, verifies size
 * and checksum against the CN's system metadata, stores the replica, then reports
 * COMPLETED (or, after its last attempt, FAILED with the reason) with setReplicationStatus.
 */
export class ReplicationService implements JobHandler {
  readonly kind = REPLICATE_JOB;
  readonly maxAttempts: number;

  constructor(private readonly deps: ReplicationDeps) {
    this.maxAttempts = deps.maxAttempts ?? 5;
  }

  /** replicate (POST /replicate): CN subjects only; the request is validated, then queued. */
  /** Who may ask and whether this node takes replicas: checked before the request body is read. */
  assertMayReplicate(ctx: CallContext): void {
    const op = 'MNReplication.replicate';
    const { config, access, metadata, storage } = this.deps;
    if (!access.isCoordinatingNode(ctx.session) && !access.isAdministrator(ctx.session)) {
      throw fail(op, 'NotAuthorized', 'only Coordinating Nodes may request replication');
    }
    if (!config.node.replicate) throw fail(op, 'NotImplemented', 'this node does not accept replicas (node.replicate is false)');
    if (!storage.capabilities.write || !metadata.capabilities.write) throw fail(op, 'NotImplemented', "this node's storage is read-only; it cannot hold replicas");
  }

  async accept(ctx: CallContext, sysmetaXml: string | Uint8Array | undefined, sourceNode: string | undefined): Promise<true> {
    const op = 'MNReplication.replicate';
    const { config, metadata } = this.deps;
    this.assertMayReplicate(ctx);
    if (!sourceNode?.trim()) throw fail(op, 'InvalidRequest', "the 'sourceNode' part must name the node to replicate from");
    if (sysmetaXml === undefined) throw fail(op, 'InvalidRequest', "the 'sysmeta' part is missing");
    let sm: SystemMetadata;
    try {
      sm = SystemMetadataCodec.decode(sysmetaXml);
    } catch (err) {
      if (DecodeError.is(err)) throw fail(op, 'InvalidRequest', `the sysmeta part is not valid system metadata: ${err.message}`);
      throw err;
    }
    const pid = sm.identifier;
    if (!formatById(sm.formatId)) throw fail(op, 'UnsupportedType', `formatId '${sm.formatId}' is not in the federation's format list`, { pid });
    if (!normalizeChecksumAlgorithm(sm.checksum.algorithm)) throw fail(op, 'InvalidRequest', `checksum algorithm '${sm.checksum.algorithm}' is not supported`, { pid });
    if (config.maxObjectBytes !== undefined && sm.size > config.maxObjectBytes) {
      throw fail(op, 'InsufficientResources', `the object (${sm.size} bytes) is larger than this node accepts (${config.maxObjectBytes})`, { pid });
    }
    const existing = await metadata.get(pid);
    if (existing && !existing.isReplica) throw fail(op, 'InvalidRequest', `this node already holds '${pid}' as original content`, { pid });
    // Refused now rather than accepted as a job that fails five times later.
    if (!(await this.deps.cn.knowsNode(sourceNode.trim()))) {
      throw fail(op, 'InvalidRequest', `sourceNode '${sourceNode.trim()}' is not in the Coordinating Node's node list`, { pid });
    }
    const payload: ReplicatePayload = { pid, sourceNode: sourceNode.trim(), sysmeta: SystemMetadataCodec.encode(sm, 'v2') };
    await this.deps.jobs.enqueue(REPLICATE_JOB, payload, { dedupeKey: `replicate:${pid}` });
    this.deps.runner.nudge();
    return true;
  }

  async run(job: Job, signal: AbortSignal): Promise<void> {
    const { pid, sourceNode, sysmeta: xml } = job.payload as ReplicatePayload;
    const { metadata, storage, cn, config, clock, logger } = this.deps;
    const sm = SystemMetadataCodec.decode(xml);
    const nodeId = config.node.identifier;
    if (!(await metadata.get(pid))) {
      const source = await cn.memberNode(sourceNode);
      try {
        const { stream } = await source.getReplica(pid, signal);
        const pending = await receiveUpload(storage, stream, { ...(config.maxObjectBytes !== undefined ? { maxBytes: config.maxObjectBytes } : {}), signal });
        try {
          const algorithm = normalizeChecksumAlgorithm(sm.checksum.algorithm)!;
          if (pending.size !== sm.size) throw new Error(`size mismatch: the system metadata says ${sm.size} bytes, ${pending.size} arrived from ${sourceNode}`);
          if (!sameDigest(pending.checksums[algorithm], sm.checksum.value)) {
            throw new Error(`checksum mismatch: ${algorithm} of the bytes from ${sourceNode} is ${pending.checksums[algorithm]}, the system metadata says ${sm.checksum.value}`);
          }
          const key = await pending.commit(pid);
          const now = clock.now();
          const stored: StoredSystemMetadata = {
            ...sm,
            checksum: normalizedChecksum(sm.checksum),
            serialVersion: sm.serialVersion ?? 1,
            dateUploaded: sm.dateUploaded ?? now,
            dateSysMetadataModified: now,
            submitter: sm.submitter ?? sm.rightsHolder,
            archived: sm.archived ?? false,
          };
          try {
            await metadata.apply!({ insert: [{ sysmeta: stored, storageKey: key, isReplica: true }] });
          } catch (err) {
            await removeUnreferencedBytes({ metadata, storage, logger }, pid, key, err);
            if (!AdapterError.is(err, 'already-exists')) throw err;
          }
        } finally {
          await pending.abort();
        }
      } finally {
        await source.close();
      }
      logger.info({ pid, sourceNode }, 'replica stored');
    }
    await cn.setReplicationStatus(pid, nodeId, 'completed');
  }

  async onGiveUp(job: Job, error: unknown): Promise<void> {
    const { pid } = job.payload as ReplicatePayload;
    const reason = error instanceof Error ? error.message : String(error);
    const failure = DataONEException.is(error) ? error : new ServiceFailure({ description: `replication of '${pid}' failed: ${reason}`, pid, nodeId: this.deps.config.node.identifier });
    try {
      await this.deps.cn.setReplicationStatus(pid, this.deps.config.node.identifier, 'failed', failure);
    } catch (err) {
      this.deps.logger.error({ err, pid }, 'could not report a failed replication to the CN');
    }
  }
}

export { PermanentJobError };
