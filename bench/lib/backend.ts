// Where the node under test keeps its catalogue and bytes. Every scenario runs against the
// backend chosen with --backend; seeding goes through that backend's adapters (lib/seed.ts)
// and the node is started with its configuration sections (lib/memberkit.ts).
//   files+sqlite    the embedded default: managed folder + SQLite file
//   files+postgres  managed folder + native SQL catalogue on the machine's PostgreSQL (a fresh schema per node)
//   s3+sqlite       managed S3 storage on s3rver (loopback, a child process) + SQLite file
import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { sql } from 'kysely';
import pg from 'pg';
import { createFilesystemStorage } from '@memberkit/adapter-filesystem';
import { createSqlCatalogue } from '@memberkit/adapter-sql';
import { createS3Storage } from '@memberkit/adapter-s3';
import type { EventLogStore, CatalogueAdapter, StorageAdapter } from '@memberkit/types';
import { startS3rver, type S3rverProcess } from '../../adapters/s3/test/support/s3rver.js';

export interface SeedAdapters {
  storage: StorageAdapter;
  catalogue: CatalogueAdapter;
  eventLog: EventLogStore;
  close(): Promise<void>;
}

export interface BenchBackend {
  readonly name: string;
  /** Scenarios this backend runs (the others measure something it does not change). */
  readonly scenarios: readonly string[];
  /** The node's `storage` and `catalogue` configuration for data folder `dir`. */
  config(dir: string): Promise<Record<string, unknown>>;
  /** The adapters of `dir`'s node, opened, to seed it before it starts. */
  openSeed(dir: string): Promise<SeedAdapters>;
  stop(): Promise<void>;
}

const PG_URL = process.env.MEMBERKIT_TEST_PG ?? 'postgres://postgres@127.0.0.1:5432/test';

function filesAndSqlite(): BenchBackend {
  return {
    name: 'files+sqlite',
    scenarios: ['metadata', 'get-small', 'download', 'create', 'list', 'wrap', 'workers'],
    config: async () => ({}),
    async openSeed(dir) {
      const storage = createFilesystemStorage({ root: join(dir, 'objects'), fsync: false });
      const store = createSqlCatalogue({ dialect: 'sqlite', connection: join(dir, 'memberkit.db') });
      await storage.open();
      await store.open();
      return { storage, catalogue: store.catalogue, eventLog: store.eventLog, close: async () => { await store.close(); await storage.close?.(); } };
    },
    stop: async () => undefined,
  };
}

function filesAndPostgres(): BenchBackend {
  const schemas: string[] = [];
  const schemaOf = (dir: string) => `mk_bench_${createHash('sha1').update(dir).digest('hex').slice(0, 12)}`;
  const connectionOf = (dir: string) => ({ connectionString: PG_URL, options: `-c search_path=${schemaOf(dir)}` });
  const ensure = async (dir: string) => {
    const schema = schemaOf(dir);
    if (schemas.includes(schema)) return;
    const admin = new pg.Client({ connectionString: PG_URL });
    await admin.connect();
    await admin.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
    await admin.end();
    schemas.push(schema);
  };
  return {
    name: 'files+postgres',
    scenarios: ['metadata', 'get-small', 'create', 'list', 'workers'],
    async config(dir) {
      await ensure(dir);
      const url = new URL(PG_URL);
      url.searchParams.set('options', `-c search_path=${schemaOf(dir)}`);
      return { catalogue: { type: 'sql', dialect: 'postgres', connection: url.toString() } };
    },
    async openSeed(dir) {
      await ensure(dir);
      const storage = createFilesystemStorage({ root: join(dir, 'objects'), fsync: false });
      const sqlStore = createSqlCatalogue({ dialect: 'postgres', connection: connectionOf(dir) });
      await storage.open();
      await sqlStore.open();
      const close = async () => {
        // Statistics, as autovacuum would gather within a minute of a bulk load: without them
        // PostgreSQL plans a fresh 100,000-row table as if it were tiny (sort instead of index walk).
        for (const table of ['mk_objects', 'mk_events', 'mk_access']) await sql.raw(`ANALYZE ${table}`).execute(sqlStore.store.db);
        await sqlStore.close();
        await storage.close?.();
      };
      return { storage, catalogue: sqlStore.catalogue, eventLog: sqlStore.eventLog, close };
    },
    async stop() {
      const admin = new pg.Client({ connectionString: PG_URL });
      await admin.connect();
      for (const schema of schemas.splice(0)) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await admin.end();
    },
  };
}

async function s3AndSqlite(): Promise<BenchBackend> {
  let s3: S3rverProcess | undefined;
  const server = async () => (s3 ??= await startS3rver(['bench']));
  const prefixOf = (dir: string) => `${createHash('sha1').update(dir).digest('hex').slice(0, 12)}/`;
  return {
    name: 's3+sqlite',
    scenarios: ['metadata', 'get-small', 'create', 'list'],
    async config(dir) {
      const { connection } = await server();
      return { storage: { type: 's3', bucket: 'bench', prefix: prefixOf(dir), ...connection } };
    },
    async openSeed(dir) {
      const { connection } = await server();
      const storage = createS3Storage({ bucket: 'bench', prefix: prefixOf(dir), ...connection });
      const store = createSqlCatalogue({ dialect: 'sqlite', connection: join(dir, 'memberkit.db') });
      await storage.open?.();
      await store.open();
      return { storage, catalogue: store.catalogue, eventLog: store.eventLog, close: async () => { await store.close(); await storage.close?.(); } };
    },
    async stop() {
      await s3?.stop();
    },
  };
}

export const BACKENDS = ['files+sqlite', 'files+postgres', 's3+sqlite'] as const;

export async function createBackend(name: string): Promise<BenchBackend> {
  if (name === 'files+sqlite') return filesAndSqlite();
  if (name === 'files+postgres') return filesAndPostgres();
  if (name === 's3+sqlite') return s3AndSqlite();
  throw new Error(`unknown backend '${name}'; known: ${BACKENDS.join(', ')}`);
}

let current: BenchBackend = filesAndSqlite();

/** The backend scenarios run against (set by the runner). */
export function currentBackend(): BenchBackend {
  return current;
}

export function useBackend(backend: BenchBackend): void {
  current = backend;
}
