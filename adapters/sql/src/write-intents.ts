import { randomUUID } from 'node:crypto';
import type { StaleIntent } from '@memberkit/types';
import { sql } from 'kysely';
import { changesOf, q, rowsOf, Rows, type Routine } from './executor.js';
import { num, text } from './dialect.js';
import type { SqlStore } from './sql-store.js';

/**
 * Write intents (`mk_intents`): a row written before bytes are committed to storage and deleted
 * by the catalogue change that references them, in its own transaction. A row that outlives a
 * grace period marks bytes whose catalogue commit never happened (the process died between the
 * two, or the change was refused); the core's sweep finds and removes those bytes.
 */
export function intend(store: SqlStore, name: string): Promise<string> {
  return new Promise((resolve, reject) => {
    let batch = waiting.get(store);
    if (batch === undefined) {
      waiting.set(store, (batch = []));
      setImmediate(() => {
        waiting.delete(store);
        void recordIntents(store, batch!);
      });
    }
    batch.push({ row: [randomUUID(), name, Date.now()], resolve, reject });
  });
}

/**
 * Intents waiting for the next group commit: the intents of concurrent writes asked for in one
 * turn of the event loop share one transaction (a create then costs one catalogue transaction
 * more per batch, not per request).
 */
const waiting = new WeakMap<SqlStore, Array<{ row: [string, string, number]; resolve: (id: string) => void; reject: (e: unknown) => void }>>();

async function recordIntents(store: SqlStore, batch: NonNullable<ReturnType<typeof waiting.get>>): Promise<void> {
  try {
    await store.writing('record write intents', function* () {
      for (let i = 0; i < batch.length; i += 500) {
        yield* changesOf(q`INSERT INTO mk_intents (id, name, created) VALUES ${new Rows(batch.slice(i, i + 500).map((b) => b.row))}`);
      }
    });
  } catch (e) {
    for (const b of batch) b.reject(e);
    return;
  }
  for (const b of batch) b.resolve(b.row[0]);
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
