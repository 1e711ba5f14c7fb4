export * from './managed-storage.js';
export * from './tree-storage.js';
export * from './tree-scanner.js';
export * from './sqlite/index.js';
