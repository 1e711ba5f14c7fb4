/**
 * @memberkit/adapter-filesystem/backends: the storage types this package offers `memberkit
 * serve` (`filesystem`, `tree`). Light on purpose (zod and types only): the adapter itself is
 * imported when a storage is created, so commands that never open one (--help, token, init)
 * do not load it.
 */
import { z } from 'zod';
import type { KeyDoc, MemberkitBackends, StorageDescriptor } from '@memberkit/types';

const adapter = () => import('./index.js');

/** Document an option for CONFIGURATION.md (zod's global registry, read by the CLI). */
const doc = <T extends z.ZodType>(s: T, description: string, more: Omit<KeyDoc, 'description'> = {}): T => s.meta({ description, ...more }) as T;

const managedOptions = z.strictObject({
  root: doc(z.string().default('objects'), 'The folder of uploaded bytes (hashed, sharded layout).'),
  fsync: doc(z.boolean().default(true), 'fsync every commit, so an acknowledged upload survives a crash.'),
});

/** Managed storage: uploaded bytes under a folder, hashed and sharded (the embedded default). */
export const filesystemStorage = {
  type: 'filesystem',
  description: 'managed object store in a local folder',
  options: managedOptions,
  create: async (o, ctx) => (await adapter()).createFilesystemStorage({ root: ctx.resolvePath(o.root), fsync: o.fsync }),
} satisfies StorageDescriptor<z.infer<typeof managedOptions>>;

const treeOptions = z.strictObject({
  root: doc(z.string().min(1), 'The directory tree to publish.'),
  includeHidden: doc(z.boolean().default(false), 'Also publish dot-files and dot-folders.'),
});

/** An existing directory tree, read-only and in place (wrap mode, or files of a mapped SQL catalogue). */
export const treeStorage = {
  type: 'tree',
  description: 'an existing directory tree, read-only, in place',
  options: treeOptions,
  create: async (o, ctx) => (await adapter()).createTreeStorage({ root: ctx.resolvePath(o.root), includeHidden: o.includeHidden }),
  wrappable: true,
} satisfies StorageDescriptor<z.infer<typeof treeOptions>>;

export const memberkitBackends: MemberkitBackends = { storage: [filesystemStorage, treeStorage] };
