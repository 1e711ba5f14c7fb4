// The shared conformance suites (@memberkit/testkit) against this adapter. Every declared
// capability is an obligation: its tests run. This file only wires factories; cases of
// your own backend (connection loss, its key layout, its limits) go beside it.
import { runCatalogueAdapterSuite, runStorageAdapterSuite } from '@memberkit/testkit';
import { createTemplateCatalogue, createTemplateStorage } from '../src/index.js';

runStorageAdapterSuite('adapter-template storage', {
  // A fresh, opened, isolated instance per test. YOUR BACKEND: a new bucket prefix, a
  // temporary directory or schema here, and remove it in destroy.
  async create() {
    const storage = createTemplateStorage();
    await storage.open();
    return storage;
  },
  async destroy(storage) {
    await storage.close?.();
  },
  // A read-only (wrapping) adapter adds `seed(storage, name, bytes)`: put the bytes in
  // place behind the adapter's back and return their key (see @memberkit/testkit's README).
});

runCatalogueAdapterSuite('adapter-template catalogue', {
  // MUST return an empty catalogue.
  async create() {
    const catalogue = createTemplateCatalogue();
    await catalogue.open();
    return catalogue;
  },
  async destroy(catalogue) {
    await catalogue.close?.();
  },
});

// Opting a test out needs a written reason, e.g.
// runStorageAdapterSuite('...', ctx, { skip: { '<exact test title>': 'why this backend cannot pass it' } });
