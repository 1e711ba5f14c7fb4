// The embedded default (adapters/sql on one SQLite file) as the embedded store's own tests
// used it: the parts, reference-counted open/close, reindex, and a second raw connection on
// the same file for SQL behind the store's back (as another process would write).
import Database from 'better-sqlite3';
import { createSqlCatalogue, type SqlCatalogue } from '../../src/index.js';

export interface EmbeddedStore extends SqlCatalogue {
  readonly isOpen: boolean;
  /** A separate better-sqlite3 connection on the file (opened on first use, closed with the store's last close). */
  readonly database: Database.Database;
  reindex(): Promise<void>;
}

export function openEmbeddedStore(options: { file: string; busyTimeoutMs?: number; positionBucketRows?: number }): EmbeddedStore {
  const s = createSqlCatalogue({
    dialect: 'sqlite',
    connection: { file: options.file, ...(options.busyTimeoutMs !== undefined ? { busyTimeoutMs: options.busyTimeoutMs } : {}) },
    ...(options.positionBucketRows !== undefined ? { positionBucketRows: options.positionBucketRows } : {}),
  });
  let raw: Database.Database | undefined;
  const close = s.store.close.bind(s.store);
  s.store.close = async () => {
    await close();
    if (!s.store.isOpen) {
      raw?.close();
      raw = undefined;
    }
  };
  return {
    ...s,
    close: () => s.store.close(),
    get isOpen() {
      return s.store.isOpen;
    },
    get database() {
      raw ??= new Database(options.file);
      return raw;
    },
    reindex: () => s.store.reindex(),
  };
}
