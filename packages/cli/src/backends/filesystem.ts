import { z } from 'zod';
import { doc } from '../config-schema.js';
import type { TreeStorageAdapter } from '@memberkit/adapter-filesystem';

// The adapter is imported when a backend is created, so that commands that never open one
// (--help, token, init) do not load it.
const adapter = () => import('@memberkit/adapter-filesystem');
import type { CatalogueBackend, StorageBackend } from './types.js';

/** Managed storage: uploaded bytes under a folder, hashed and sharded (the embedded default). */
export const filesystemStorage: StorageBackend<{ root: string; fsync: boolean }> = {
  type: 'filesystem',
  description: 'managed object store in a local folder',
  options: z.strictObject({
    root: doc(z.string().default('objects'), 'The folder of uploaded bytes (hashed, sharded layout).'),
    fsync: doc(z.boolean().default(true), 'fsync every commit, so an acknowledged upload survives a crash.'),
  }),
  create: async (o, ctx) => (await adapter()).createFilesystemStorage({ root: ctx.resolvePath(o.root), fsync: o.fsync }),
};

/** An existing directory tree, read-only and in place (wrap mode, or files of a mapped SQL catalogue). */
export const treeStorage: StorageBackend<{ root: string; includeHidden: boolean }> = {
  type: 'tree',
  description: 'an existing directory tree, read-only, in place',
  options: z.strictObject({
    root: doc(z.string().min(1), 'The directory tree to publish.'),
    includeHidden: doc(z.boolean().default(false), 'Also publish dot-files and dot-folders.'),
  }),
  // Generated dataset maps (wrap.datasets) are served from the scanner's state database.
  create: async (o, ctx) => {
    const { createTreeStorage } = await adapter();
    const { DatasetMapStorage } = await import('@memberkit/science');
    return new DatasetMapStorage(createTreeStorage({ root: ctx.resolvePath(o.root), includeHidden: o.includeHidden }), () => ctx.stateDatabase());
  },
  scanner: async (storage, catalogue, wrap, ctx) => {
    const { TreeScanner, pidFromPath } = await adapter();
    const { DatasetMapStorage } = await import('@memberkit/science');
    return new TreeScanner({
      storage: (storage instanceof DatasetMapStorage ? storage.inner : storage) as TreeStorageAdapter,
      datasets: wrap.datasets,
      catalogue,
      stateDatabase: await ctx.stateDatabase(),
      nodeId: wrap.nodeId,
      pidRule: (relativePath) => pidFromPath(relativePath, wrap.pidPrefix),
      formatOverrides: wrap.formatOverrides,
      extraFormats: wrap.extraFormats,
      rightsHolder: wrap.rightsHolder,
      accessPolicy: wrap.accessPolicy,
      checksumAlgorithm: wrap.checksumAlgorithm,
      logger: ctx.logger,
    });
  },
};

/** The embedded catalogue and event log: one SQLite file (WAL; several processes may share it). */
export const sqliteCatalogue: CatalogueBackend<{ file: string }> = {
  type: 'sqlite',
  description: 'embedded SQLite catalogue and event log',
  options: z.strictObject({
    file: doc(z.string().default('memberkit.db'), 'The database file (WAL mode; several node processes on one machine may share it).'),
  }),
  create: async (o, ctx) => {
    const store = (await adapter()).openSqliteStore({ file: ctx.resolvePath(o.file) });
    return { metadata: store.catalogue, eventLog: store.eventLog, jobs: store.jobs, sqlite: () => store.database };
  },
};
