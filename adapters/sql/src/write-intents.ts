import { randomUUID } from 'node:crypto';
import { AdapterError, type StaleIntent } from '@memberkit/types';
import { sql } from 'kysely';
import { changesOf, q, rowsOf, Rows, type Routine } from './executor.js';
import { num, text } from './dialect.js';
import type { SqlStore } from './sql-store.js';
import { BatchQueue } from './batch-queue.js';

/**
 * Write intents (`mk_intents`): a row written before bytes are committed to storage and deleted
 * by the catalogue change that references them, in its own transaction. A row that outlives a
 * grace period marks bytes whose catalogue commit never happened (the process died between the
 * two, or the change was refused); the core's sweep finds and removes those bytes.
 */
export async function intend(store: SqlStore, name: string, unused: readonly string[] = []): Promise<string> {
  if (store.dialect.name === 'postgres' && unused.length <= 2) return intentBatch(store).add(name, unused);
  const id = randomUUID();
  const created = Date.now();
  // Not waiting for the WAL flush (SQLite): an intent lost in a power cut together with the
  // change that would have settled it leaves at most the bytes of that unacknowledged write
  // behind, and a create would otherwise pay a second flush before its bytes are written.
  const recorded = await store.writing(
    'record a write intent',
    () =>
      unused.length === 0
        ? changesOf(q`INSERT INTO mk_intents (id, name, created) VALUES (${id}, ${name}, ${created})`)
        : changesOf(q`INSERT INTO mk_intents (id, name, created) SELECT ${id}, ${name}, ${created}
          WHERE NOT EXISTS (SELECT 1 FROM mk_identifiers WHERE id IN ${new Rows([unused])})`),
    { durable: false },
  );
  if (recorded === 0) throw inUse(unused);
  return id;
}

function inUse(unused: readonly string[]): AdapterError {
  return new AdapterError('already-exists', `${unused.join(' or ')} is already in use`);
}

/** Intents per statement (PostgreSQL: four parameters each). */
const MAX_BATCH = 256;

interface QueuedIntent {
  row: [string, string, string | null, string | null];
  unused: readonly string[];
  resolve: (id: string) => void;
  reject: (error: unknown) => void;
}

/**
 * PostgreSQL: the intents asked for while a batch is being written go into the next one, a
 * single INSERT ... RETURNING outside any transaction (atomic on its own): one round trip for
 * all of them, where a grouped write costs BEGIN, a statement each and COMMIT. Each row is
 * inserted only while none of its (up to two) identifiers is in use; RETURNING says which were.
 */
class IntentBatch {
  readonly #queue = new BatchQueue<QueuedIntent>(MAX_BATCH, (batch) => this.#record(batch));

  constructor(private readonly store: SqlStore) {}

  add(name: string, unused: readonly string[]): Promise<string> {
    return new Promise((resolve, reject) => this.#queue.push({ row: [randomUUID(), name, unused[0] ?? null, unused[1] ?? null], unused, resolve, reject }));
  }

  async #record(batch: QueuedIntent[]): Promise<void> {
    try {
      const created = Date.now();
      const rows = await this.store.writeOne('record write intents', () =>
        rowsOf<{ id: unknown }>(q`INSERT INTO mk_intents (id, name, created) SELECT v.id, v.name, ${created}
          FROM (VALUES ${new Rows(batch.map((b) => b.row))}) AS v (id, name, a, b)
          WHERE NOT EXISTS (SELECT 1 FROM mk_identifiers i WHERE i.id IN (v.a, v.b)) RETURNING id`),
      );
      const recorded = new Set(rows.map((r) => text(r.id)));
      for (const b of batch) {
        if (recorded.has(b.row[0])) b.resolve(b.row[0]);
        else b.reject(inUse(b.unused));
      }
    } catch (e) {
      for (const b of batch) b.reject(e);
    }
  }
}

const batches = new WeakMap<SqlStore, IntentBatch>();

function intentBatch(store: SqlStore): IntentBatch {
  let batch = batches.get(store);
  if (batch === undefined) batches.set(store, (batch = new IntentBatch(store)));
  return batch;
}

/** Deletes `ids` inside the catalogue change's transaction. */
export function* settleIntents(ids: readonly string[]): Routine<void> {
  for (let i = 0; i < ids.length; i += 500) yield* changesOf(q`DELETE FROM mk_intents WHERE id IN ${new Rows([ids.slice(i, i + 500)])}`);
}

export async function staleIntents(store: SqlStore, before: Date, limit: number): Promise<StaleIntent[]> {
  const rows = await store.readOne('list stale write intents', () =>
    rowsOf<{ id: unknown; name: unknown; created: unknown }>(sql`SELECT id, name, created FROM mk_intents WHERE created < ${before.getTime()}
      ORDER BY created, id LIMIT ${Math.max(0, Math.floor(limit))}`),
  );
  return rows.map((r) => ({ id: text(r.id), name: text(r.name), created: new Date(num(r.created)) }));
}

export async function dropIntents(store: SqlStore, ids: readonly string[]): Promise<void> {
  if (ids.length === 0) return;
  await store.writing('drop write intents', () => settleIntents(ids));
}
