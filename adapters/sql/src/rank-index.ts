import { CompiledQuery, type Kysely } from 'kysely';
import { eventRanks, objectRanks, type SqlStep, type SqlSteps } from '@memberkit/types';
import type { DialectSql } from './dialect.js';

/** The listings of this package's schema in the shared position index (see @memberkit/types rank-index). */
export const OBJECT_RANKS = objectRanks({ objects: 'mk_objects', ranks: 'mk_ranks', publicIndex: 'mk_objects_public' });
export const EVENT_RANKS = eventRanks({ events: 'mk_events', ranks: 'mk_ranks' });

/** Runs a routine of SQL steps on `trx` (placeholders `?`, numbered for PostgreSQL). */
export async function runSteps<T>(trx: Kysely<any>, d: DialectSql, steps: SqlSteps<T>): Promise<T> {
  let step = steps.next();
  while (!step.done) {
    let n = 0;
    const text = d.name === 'postgres' ? step.value.sql.replace(/\?/g, () => `$${++n}`) : step.value.sql;
    const { rows } = await trx.executeQuery<Record<string, unknown>>(CompiledQuery.raw(text, step.value.params));
    step = steps.next(step.value.arrays ? (rows.map((row) => Object.values(row)) as never) : rows);
  }
  return step.value;
}

/**
 * A compiled kysely query as a step of runSteps (back to `?` placeholders on PostgreSQL,
 * whose compiler numbers them).
 */
export function asStep(query: CompiledQuery): SqlStep {
  return { sql: query.sql.replace(/\$\d+/g, '?'), params: [...query.parameters] };
}
