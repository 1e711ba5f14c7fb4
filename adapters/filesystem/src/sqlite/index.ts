export { openSqliteStore, SqliteStore, type SqliteStoreOptions } from './sqlite-store.js';
export { SqliteCatalogue } from './sqlite-catalogue.js';
export { SqliteEventLog } from './sqlite-event-log.js';
export { SQLITE_MIGRATIONS, migrateSqlite } from './migrations.js';
export { SqliteJobStore } from './sqlite-jobs.js';
