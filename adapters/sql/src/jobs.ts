import { randomUUID } from 'node:crypto';
import { AdapterError } from '@memberkit/types';
import { sql } from 'kysely';
import { inList, num, text, textOrNull } from './dialect.js';
import type { SqlStore } from './sql-store.js';

export type JobState = 'queued' | 'running' | 'done' | 'failed';

/** One background job (replication, sysmeta refresh, ...). */
export interface Job {
  id: string;
  kind: string;
  /** Any JSON value given to `enqueue`. */
  payload: unknown;
  state: JobState;
  /** Times the job was claimed. */
  attempts: number;
  /** Not claimable before this instant. */
  runAfter: Date;
  lockedBy?: string;
  /** A running job whose lease passed this instant may be claimed again (its worker died). */
  lockedUntil?: Date;
  lastError?: string;
}

export interface ClaimOptions {
  /** Only jobs of these kinds (default: any). */
  kinds?: readonly string[];
  /** Most jobs to claim at once (default 1). */
  limit?: number;
  /** Lease length (default 60 000 ms): the worker completes or fails the job before it ends. */
  leaseMs?: number;
}

export interface FailOptions {
  /** After this many attempts the job is 'failed' for good (default 5). */
  maxAttempts?: number;
  /** Delay before the next attempt: baseDelayMs × 2^(attempts − 1) (default 1000 ms). */
  baseDelayMs?: number;
}

interface JobRow {
  id: unknown; kind: unknown; payload: unknown; state: unknown; attempts: unknown; run_after: unknown;
  locked_by: unknown; locked_until: unknown; last_error: unknown;
}

/**
 * A small durable job queue in `mk_jobs`, safe for several node processes: `claim` hands a
 * due job to exactly one worker (PostgreSQL and MySQL 8 / MariaDB 10.6+ `FOR UPDATE SKIP
 * LOCKED`, so workers never wait on each other; SQLite `BEGIN IMMEDIATE`). A claim is a lease:
 * a job whose worker does not complete or fail it in time is claimed again.
 */
export class SqlJobQueue {
  constructor(readonly store: SqlStore, private readonly now: () => number = Date.now) {}

  async open(): Promise<void> {
    await this.store.open();
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  /** Adds a queued job; returns its id. 'invalid' when payload is not JSON-serialisable. */
  async enqueue(kind: string, payload: unknown, options: { runAfter?: Date; id?: string } = {}): Promise<string> {
    const id = options.id ?? randomUUID();
    const json = JSON.stringify(payload ?? null);
    if (json === undefined) throw new AdapterError('invalid', 'job payload must be JSON');
    const now = this.now();
    const runAfter = options.runAfter?.getTime() ?? now;
    await this.store.write('enqueue job', (trx) =>
      sql`INSERT INTO mk_jobs (id, kind, payload, state, attempts, run_after, created, updated)
        VALUES (${id}, ${kind}, ${json}, 'queued', 0, ${runAfter}, ${now}, ${now})`.execute(trx),
    );
    return id;
  }

  /** Claims up to `limit` due jobs for `worker` (oldest run_after first); [] when none is due. */
  async claim(worker: string, options: ClaimOptions = {}): Promise<Job[]> {
    const limit = options.limit ?? 1;
    const leaseMs = options.leaseMs ?? 60_000;
    const kinds = options.kinds === undefined ? sql`1 = 1` : inList(sql.ref('kind'), options.kinds);
    const skipLocked = sql.raw(this.store.dialect.name === 'sqlite' ? '' : 'FOR UPDATE SKIP LOCKED');
    return this.store.write('claim jobs', async (trx) => {
      const now = this.now();
      const due = await sql<{ id: unknown }>`SELECT id FROM mk_jobs
        WHERE state = 'queued' AND run_after <= ${now} AND ${kinds}
        ORDER BY state, run_after, id LIMIT ${limit} ${skipLocked}`.execute(trx);
      const rows = [...due.rows];
      if (rows.length < limit) {
        // Jobs whose worker's lease ran out (the worker died or hung).
        const expired = await sql<{ id: unknown }>`SELECT id FROM mk_jobs
          WHERE state = 'running' AND locked_until < ${now} AND ${kinds}
          ORDER BY state, locked_until, id LIMIT ${limit - rows.length} ${skipLocked}`.execute(trx);
        rows.push(...expired.rows);
      }
      const ids = rows.map((r) => text(r.id));
      if (ids.length === 0) return [];
      await sql`UPDATE mk_jobs SET state = 'running', attempts = attempts + 1, locked_by = ${worker},
        locked_until = ${now + leaseMs}, updated = ${now} WHERE ${inList(sql.ref('id'), ids)}`.execute(trx);
      const claimed = await sql<JobRow>`SELECT * FROM mk_jobs WHERE ${inList(sql.ref('id'), ids)} ORDER BY run_after, id`.execute(trx);
      return claimed.rows.map(toJob);
    });
  }

  /** Marks a job done. 'conflict' when `worker` no longer holds it (lease expired and re-claimed). */
  async complete(id: string, worker: string): Promise<void> {
    await this.#finish(id, worker, (trx, now) =>
      sql`UPDATE mk_jobs SET state = 'done', locked_by = NULL, locked_until = NULL, updated = ${now}
        WHERE id = ${id} AND state = 'running' AND locked_by = ${worker}`.execute(trx),
    );
  }

  /**
   * Records a failed attempt: the job is queued again after an exponential backoff, or
   * 'failed' for good once `maxAttempts` is reached. Returns the new state. 'conflict' when
   * `worker` no longer holds the job.
   */
  async fail(id: string, worker: string, error: string, options: FailOptions = {}): Promise<'queued' | 'failed'> {
    const maxAttempts = options.maxAttempts ?? 5;
    const base = options.baseDelayMs ?? 1000;
    let state: 'queued' | 'failed' = 'queued';
    await this.#finish(id, worker, async (trx, now) => {
      const { rows } = await sql<{ attempts: unknown }>`SELECT attempts FROM mk_jobs WHERE id = ${id} AND state = 'running' AND locked_by = ${worker}`.execute(trx);
      const attempts = rows[0] === undefined ? 0 : num(rows[0].attempts);
      state = attempts >= maxAttempts ? 'failed' : 'queued';
      const runAfter = now + base * 2 ** Math.max(0, attempts - 1);
      return sql`UPDATE mk_jobs SET state = ${state}, run_after = ${runAfter}, last_error = ${error.slice(0, 4000)},
        locked_by = NULL, locked_until = NULL, updated = ${now}
        WHERE id = ${id} AND state = 'running' AND locked_by = ${worker}`.execute(trx);
    });
    return state;
  }

  /** The job, or undefined. */
  async get(id: string): Promise<Job | undefined> {
    const { rows } = await this.store.read('get job', (trx) => sql<JobRow>`SELECT * FROM mk_jobs WHERE id = ${id}`.execute(trx));
    return rows[0] === undefined ? undefined : toJob(rows[0]);
  }

  async #finish(id: string, worker: string, update: (trx: any, now: number) => Promise<{ numAffectedRows?: bigint }>): Promise<void> {
    await this.store.write('finish job', async (trx) => {
      const result = await update(trx, this.now());
      if (Number(result.numAffectedRows ?? 0n) === 0) throw new AdapterError('conflict', `job ${id} is not held by ${worker}`);
    });
  }
}

function toJob(row: JobRow): Job {
  const job: Job = {
    id: text(row.id),
    kind: text(row.kind),
    payload: JSON.parse(text(row.payload)),
    state: text(row.state) as JobState,
    attempts: num(row.attempts),
    runAfter: new Date(num(row.run_after)),
  };
  const lockedBy = textOrNull(row.locked_by);
  if (lockedBy !== null) job.lockedBy = lockedBy;
  if (row.locked_until !== null && row.locked_until !== undefined) job.lockedUntil = new Date(num(row.locked_until));
  const lastError = textOrNull(row.last_error);
  if (lastError !== null) job.lastError = lastError;
  return job;
}
