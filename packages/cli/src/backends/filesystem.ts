import { z } from 'zod';
import { doc } from '../config-schema.js';

// The adapter is imported when a backend is created, so that commands that never open one
// (--help, token, init) do not load it.
const adapter = () => import('@memberkit/adapter-filesystem');
import type { StorageBackend } from './types.js';

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
  // Generated dataset maps (wrap.datasets) are served from the catalogue's scan state.
  create: async (o, ctx) => {
    const { createTreeStorage } = await adapter();
    const { DatasetMapStorage } = await import('@memberkit/science');
    return new DatasetMapStorage(createTreeStorage({ root: ctx.resolvePath(o.root), includeHidden: o.includeHidden }), () => ctx.scanState());
  },
  wrappable: true,
};
