import { randomBytes } from 'node:crypto';
import { AdapterError, type EnqueueOptions, type Job, type JobStore } from '@memberkit/types';
import { sql, type Kysely } from 'kysely';
import { inList, num, text, textOrNull } from './dialect.js';
import { isUniqueViolation } from './errors.js';
import { rowOf, rowsOf } from './executor.js';
import type { SqlStore } from './sql-store.js';

interface JobRow {
  id: unknown; kind: unknown; payload: unknown; state: unknown; attempts: unknown; run_after: unknown; last_error: unknown;
}

const COLUMNS = sql.raw('id, kind, payload, state, attempts, run_after, last_error');

let sequence = 0;

/**
 * A job id that sorts in creation order (time, then a per-process counter, then randomness
 * so that processes never collide): claims take jobs due at the same instant oldest first.
 */
function newJobId(now: number): string {
  sequence = (sequence + 1) % 0x100000000;
  return `${now.toString(16).padStart(12, '0')}-${sequence.toString(16).padStart(8, '0')}-${randomBytes(6).toString('hex')}`;
}

/** Delay before attempt `attempts + 1`: baseDelayMs × 2^(attempts − 1), capped at maxDelayMs. */
export function backoffDelay(attempts: number, baseDelayMs = 1000, maxDelayMs = 3_600_000): number {
  return Math.min(maxDelayMs, baseDelayMs * 2 ** Math.max(0, attempts - 1));
}

/**
 * Durable jobs in `mk_jobs` (JobStore), safe for several node processes sharing the database:
 * `claim` hands each due job to exactly one worker (PostgreSQL and MySQL 8 / MariaDB 10.6+
 * `SELECT ... FOR UPDATE SKIP LOCKED` over an index in claim order, so concurrent workers
 * neither wait on each other nor lock rows they do not return; SQLite `BEGIN IMMEDIATE`).
 * A claim is a lease: a running job whose lease passed is claimable again (its worker died).
 * `complete`/`fail` are fenced by the lease: a worker that lost it changes nothing ('conflict').
 * Ids sort in creation order. `dedupeKey`: one queued or running job per key (a unique index),
 * enqueueing again returns the existing job's id, also under concurrent enqueues.
 */
export class SqlJobQueue implements JobStore {
  constructor(readonly store: SqlStore, private readonly now: () => number = Date.now) {}

  async open(): Promise<void> {
    await this.store.open();
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  async enqueue(kind: string, payload: unknown, options: EnqueueOptions = {}): Promise<string> {
    const json = JSON.stringify(payload ?? null);
    if (json === undefined) throw new AdapterError('invalid', 'job payload must be JSON');
    const dedupe = options.dedupeKey ?? null;
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.store.write('enqueue job', async (trx) => {
          if (dedupe !== null) {
            const existing = await sql<{ id: unknown }>`SELECT id FROM mk_jobs WHERE dedupe_active = ${dedupe}`.execute(trx);
            if (existing.rows[0] !== undefined) return text(existing.rows[0].id);
          }
          const now = this.now();
          const id = newJobId(now);
          await sql`INSERT INTO mk_jobs (id, kind, payload, state, attempts, run_after, dedupe_active, created, updated)
            VALUES (${id}, ${kind}, ${json}, 'queued', 0, ${options.runAfter?.getTime() ?? now}, ${dedupe}, ${now}, ${now})`.execute(trx);
          return id;
        });
      } catch (e) {
        // a concurrent enqueue with the same dedupe key won: return its job
        const cause = (e as { cause?: unknown }).cause;
        if (dedupe !== null && attempt < 3 && AdapterError.is(e, 'already-exists') && isUniqueViolation(cause)) continue;
        throw e;
      }
    }
  }

  async claim(kinds: readonly string[], worker: string, leaseMs: number): Promise<Job | undefined> {
    if (kinds.length === 0) return undefined;
    const skipLocked = sql.raw(this.store.dialect.name === 'sqlite' ? '' : 'FOR UPDATE SKIP LOCKED');
    const ofKind = inList(sql.ref('kind'), kinds);
    return this.store.write('claim job', async (trx) => {
      const now = this.now();
      let { rows } = await sql<JobRow>`SELECT ${COLUMNS} FROM mk_jobs WHERE state = 'queued' AND run_after <= ${now} AND ${ofKind}
        ORDER BY state, run_after, id LIMIT 1 ${skipLocked}`.execute(trx);
      if (rows.length === 0) {
        // a job whose worker's lease ran out (the worker died or hung)
        ({ rows } = await sql<JobRow>`SELECT ${COLUMNS} FROM mk_jobs WHERE state = 'running' AND locked_until < ${now} AND ${ofKind}
          ORDER BY state, locked_until, id LIMIT 1 ${skipLocked}`.execute(trx));
      }
      const row = rows[0];
      if (row === undefined) return undefined;
      await sql`UPDATE mk_jobs SET state = 'running', attempts = attempts + 1, locked_by = ${worker}, locked_until = ${now + leaseMs}, updated = ${now}
        WHERE id = ${text(row.id)}`.execute(trx);
      return toJob({ ...row, state: 'running', attempts: num(row.attempts) + 1 });
    });
  }

  /** Extends the lease of a running job held by `worker`; 'conflict' when it no longer holds it. */
  async renew(id: string, worker: string, leaseMs: number): Promise<void> {
    await this.store.write('renew job', async (trx) => {
      const now = this.now();
      const r = await sql`UPDATE mk_jobs SET locked_until = ${now + leaseMs}, updated = ${now}
        WHERE id = ${id} AND state = 'running' AND locked_by = ${worker}`.execute(trx);
      if (Number(r.numAffectedRows ?? 0n) === 0) throw new AdapterError('conflict', `job ${id} is not held by ${worker}`);
    });
  }

  /** The job succeeded; only while `worker` holds it ('conflict' otherwise, nothing changed). */
  async complete(id: string, worker: string): Promise<void> {
    await this.#fenced('complete job', id, worker, (trx, now) =>
      sql`UPDATE mk_jobs SET state = 'done', locked_by = NULL, locked_until = NULL, dedupe_active = NULL, updated = ${now}
        WHERE id = ${id} AND state = 'running' AND locked_by = ${worker}`.execute(trx),
    );
  }

  /** The attempt failed (retry at `retryAt`, or failed for good); only while `worker` holds the job. */
  async fail(id: string, worker: string, error: string, retryAt?: Date): Promise<void> {
    const message = error.slice(0, 8000);
    await this.#fenced('fail job', id, worker, (trx, now) =>
      retryAt !== undefined
        ? sql`UPDATE mk_jobs SET state = 'queued', last_error = ${message}, run_after = ${retryAt.getTime()}, locked_by = NULL, locked_until = NULL, updated = ${now}
            WHERE id = ${id} AND state = 'running' AND locked_by = ${worker}`.execute(trx)
        : sql`UPDATE mk_jobs SET state = 'failed', last_error = ${message}, locked_by = NULL, locked_until = NULL, dedupe_active = NULL, updated = ${now}
            WHERE id = ${id} AND state = 'running' AND locked_by = ${worker}`.execute(trx),
    );
  }

  /**
   * Records a failed attempt of a job `worker` holds, with exponential backoff: queued again
   * after `backoffDelay(attempts, baseDelayMs)`, or failed for good once `maxAttempts` attempts
   * were made (default 5). Returns the job's new state.
   */
  async failWithBackoff(id: string, worker: string, error: string, options: { maxAttempts?: number; baseDelayMs?: number; maxDelayMs?: number } = {}): Promise<'queued' | 'failed'> {
    const job = await this.get(id);
    if (job === undefined) throw new AdapterError('not-found', `no job ${id}`);
    if (job.attempts >= (options.maxAttempts ?? 5)) {
      await this.fail(id, worker, error);
      return 'failed';
    }
    await this.fail(id, worker, error, new Date(this.now() + backoffDelay(job.attempts, options.baseDelayMs, options.maxDelayMs)));
    return 'queued';
  }

  async get(id: string): Promise<Job | undefined> {
    const row = await this.store.readOne('get job', () => rowOf<JobRow>(sql`SELECT ${COLUMNS} FROM mk_jobs WHERE id = ${id}`));
    return row === undefined ? undefined : toJob(row);
  }

  /** Jobs by kind and state, oldest first (by creation). */
  async list(filter: { kind?: string; state?: Job['state'] } = {}): Promise<Job[]> {
    const conditions = [sql`1 = 1`];
    if (filter.kind !== undefined) conditions.push(sql`kind = ${filter.kind}`);
    if (filter.state !== undefined) conditions.push(sql`state = ${filter.state}`);
    const rows = await this.store.readOne('list jobs', () =>
      rowsOf<JobRow>(sql`SELECT ${COLUMNS} FROM mk_jobs WHERE ${sql.join(conditions, sql` AND `)} ORDER BY created, id`),
    );
    return rows.map(toJob);
  }

  /** Runs a state change guarded by `state = 'running' AND locked_by = worker`; 'conflict' when it touched nothing. */
  async #fenced(what: string, id: string, worker: string, run: (trx: Kysely<any>, now: number) => Promise<{ numAffectedRows?: bigint }>): Promise<void> {
    await this.store.write(what, async (trx) => {
      const r = await run(trx, this.now());
      if (Number(r.numAffectedRows ?? 0n) === 0) throw new AdapterError('conflict', `job ${id} is not held by ${worker} (its lease passed to another worker, or it ended)`);
    });
  }
}

function toJob(row: JobRow): Job {
  const job: Job = {
    id: text(row.id),
    kind: text(row.kind),
    payload: JSON.parse(text(row.payload)) as unknown,
    state: text(row.state) as Job['state'],
    attempts: num(row.attempts),
    runAfter: new Date(num(row.run_after)),
  };
  const lastError = textOrNull(row.last_error);
  if (lastError !== null) job.lastError = lastError;
  return job;
}
