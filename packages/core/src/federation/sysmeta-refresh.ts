import { AdapterError, formatById, normalizeChecksumAlgorithm, sameDigest, type Job, type CatalogueAdapter } from '@memberkit/types';
import type { Clock } from '../clock.js';
import { PermanentJobError, type JobHandler } from '../jobs/job-runner.js';
import type { Logger } from '../logger.js';
import type { CnGateway } from './cn-gateway.js';
import type { CatalogueWriter } from '../services/catalogue-writer.js';
import { catalogueSupports, changeableFields } from '../protocol/operations.js';
import { changedFields, takeFields } from '../protocol/sysmeta-fields.js';
import { nextRevision, withChanges } from '../protocol/revision.js';

const OP = 'MNRead.systemMetadataChanged';

export const REFRESH_SYSMETA_JOB = 'refreshSystemMetadata';

/**
 * systemMetadataChanged: "The node should schedule an update by fetching the authoritative
 * system metadata from a CN." The CN's copy is applied when its serialVersion is higher
 * than ours; identifier, size and checksum must still describe the bytes we hold. Only the
 * fields the operation table lets a refresh change are taken, and on a catalogue that keeps
 * an overlay beside a read-only archive only the overlay's (capabilities.overlay); a
 * catalogue that can do neither is never written.
 */
export class SystemMetadataRefresh implements JobHandler {
  readonly kind = REFRESH_SYSMETA_JOB;
  readonly maxAttempts = 8;

  constructor(
    private readonly deps: {
      metadata: CatalogueAdapter;
      cn: CnGateway;
      clock: Clock;
      logger: Logger;
      /** When given, the change goes through it (logged event, extensions told); else straight to `apply`. */
      writer?: Pick<CatalogueWriter, 'commit'>;
    },
  ) {}

  async run(job: Job): Promise<void> {
    const { pid } = job.payload as { pid: string };
    const { metadata, cn, clock, logger } = this.deps;
    const local = await metadata.get(pid);
    if (!local) throw new PermanentJobError(`'${pid}' is no longer on this node`);
    if (!catalogueSupports(metadata, OP)) throw new PermanentJobError(`this node's catalogue cannot change system metadata (neither capabilities.write nor capabilities.overlay); the CN's copy of '${pid}' is not applied`);
    const authoritative = await cn.getSystemMetadata(pid);
    const theirs = authoritative.serialVersion ?? 0;
    if (theirs <= local.sysmeta.serialVersion) {
      logger.info({ pid, local: local.sysmeta.serialVersion, cn: theirs }, 'CN system metadata is not newer; nothing to apply');
      return;
    }
    const alg = normalizeChecksumAlgorithm(authoritative.checksum.algorithm);
    const sameBytes =
      authoritative.identifier === pid &&
      authoritative.size === local.sysmeta.size &&
      (normalizeChecksumAlgorithm(local.sysmeta.checksum.algorithm) !== alg || sameDigest(authoritative.checksum.value, local.sysmeta.checksum.value));
    if (!sameBytes) throw new PermanentJobError(`the CN's system metadata for '${pid}' describes other bytes (identifier, size or checksum differ); not applied`);
    if (!formatById(authoritative.formatId)) throw new PermanentJobError(`the CN's formatId '${authoritative.formatId}' is unknown; not applied`);
    const fields = changeableFields(OP, metadata.capabilities);
    const theirCopy = { ...authoritative, archived: authoritative.archived ?? local.sysmeta.archived };
    const proposed = takeFields(local.sysmeta, theirCopy, fields);
    const ignored = changedFields(withChanges(local.sysmeta, proposed), withChanges(local.sysmeta, takeFields(local.sysmeta, theirCopy, changeableFields(OP, { write: true }))));
    if (ignored.length > 0) logger.warn({ pid, fields: ignored }, "the CN's copy changes fields this node's catalogue takes from its legacy archive; those are not applied");
    const next = nextRevision(local.sysmeta, proposed, clock.now(), { serialVersion: theirs });
    try {
      const change = { replace: [{ pid, expectedSerialVersion: local.sysmeta.serialVersion, sysmeta: next }] };
      if (this.deps.writer) {
        await this.deps.writer.commit({
          change,
          // The CN's systemMetadataChanged call is the logged event; the refresh only follows it.
          events: [],
          actor: { subject: 'memberkit-sysmeta-refresh', ipAddress: '127.0.0.1', userAgent: 'memberkit' },
          notices: [{ kind: 'updateSystemMetadata', pid, record: { ...local, sysmeta: next } }],
        });
      } else {
        await metadata.apply!(change);
      }
    } catch (err) {
      if (AdapterError.is(err, 'conflict')) throw new Error(`'${pid}' changed locally meanwhile; will retry`);
      throw err;
    }
    logger.info({ pid, from: local.sysmeta.serialVersion, to: theirs }, 'applied the CN system metadata');
  }
}
