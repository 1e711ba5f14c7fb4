import { AdapterError, formatById, normalizeChecksumAlgorithm, sameDigest, type Job, type MetadataAdapter, type StoredSystemMetadata } from '@memberkit/types';
import type { Clock } from '../clock.js';
import { PermanentJobError, type JobHandler } from '../jobs/job-runner.js';
import type { Logger } from '../logger.js';
import type { CnGateway } from './cn-gateway.js';
import { normalizedChecksum } from '../services/sysmeta-rules.js';

export const REFRESH_SYSMETA_JOB = 'refreshSystemMetadata';

/**
 * systemMetadataChanged: "The node should schedule an update by fetching the authoritative
 * system metadata from a CN." The CN's copy is applied when its serialVersion is higher
 * than ours; identifier, size and checksum must still describe the bytes we hold.
 */
export class SystemMetadataRefresh implements JobHandler {
  readonly kind = REFRESH_SYSMETA_JOB;
  readonly maxAttempts = 8;

  constructor(
    private readonly deps: { metadata: MetadataAdapter; cn: CnGateway; clock: Clock; logger: Logger },
  ) {}

  async run(job: Job): Promise<void> {
    const { pid } = job.payload as { pid: string };
    const { metadata, cn, clock, logger } = this.deps;
    const local = await metadata.get(pid);
    if (!local) throw new PermanentJobError(`'${pid}' is no longer on this node`);
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
    const next: StoredSystemMetadata = {
      ...authoritative,
      checksum: normalizedChecksum(authoritative.checksum),
      serialVersion: theirs,
      dateUploaded: authoritative.dateUploaded ?? local.sysmeta.dateUploaded,
      submitter: authoritative.submitter ?? local.sysmeta.submitter,
      archived: authoritative.archived ?? local.sysmeta.archived,
      // Every change moves dateSysMetadataModified forward on this node.
      dateSysMetadataModified: clock.now(),
    };
    try {
      await metadata.apply!({ replace: [{ pid, expectedSerialVersion: local.sysmeta.serialVersion, sysmeta: next }] });
    } catch (err) {
      if (AdapterError.is(err, 'conflict')) throw new Error(`'${pid}' changed locally meanwhile; will retry`);
      throw err;
    }
    logger.info({ pid, from: local.sysmeta.serialVersion, to: theirs }, 'applied the CN system metadata');
  }
}
