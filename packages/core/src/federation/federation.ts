import type { JobStore, CatalogueAdapter, StorageAdapter } from '@memberkit/types';
import type { Clock } from '../clock.js';
import type { CoreConfig } from '../config.js';
import { fail, type Operation } from '../errors.js';
import { JobRunner } from '../jobs/job-runner.js';
import type { Logger } from '../logger.js';
import type { AccessControl } from '../services/access-control.js';
import type { Session } from '../session.js';
import { CnGateway } from './cn-gateway.js';
import type { FederationConfig } from './federation-config.js';
import { ReplicationService } from './replication.js';
import { REFRESH_SYSMETA_JOB, SystemMetadataRefresh } from './sysmeta-refresh.js';
import { NOTIFY_SYNC_FAILURE_JOB, SyncFailureNotifier, type SyncFailureReport } from './sync-failure-notifier.js';

export interface FederationDeps {
  config: CoreConfig & { federation: FederationConfig };
  metadata: CatalogueAdapter;
  storage: StorageAdapter;
  jobs: JobStore;
  access: AccessControl;
  clock: Clock;
  logger: Logger;
}

/**
 * The node's life in the federation: the CN gateway and the durable jobs that replicate
 * objects, refresh system metadata from the CN and report synchronization failures.
 */
export class Federation {
  readonly cn: CnGateway;
  readonly runner: JobRunner;
  readonly replication: ReplicationService;

  constructor(private readonly deps: FederationDeps) {
    const f = deps.config.federation;
    this.cn = new CnGateway(f);
    const retry = f.replication?.retryDelayMs;
    this.runner = new JobRunner(deps.jobs, {
      concurrency: f.replication?.concurrency ?? 2,
      logger: deps.logger,
      ...(f.replication?.leaseMs !== undefined ? { leaseMs: f.replication.leaseMs, pollMs: Math.min(1000, f.replication.leaseMs / 2) } : {}),
      ...(retry !== undefined ? { backoffMs: () => retry } : {}),
    });
    this.replication = new ReplicationService({ ...deps, runner: this.runner, cn: this.cn, ...(f.replication?.maxAttempts !== undefined ? { maxAttempts: f.replication.maxAttempts } : {}) });
    this.runner.register(this.replication);
    this.runner.register(new SystemMetadataRefresh({ metadata: deps.metadata, cn: this.cn, clock: deps.clock, logger: deps.logger }));
    this.runner.register(new SyncFailureNotifier({ logger: deps.logger, ...(f.syncFailureWebhook ? { webhook: f.syncFailureWebhook } : {}) }));
  }

  start(): void {
    this.runner.start();
  }

  async stop(): Promise<void> {
    await this.runner.stop();
    await this.cn.close();
  }

  /** systemMetadataChanged: queue a refresh from the CN (one pending refresh per PID). */
  async enqueueRefresh(pid: string): Promise<void> {
    await this.deps.jobs.enqueue(REFRESH_SYSMETA_JOB, { pid }, { dedupeKey: `refresh:${pid}` });
    this.runner.nudge();
  }

  /** synchronizationFailed: store the report (the job keeps the error body) and notify. */
  async enqueueSyncFailure(report: SyncFailureReport): Promise<void> {
    await this.deps.jobs.enqueue(NOTIFY_SYNC_FAILURE_JOB, report);
    this.runner.nudge();
  }

  /**
   * getReplica: "a tier 2 or higher node must call CNReplication.isNodeAuthorized before
   * serving restricted-access content". True when the CN authorizes one of the caller's
   * subjects (the requesting node) to replicate `pid`.
   */
  async nodeMayReplicate(pid: string, session: Session): Promise<boolean> {
    if (!session.authenticated) return false;
    for (const subject of [session.subject, ...[...session.subjects].filter((s) => s !== session.subject && s !== 'public' && s !== 'authenticatedUser')]) {
      if (await this.cn.isNodeAuthorized(pid, subject)) return true;
    }
    return false;
  }

  /**
   * create/update with a reserved identifier: "later create/update with it by another
   * principal is an error". A CN that cannot be reached does not block writes (logged).
   */
  async checkReservation(op: Operation, pid: string, session: Session): Promise<void> {
    if (this.deps.config.federation.checkReservations === false) return;
    try {
      const r = await this.cn.reservation(pid, session.subject);
      if (r === 'other') throw fail(op, 'IdentifierNotUnique', `'${pid}' is reserved on the Coordinating Node by another subject`, { pid });
    } catch (err) {
      if (err instanceof Error && 'exceptionName' in err && (err as { exceptionName: string }).exceptionName === 'IdentifierNotUnique') throw err;
      this.deps.logger.warn({ err, pid }, 'could not check the identifier reservation with the CN; accepting');
    }
  }
}
