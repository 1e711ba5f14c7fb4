import { SqlEventLog } from './event-log.js';
import { SqlJobQueue } from './jobs.js';
import { SqlNativeCatalogue } from './native-catalogue.js';
import { SqlStore, type SqlStoreOptions } from './sql-store.js';

/** Options of `createSqlCatalogue`: which database, and whether to migrate on open. */
export interface SqlCatalogueOptions extends SqlStoreOptions {
  /**
   * Where dateSysMetadataModified comes from (default 'catalogue': the catalogue's one clock,
   * see clock.ts). 'proposed' stores the dates the writer proposes as given: only for imports
   * and tests that must keep given dates; listing order is then no longer commit order.
   */
  clock?: 'catalogue' | 'proposed';
}

/**
 * A catalogue with its event log and job queue on one SqlStore (one pool): what
 * createSqlCatalogue and createMappedCatalogue return, `C` being the catalogue's class.
 */
export interface SqlCatalogueParts<C> {
  readonly catalogue: C;
  /** EventLogStore in `mk_events`; readableBy follows the catalogue's access. */
  readonly eventLog: SqlEventLog;
  /** Durable jobs (enqueue / claim / complete / fail) in `mk_jobs` of the same database. */
  readonly jobs: SqlJobQueue;
  /** The shared pool; open/close of every part delegate here (reference counted). */
  readonly store: SqlStore;
  /** Opens the pool and migrates the schema (idempotent, safe from several processes at once). */
  open(): Promise<void>;
  close(): Promise<void>;
}

/** The native mode: memberkit's own catalogue (capabilities.write), event log and job queue in one database. */
export type SqlCatalogue = SqlCatalogueParts<SqlNativeCatalogue>;

/**
 * Creates the native SQL catalogue for PostgreSQL, MySQL 8 / MariaDB 10.6+ or SQLite. No I/O
 * happens until `open()` (of the result or of any part).
 *
 * ```ts
 * const sqlStore = createSqlCatalogue({ dialect: 'postgres', connection: 'postgres://memberkit@db/memberkit' });
 * const node = await createMemberNode(config, { storage, metadata: sqlStore.catalogue, eventLog: sqlStore.eventLog });
 * ```
 */
export function createSqlCatalogue(options: SqlCatalogueOptions): SqlCatalogue {
  const store = new SqlStore(options);
  return {
    catalogue: new SqlNativeCatalogue(store, options.clock),
    eventLog: new SqlEventLog(store),
    jobs: new SqlJobQueue(store),
    store,
    open: () => store.open(),
    close: () => store.close(),
  };
}
