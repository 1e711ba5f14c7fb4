import { randomUUID } from 'node:crypto';
import { AdapterError, type StaleIntent } from '@memberkit/types';
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
export async function intend(store: SqlStore, name: string, unused: readonly string[] = []): Promise<string> {
  const id = randomUUID();
  const created = Date.now();
  const recorded = await store.writing('record a write intent', () =>
    unused.length === 0
      ? changesOf(q`INSERT INTO mk_intents (id, name, created) VALUES (${id}, ${name}, ${created})`)
      : changesOf(q`INSERT INTO mk_intents (id, name, created) SELECT ${id}, ${name}, ${created}
          WHERE NOT EXISTS (SELECT 1 FROM mk_identifiers WHERE id IN ${new Rows([unused])})`),
  );
  if (recorded === 0) throw new AdapterError('already-exists', `${unused.join(' or ')} is already in use`);
  return id;
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
