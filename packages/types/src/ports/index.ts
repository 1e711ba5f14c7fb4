export * from './adapter-error.js';
export * from './storage-adapter.js';
export * from './catalogue-adapter.js';
export * from './event-log.js';
export * from './job-store.js';
export * from './catalogue-support.js';
export * from './scan-state.js';
export * from './adapter-descriptor.js';
