import pg from 'pg';
import { PostgresSearchIndex } from '../src/index.js';
import { querySuite } from './suite.js';

const url = process.env.MEMBERKIT_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const schema = `mkq_test_${process.pid}_${Date.now().toString(36)}`;

querySuite(
  'PostgreSQL full text',
  async () => ({ index: new PostgresSearchIndex({ url, schema }) }),
  async () => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  },
);
