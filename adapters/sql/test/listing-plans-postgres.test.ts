// PostgreSQL plans of listing pages (issue #21): a page is a walk of the (date, key) index from a
// bucket's bound, forward or backward. Written as `date <= d AND (date < d OR key < k)`, the
// bound was estimated as if its parts were independent; where that estimate fell below LIMIT +
// OFFSET, PostgreSQL sorted a bitmap scan of every row before the bound instead of walking the
// index (7–20 ms a page instead of 0.5 on 100,000 objects). Every page here, on a catalogue
// analyzed as autovacuum would, must be an index walk, and hold the rows it should.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { sql } from 'kysely';
import { buildObjectRecord } from '@memberkit/testkit';
import { createSqlCatalogue, type SqlCatalogue } from '../src/index.js';
import { OBJECT_POSITIONS, positionedPage } from '../src/position-index.js';
import { SUMMARY_COLUMNS } from '../src/object-row.js';
import { freshDatabase, type FreshDatabase } from './helpers/databases.js';

const OBJECTS = 20_000;
// Small buckets: the first ones then hold a small share of the rows, as on a large catalogue.
const BUCKET = 256;
const BASE = Date.UTC(2026, 0, 1);
const pidOf = (i: number) => `plan-${String(i).padStart(6, '0')}`;

interface PlanNode {
  'Node Type': string;
  Plans?: PlanNode[];
}

function nodeTypes(plan: PlanNode): string[] {
  return [plan['Node Type'], ...(plan.Plans ?? []).flatMap(nodeTypes)];
}

describe('listing page plans (PostgreSQL)', () => {
  let db: FreshDatabase;
  let store: SqlCatalogue;
  let client: pg.Client;

  beforeAll(async () => {
    db = await freshDatabase('postgres');
    store = createSqlCatalogue({ dialect: 'postgres', connection: db.connection, clock: 'proposed', positionBucketRows: BUCKET });
    await store.open();
    for (let i = 0; i < OBJECTS; i += 2000) {
      const insert = Array.from({ length: 2000 }, (_, j) => buildObjectRecord(pidOf(i + j), { sysmeta: { dateSysMetadataModified: new Date(BASE + i + j), dateUploaded: new Date(BASE + i + j) } }));
      await store.catalogue.apply!({ insert });
    }
    await store.store.reindex();
    await sql.raw('ANALYZE mk_objects').execute(store.store.db);
    client = new pg.Client(db.connection as pg.ClientConfig);
    await client.connect();
  }, 120_000);
  afterAll(async () => {
    await client?.end();
    await store?.close();
    await db?.drop();
  });

  /** Runs a page's statements as the store would, EXPLAINing the walk; its plan's node types and rows. */
  async function page(start: number, count: number): Promise<{ nodes: string[]; pids: string[] }> {
    const walk = positionedPage<unknown[]>('postgres', OBJECT_POSITIONS, { public: false }, { start, count, columns: SUMMARY_COLUMNS, arrays: true });
    let nodes: string[] = [];
    let step = walk.next();
    while (!step.done) {
      let n = 0;
      const text = step.value.sql.replace(/\?/g, () => `$${++n}`);
      if (/\bLIMIT\b/.test(text)) {
        const [{ 'QUERY PLAN': plan }] = (await client.query(`EXPLAIN (FORMAT JSON) ${text}`, step.value.params)).rows as Array<{ 'QUERY PLAN': Array<{ Plan: PlanNode }> }>;
        nodes = nodeTypes(plan[0]!.Plan);
      }
      const { rows } = await client.query({ text, values: step.value.params, rowMode: step.value.arrays ? 'array' : undefined } as pg.QueryConfig);
      step = walk.next(rows);
    }
    const result = step.value!;
    expect(result.total).toBe(OBJECTS);
    return { nodes, pids: result.rows.map((row) => String(row[0])) };
  }

  it('walks the index for every page, forward and backward, in the first buckets and deep', async () => {
    const starts = [100, 200, 300, 450, 600, 700, 900, 1000, 1200, 1400, 1900, 5000, 10_100, 19_850];
    for (const start of starts) {
      for (const count of [50, 100]) {
        const { nodes, pids } = await page(start, count);
        const what = `start ${start}, count ${count}: ${nodes.join(' > ')}`;
        expect(nodes.some((n) => n === 'Sort' || n.startsWith('Bitmap')), what).toBe(false);
        expect(pids, what).toEqual(Array.from({ length: Math.min(count, OBJECTS - start) }, (_, i) => pidOf(start + i)));
      }
    }
  });
});
