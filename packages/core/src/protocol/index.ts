export * from './operations.js';
export * from './sysmeta-fields.js';
export * from './revision.js';
export * from './upload.js';
export * from './range.js';
export * from './sysmeta-part.js';
export { DigestWorkerPool, configureDigestWorkers, sharedDigestWorkers, type DigestStream, type DigestWorkerPoolOptions } from './digest-workers.js';
