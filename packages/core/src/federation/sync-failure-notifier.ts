import type { Job } from '@memberkit/types';
import type { JobHandler } from '../jobs/job-runner.js';
import type { Logger } from '../logger.js';

export const NOTIFY_SYNC_FAILURE_JOB = 'notifySynchronizationFailed';

/** The stored report of a CN's synchronizationFailed call (the job payload keeps the error body). */
export interface SyncFailureReport {
  pid: string;
  detailCode: string;
  description: string;
  nodeId?: string;
  /** The SynchronizationFailed error document as the CN sent it. */
  body: string;
  receivedAt: string;
  reportedBy: string;
}

/**
 * synchronizationFailed: "The node records the problem and should notify an administrator
 * or the data owner." Every report is a durable job (its payload is the stored error body);
 * the notifier writes a log line and, when configured, POSTs the report as JSON to a webhook
 * (retried with backoff until it answers 2xx).
 */
export class SyncFailureNotifier implements JobHandler {
  readonly kind = NOTIFY_SYNC_FAILURE_JOB;
  readonly maxAttempts = 10;

  constructor(private readonly deps: { logger: Logger; webhook?: string }) {}

  async run(job: Job): Promise<void> {
    const report = job.payload as SyncFailureReport;
    if (job.attempts === 1) this.deps.logger.warn({ ...report, body: undefined }, 'synchronization failed at the Coordinating Node');
    if (!this.deps.webhook) return;
    const res = await fetch(this.deps.webhook, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ event: 'synchronizationFailed', ...report }),
      signal: AbortSignal.timeout(15_000),
    });
    await res.body?.cancel();
    if (!res.ok) throw new Error(`webhook answered ${res.status}`);
  }
}
