/**
 * @memberkit/adapter-template: a memberkit adapter (StorageAdapter + MetadataAdapter).
 * Adapters depend on @memberkit/types only: never on @memberkit/core, Hono or inversify.
 */
export { TemplateStorageAdapter, createTemplateStorage, type TemplateStorageOptions } from './storage.js';
export { TemplateCatalogue, createTemplateCatalogue, readableBy, type TemplateCatalogueOptions } from './catalogue.js';
