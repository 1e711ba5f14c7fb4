/**
 * @memberkit/adapter-sql/backends: the catalogue types this package offers `memberkit serve`
 * (`sqlite`, the embedded default, and `sql`). Light on purpose (zod and types only): the
 * store and its database drivers load only when a catalogue is created.
 */
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { z } from 'zod';
import type { CatalogueDescriptor, KeyDoc, MemberkitBackends } from '@memberkit/types';
import type { SqlMapping } from './index.js';

/** Document an option for CONFIGURATION.md (zod's global registry, read by the CLI). */
const doc = <T extends z.ZodType>(s: T, description: string, more: Omit<KeyDoc, 'description'> = {}): T => s.meta({ description, ...more }) as T;

/** The top-level keys of a SqlMapping: a typo there is caught here; the mapped catalogue checks the values. */
const MAPPING_KEYS = ['source', 'pid', 'sid', 'formatId', 'size', 'checksum', 'checksumAlgorithm', 'modified', 'uploaded', 'rightsHolder', 'submitter', 'access', 'location', 'obsolescence', 'fileName', 'nodeIdentifier'] as const satisfies ReadonlyArray<keyof SqlMapping>;

/** SQLite catalogues: whether a write waits for the WAL flush (WalSync). */
const FSYNC = doc(z.boolean().default(true), 'SQLite: flush the write-ahead log to the disk before a write is answered (one flush for the writes that wait together, off the main thread), so an acknowledged create survives a power cut. `false`: a crash of the machine may lose the last answered writes (the database stays consistent). PostgreSQL and MySQL commits are durable by their own settings.');

const sqlOptions = z.strictObject({
  dialect: doc(z.enum(['postgres', 'mysql', 'sqlite']), 'The database: PostgreSQL 12+, MySQL 8 / MariaDB 10.6+ (`mysql`) or SQLite.'),
  connection: doc(z.string().min(1).optional(), 'The database: a URL (`postgres://user@host:5432/db`, `mysql://user:pass@host:3306/db`) or, for sqlite, a file path. One of `connection` or `connectionEnv` is **required**.'),
  connectionEnv: doc(z.string().min(1).optional(), 'Name of an environment variable holding the connection URL (keeps passwords out of this file).'),
  poolSize: doc(z.number().int().positive().default(10), 'Connections per node process (postgres, mysql). PostgreSQL opens up to two more, for the change-feed check before cached reads, and runs that check and the statements of writes as named prepared statements (behind PgBouncer in transaction mode: version 1.21 or newer with `max_prepared_statements` set): plan max_connections for (poolSize + 2) per process.'),
  migrate: doc(z.boolean().default(true), "Create and migrate memberkit's tables (`mk_*`) on start."),
  fsync: FSYNC,
  mapping: doc(z.strictObject(Object.fromEntries(MAPPING_KEYS.map((k) => [k, z.unknown().optional()]))).optional(), 'Mapping mode: a legacy table, view or query published read-only (the SqlMapping reference is in adapters/sql/README.md). Absent: native mode (memberkit\'s own catalogue).', { leaf: true, shownDefault: 'absent (native mode)' }),
  filesRoot: doc(z.string().min(1).optional(), "Mapping mode: the folder the mapping's `location` paths are relative to, read to compute checksums and sizes the archive lacks (usually the same root as `storage`)."),
}).refine((o) => o.connection !== undefined || o.connectionEnv !== undefined, { message: 'connection or connectionEnv is required' });

/**
 * Catalogue on PostgreSQL, MySQL/MariaDB or SQLite: native mode (a writable catalogue several
 * node processes share) or, with `mapping`, a legacy catalogue.
 */
export const sqlCatalogue = {
  type: 'sql',
  description: 'SQL catalogue on PostgreSQL, MySQL/MariaDB or SQLite (native, or a mapped legacy catalogue)',
  options: sqlOptions,
  create: async (o, ctx) => {
    const { createMappedCatalogue, createSqlCatalogue, SqlScanState } = await import('./index.js');
    let url = o.connection ?? process.env[o.connectionEnv!];
    if (url === undefined || url === '') throw new Error(`catalogue.connectionEnv: environment variable ${o.connectionEnv} is not set`);
    if (o.dialect === 'sqlite') url = ctx.resolvePath(url.replace(/^sqlite:(\/\/)?/, ''));
    const connection = o.dialect === 'postgres' ? { connectionString: url, max: o.poolSize } : o.dialect === 'mysql' ? { uri: url, connectionLimit: o.poolSize } : { file: url, fsync: o.fsync };
    if (o.mapping === undefined) {
      const s = createSqlCatalogue({ dialect: o.dialect, connection, migrate: o.migrate });
      return { metadata: s.catalogue, eventLog: s.eventLog, jobs: s.jobs, scanState: new SqlScanState(s.store) };
    }
    // The files root is a `tree` storage, built by whichever package offers that type.
    const storage = o.filesRoot !== undefined ? await ctx.createStorage({ type: 'tree', root: o.filesRoot }) : undefined;
    const m = createMappedCatalogue({ dialect: o.dialect, connection, migrate: o.migrate, mapping: o.mapping as unknown as SqlMapping, ...(storage ? { storage } : {}) });
    // The node opens metadata and event log; the files root is opened with the catalogue.
    const open = m.catalogue.open.bind(m.catalogue);
    const close = m.catalogue.close.bind(m.catalogue);
    m.catalogue.open = async () => {
      await open();
      await storage?.open?.();
    };
    m.catalogue.close = async () => {
      await storage?.close?.();
      await close();
    };
    return { metadata: m.catalogue, eventLog: m.eventLog, jobs: m.jobs };
  },
} satisfies CatalogueDescriptor<z.infer<typeof sqlOptions>>;

const sqliteOptions = z.strictObject({
  file: doc(z.string().default('memberkit.db'), 'The database file (WAL mode; several node processes on one machine may share it).'),
  fsync: FSYNC,
});

/**
 * The embedded default: the same SQL store on one SQLite file beside the configuration (WAL;
 * several node processes on one machine may share it). A data folder of the embedded store
 * before it (old tables in memberkit.db) moves into it on first open.
 */
export const sqliteCatalogue = {
  type: 'sqlite',
  description: 'embedded SQLite catalogue and event log',
  options: sqliteOptions,
  create: (o, ctx) => {
    // The file's folder (data/ of a generated node) may not exist yet on a first start.
    mkdirSync(dirname(ctx.resolvePath(o.file)), { recursive: true });
    return sqlCatalogue.create({ dialect: 'sqlite', connection: o.file, poolSize: 1, migrate: true, fsync: o.fsync }, ctx);
  },
} satisfies CatalogueDescriptor<z.infer<typeof sqliteOptions>>;

export const memberkitBackends: MemberkitBackends = { catalogue: [sqliteCatalogue, sqlCatalogue] };
