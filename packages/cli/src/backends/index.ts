import { filesystemStorage, treeStorage } from './filesystem.js';
import { S3_STORAGE_BACKENDS } from './s3.js';
import { sqlCatalogue, sqliteCatalogue } from './sql.js';
import type { CatalogueBackend, StorageBackend } from './types.js';

export type * from './types.js';

// Register a backend here with one line: `storage.type` / `catalogue.type` in the
// configuration selects it. A backend lives in its own file in this folder (see
// filesystem.ts): an options schema and a factory.
export const STORAGE_BACKENDS: ReadonlyArray<StorageBackend<never>> = [
  filesystemStorage as StorageBackend<never>,
  treeStorage as StorageBackend<never>,
  ...S3_STORAGE_BACKENDS,
];

export const CATALOGUE_BACKENDS: ReadonlyArray<CatalogueBackend<never>> = [
  sqliteCatalogue as CatalogueBackend<never>,
  sqlCatalogue as CatalogueBackend<never>,
];

export function storageBackend(type: string): StorageBackend<never> | undefined {
  return STORAGE_BACKENDS.find((b) => b.type === type);
}

export function catalogueBackend(type: string): CatalogueBackend<never> | undefined {
  return CATALOGUE_BACKENDS.find((b) => b.type === type);
}
