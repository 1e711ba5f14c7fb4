/**
 * @memberkit/adapter-template: a memberkit adapter (StorageAdapter + CatalogueAdapter).
 * Adapters depend on @memberkit/types (and zod, for the options schemas of src/backends.ts)
 * only: never on @memberkit/core, Hono or inversify.
 */
export { TemplateStorageAdapter, createTemplateStorage, type TemplateStorageOptions } from './storage.js';
export { TemplateCatalogue, createTemplateCatalogue, readableBy, type TemplateCatalogueOptions } from './catalogue.js';
// What `memberkit serve` loads when a configuration names this package in "adapters".
export { memberkitBackends, storageDescriptor, catalogueDescriptor } from './backends.js';
