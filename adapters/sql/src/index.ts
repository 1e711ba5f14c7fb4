/**
 * @memberkit/adapter-sql: a DataONE Member Node catalogue on PostgreSQL, MySQL/MariaDB or
 * SQLite. Native mode (`createSqlCatalogue`): memberkit's own schema, writable, with the event
 * log and a job queue. Mapping mode (`createMappedCatalogue`): a read-only view of a legacy
 * catalogue declared by a mapping, with memberkit's overlay beside it.
 */
export { createSqlCatalogue, type SqlCatalogue, type SqlCatalogueOptions, type SqlCatalogueParts } from './sql-catalogue.js';
export { SqlStore, type SqlStoreOptions } from './sql-store.js';
export { SqlNativeCatalogue } from './native-catalogue.js';
export { SqlEventLog, type EventAccessSource } from './event-log.js';
export { SqlJobQueue, backoffDelay } from './jobs.js';
export { dialectSql, openKysely, beginImmediate, waitForWriteLock, text, textOrNull, num, inList, type DialectSql, type SqlDialectName, type SqlConnection, type SqlConnectionOptions } from './dialect.js';
export { migrations, migrate, underMigrationLock, type MigrationLock } from './migrations.js';
export { toAdapterError, isUniqueViolation, isRetryable } from './errors.js';
export { createMappedCatalogue, SqlMappedCatalogue, OVERLAY_FIELDS, ARCHIVE_FIELDS, type MappedCatalogue, type MappedCatalogueOptions } from './mapped-catalogue.js';
export type { SqlMapping, SqlValue, SqlTime, SqlTimeType } from './mapping.js';
export { SqlScanState } from './scan-state.js';
