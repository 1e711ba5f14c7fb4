/**
 * What this package offers `memberkit serve`: one storage type and one catalogue type, each a
 * descriptor (`@memberkit/types`: StorageDescriptor, CatalogueDescriptor) with an options
 * schema and a factory. An operator serves the adapter with configuration only:
 *
 *   "adapters": ["@memberkit/adapter-template"],
 *   "storage": { "type": "adapter-template" },
 *   "catalogue": { "type": "adapter-template" }
 *
 * Keep this module light (zod and type imports): it is loaded with the configuration, also by
 * commands that never serve. Import your backend's SDK inside `create`.
 */
import { z } from 'zod';
import type { CatalogueDescriptor, KeyDoc, MemberkitBackends, StorageDescriptor } from '@memberkit/types';

/** Document an option: CONFIGURATION-style docs and error messages read it (zod's global registry). */
const doc = <T extends z.ZodType>(s: T, description: string, more: Omit<KeyDoc, 'description'> = {}): T => s.meta({ description, ...more }) as T;

// YOUR BACKEND: the options of your storage (a root, a bucket, a connection string...).
// Paths go through ctx.resolvePath (relative to the configuration file); keep secrets in
// environment variables named by an option, not in the file.
const storageOptions = z.strictObject({
  keyPrefix: doc(z.string().default('objects/'), 'Prefix of every key this storage creates.'),
});

export const storageDescriptor = {
  type: 'adapter-template',
  description: 'adapter-template storage',
  options: storageOptions,
  create: async (o) => (await import('./storage.js')).createTemplateStorage({ keyPrefix: o.keyPrefix }),
} satisfies StorageDescriptor<z.infer<typeof storageOptions>>;

// YOUR BACKEND: the options of your catalogue. Return `eventLog` (and `jobs`, `scanState`)
// if your store keeps them; without an event log the node keeps one in an embedded SQLite file.
const catalogueOptions = z.strictObject({});

export const catalogueDescriptor = {
  type: 'adapter-template',
  description: 'adapter-template catalogue',
  options: catalogueOptions,
  create: async () => ({ metadata: (await import('./catalogue.js')).createTemplateCatalogue() }),
} satisfies CatalogueDescriptor<z.infer<typeof catalogueOptions>>;

export const memberkitBackends: MemberkitBackends = { storage: [storageDescriptor], catalogue: [catalogueDescriptor] };
