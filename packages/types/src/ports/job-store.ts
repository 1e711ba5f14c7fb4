/** A unit of durable background work (replication, system metadata refresh, notifications). */
export interface Job<P = unknown> {
  id: string;
  kind: string;
  /** JSON-serialisable input of the job. */
  payload: P;
  /** Attempts started so far (including the current one, once claimed). */
  attempts: number;
  /** Not to be run before this time. */
  runAfter: Date;
  /** Why the last attempt failed. */
  lastError?: string;
  state: 'queued' | 'running' | 'done' | 'failed';
}

export interface EnqueueOptions {
  runAfter?: Date;
  /**
   * At most one queued or running job per dedupe key: enqueueing again while one exists
   * returns the existing job's id (the payload of the existing job is kept).
   */
  dedupeKey?: string;
}

/**
 * Durable job queue (core-owned state). Jobs survive restarts; several node processes may
 * share one store: `claim` MUST hand a job to exactly one worker (row locks or a single
 * writer transaction), and a claimed job whose lease expired (its worker died) becomes
 * claimable again; a worker that lost its lease can no longer complete or fail the job.
 */
export interface JobStore {
  open?(): Promise<void>;
  close?(): Promise<void>;
  enqueue(kind: string, payload: unknown, options?: EnqueueOptions): Promise<string>;
  /** The next due job of one of `kinds`, now leased to `worker` for `leaseMs`; undefined when none is due. */
  claim(kinds: readonly string[], worker: string, leaseMs: number): Promise<Job | undefined>;
  /** Extend the lease of a running job held by `worker` (a heartbeat while it runs). */
  renew?(id: string, worker: string, leaseMs: number): Promise<void>;
  /**
   * The job succeeded. Fenced by the lease: acts only while `worker` holds the job (running,
   * claimed by it, lease not yet taken over); otherwise changes nothing and throws kind
   * 'conflict' (another worker may be running it now).
   */
  complete(id: string, worker: string): Promise<void>;
  /**
   * The attempt failed: retry at `retryAt`, or, when undefined, the job failed for good.
   * Fenced by the lease like `complete` ('conflict' when `worker` no longer holds the job).
   */
  fail(id: string, worker: string, error: string, retryAt?: Date): Promise<void>;
  get(id: string): Promise<Job | undefined>;
  /** Jobs by kind and state, oldest first (operators and tests). */
  list(filter?: { kind?: string; state?: Job['state'] }): Promise<Job[]>;
}
