export * from './managed-storage.js';
export * from './tree-storage.js';
