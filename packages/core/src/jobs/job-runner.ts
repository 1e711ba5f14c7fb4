import { randomBytes } from 'node:crypto';
import { AdapterError, type Job, type JobStore } from '@memberkit/types';
import type { Logger } from '../logger.js';

/** Thrown by a handler when retrying cannot help (bad input, refused by the peer for good). */
export class PermanentJobError extends Error {
  override readonly name = 'PermanentJobError';
}

export interface JobHandler {
  kind: string;
  /** Do the work; throw to retry (with backoff), PermanentJobError to give up now. */
  run(job: Job, signal: AbortSignal): Promise<void>;
  /** Called once when the job fails for good (after the last attempt or a PermanentJobError). */
  onGiveUp?(job: Job, error: unknown): Promise<void>;
  /** Attempts before giving up (default 5). */
  maxAttempts?: number;
}

export interface JobRunnerOptions {
  /** Jobs run at once (default 2). */
  concurrency?: number;
  /** How often an idle runner looks for due jobs (default 1000 ms). */
  pollMs?: number;
  /** Lease of a claimed job, renewed while it runs; a runner that dies releases its jobs when it expires (default 60 s). */
  leaseMs?: number;
  /** Delay before retry `attempt` (1-based). Default: exponential from 2 s, at most 10 min, with jitter. */
  backoffMs?: (attempt: number) => number;
  logger: Logger;
}

const defaultBackoff = (attempt: number) => Math.min(600_000, 2000 * 2 ** (attempt - 1)) * (0.75 + Math.random() * 0.5);

/**
 * Runs durable jobs with bounded concurrency. Jobs live in the JobStore, so they survive
 * restarts; several processes may run runners on one store (claims are exclusive).
 */
export class JobRunner {
  private readonly handlers = new Map<string, JobHandler>();
  private readonly worker = `${process.pid}-${randomBytes(4).toString('hex')}`;
  private readonly abort = new AbortController();
  private running = 0;
  private timer: NodeJS.Timeout | undefined;
  private stopped = true;
  private readonly inFlight = new Set<Promise<void>>();

  constructor(
    private readonly store: JobStore,
    private readonly options: JobRunnerOptions,
  ) {}

  register(handler: JobHandler): void {
    this.handlers.set(handler.kind, handler);
  }

  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.nudge();
  }

  /** Look for due jobs now (after an enqueue). */
  nudge(): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    void this.fill();
  }

  /** Stop claiming; abort and wait for running jobs (they are retried after their lease). */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.abort.abort();
    await Promise.allSettled([...this.inFlight]);
  }

  private schedule(): void {
    if (this.stopped || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.fill();
    }, this.options.pollMs ?? 1000);
    this.timer.unref();
  }

  private async fill(): Promise<void> {
    const concurrency = this.options.concurrency ?? 2;
    const kinds = [...this.handlers.keys()];
    while (!this.stopped && this.running < concurrency) {
      let job: Job | undefined;
      this.running++;
      try {
        job = await this.store.claim(kinds, this.worker, this.leaseMs);
      } catch (err) {
        this.options.logger.error({ err }, 'could not claim a job');
      }
      if (!job) {
        this.running--;
        break;
      }
      const p = this.execute(job).finally(() => {
        this.running--;
        this.inFlight.delete(p);
        this.nudge();
      });
      this.inFlight.add(p);
    }
    this.schedule();
  }

  private get leaseMs(): number {
    return this.options.leaseMs ?? 60_000;
  }

  private async execute(job: Job): Promise<void> {
    const handler = this.handlers.get(job.kind)!;
    const log = this.options.logger;
    // The job's signal also aborts when its lease passes to another worker: stop working on it.
    const lost = new AbortController();
    const signal = AbortSignal.any([this.abort.signal, lost.signal]);
    const renew = (): void =>
      void this.store.renew!(job.id, this.worker, this.leaseMs).catch((err: unknown) => {
        if (AdapterError.is(err, 'conflict')) lost.abort(err);
        log.warn({ err, job: job.id }, 'could not renew a job lease');
      });
    const heartbeat = this.store.renew ? setInterval(renew, Math.max(50, this.leaseMs / 3)) : undefined;
    try {
      await handler.run(job, signal);
      try {
        await this.store.complete(job.id, this.worker);
      } catch (err) {
        // Fenced by the lease: another worker now runs the job; its outcome is theirs to record.
        if (AdapterError.is(err, 'conflict')) return log.warn({ job: job.id, kind: job.kind }, 'job finished after its lease passed to another worker; not recorded');
        throw err;
      }
      log.info({ job: job.id, kind: job.kind, attempts: job.attempts }, 'job done');
    } catch (err) {
      if (this.abort.signal.aborted) return; // shutting down: the lease expires and another runner retries
      const reason = err instanceof Error ? err.message : String(err);
      const permanent = err instanceof PermanentJobError;
      const last = permanent || job.attempts >= (handler.maxAttempts ?? 5);
      try {
        if (last) {
          await this.store.fail(job.id, this.worker, reason);
          log.warn({ job: job.id, kind: job.kind, attempts: job.attempts, reason }, 'job failed for good');
          await handler.onGiveUp?.(job, err);
        } else {
          const delay = (this.options.backoffMs ?? defaultBackoff)(job.attempts);
          await this.store.fail(job.id, this.worker, reason, new Date(Date.now() + delay));
          log.warn({ job: job.id, kind: job.kind, attempts: job.attempts, reason, retryInMs: Math.round(delay) }, 'job attempt failed; will retry');
        }
      } catch (e) {
        if (AdapterError.is(e, 'conflict')) log.warn({ job: job.id, kind: job.kind, reason }, 'job failed after its lease passed to another worker; not recorded');
        else log.error({ err: e, job: job.id }, 'could not record a job failure');
      }
    } finally {
      if (heartbeat) clearInterval(heartbeat);
    }
  }
}
