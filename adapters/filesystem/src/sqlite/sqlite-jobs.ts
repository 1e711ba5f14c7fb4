import { AdapterError, type EnqueueOptions, type Job, type JobStore } from '@memberkit/types';
import { isIdentifierCollision } from './errors.js';
import type { SqliteStore } from './sqlite-store.js';

interface JobRow {
  id: number;
  kind: string;
  payload: string;
  state: Job['state'];
  attempts: number;
  run_after: number;
  last_error: string | null;
}

function toJob(row: JobRow): Job {
  return {
    id: String(row.id),
    kind: row.kind,
    payload: JSON.parse(row.payload) as unknown,
    state: row.state,
    attempts: row.attempts,
    runAfter: new Date(row.run_after),
    ...(row.last_error !== null ? { lastError: row.last_error } : {}),
  };
}

/**
 * Durable jobs on SQLite (JobStore). `claim` runs in a BEGIN IMMEDIATE transaction, so
 * among processes sharing the file exactly one gets each job; a running job whose lease
 * expired is claimable again (its worker died mid-way).
 */
export class SqliteJobStore implements JobStore {
  constructor(readonly store: SqliteStore) {}

  async open(): Promise<void> {
    await this.store.open();
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  async enqueue(kind: string, payload: unknown, options: EnqueueOptions = {}): Promise<string> {
    const now = Date.now();
    return this.store.transaction('immediate', 'enqueue job', () => {
      if (options.dedupeKey !== undefined) {
        const existing = this.store
          .statement(`SELECT id FROM jobs WHERE dedupe_key = ? AND state IN ('queued', 'running')`)
          .get(options.dedupeKey) as { id: number } | undefined;
        if (existing) return String(existing.id);
      }
      try {
        const r = this.store
          .statement(`INSERT INTO jobs (kind, payload, state, run_after, dedupe_key, created) VALUES (?, ?, 'queued', ?, ?, ?)`)
          .run(kind, JSON.stringify(payload ?? null), options.runAfter?.getTime() ?? now, options.dedupeKey ?? null, now);
        return String(r.lastInsertRowid);
      } catch (e) {
        if (isIdentifierCollision(e)) throw new AdapterError('conflict', `a job with dedupe key '${options.dedupeKey}' is already queued`, { cause: e });
        throw e;
      }
    });
  }

  async claim(kinds: readonly string[], worker: string, leaseMs: number): Promise<Job | undefined> {
    if (kinds.length === 0) return undefined;
    const now = Date.now();
    const marks = kinds.map(() => '?').join(', ');
    return this.store.transaction('immediate', 'claim job', () => {
      const row = this.store
        .statement(
          `SELECT id, kind, payload, state, attempts, run_after, last_error FROM jobs
           WHERE kind IN (${marks}) AND ((state = 'queued' AND run_after <= ?) OR (state = 'running' AND locked_until < ?))
           ORDER BY run_after, id LIMIT 1`,
        )
        .get(...kinds, now, now) as JobRow | undefined;
      if (!row) return undefined;
      this.store
        .statement(`UPDATE jobs SET state = 'running', attempts = attempts + 1, locked_by = ?, locked_until = ? WHERE id = ?`)
        .run(worker, now + leaseMs, row.id);
      return toJob({ ...row, state: 'running', attempts: row.attempts + 1 });
    });
  }

  async renew(id: string, worker: string, leaseMs: number): Promise<void> {
    this.store.statement(`UPDATE jobs SET locked_until = ? WHERE id = ? AND state = 'running' AND locked_by = ?`).run(Date.now() + leaseMs, Number(id), worker);
  }

  async complete(id: string, worker: string): Promise<void> {
    const r = this.store.statement(`UPDATE jobs SET state = 'done', locked_by = NULL, locked_until = NULL WHERE id = ? AND state = 'running' AND locked_by = ?`).run(Number(id), worker);
    if (r.changes === 0) throw new AdapterError('conflict', `job ${id} is not held by ${worker}`);
  }

  async fail(id: string, worker: string, error: string, retryAt?: Date): Promise<void> {
    const r = retryAt
      ? this.store
          .statement(`UPDATE jobs SET state = 'queued', last_error = ?, run_after = ?, locked_by = NULL, locked_until = NULL WHERE id = ? AND state = 'running' AND locked_by = ?`)
          .run(error, retryAt.getTime(), Number(id), worker)
      : this.store.statement(`UPDATE jobs SET state = 'failed', last_error = ?, locked_by = NULL, locked_until = NULL WHERE id = ? AND state = 'running' AND locked_by = ?`).run(error, Number(id), worker);
    if (r.changes === 0) throw new AdapterError('conflict', `job ${id} is not held by ${worker}`);
  }

  async get(id: string): Promise<Job | undefined> {
    const row = this.store.statement(`SELECT id, kind, payload, state, attempts, run_after, last_error FROM jobs WHERE id = ?`).get(Number(id)) as JobRow | undefined;
    return row ? toJob(row) : undefined;
  }

  async list(filter: { kind?: string; state?: Job['state'] } = {}): Promise<Job[]> {
    const rows = this.store
      .statement(
        `SELECT id, kind, payload, state, attempts, run_after, last_error FROM jobs
         WHERE (? IS NULL OR kind = ?) AND (? IS NULL OR state = ?) ORDER BY id`,
      )
      .all(filter.kind ?? null, filter.kind ?? null, filter.state ?? null, filter.state ?? null) as JobRow[];
    return rows.map(toJob);
  }
}
