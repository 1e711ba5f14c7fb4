/**
 * @memberkit/testkit: conformance suites every adapter runs in a few lines (see README.md).
 */
export type { SuiteContext, StorageSuiteContext, SuiteOptions } from './suite-context.js';
export { runStorageAdapterSuite } from './storage-adapter-suite.js';
export { runCatalogueAdapterSuite } from './catalogue-adapter-suite.js';
export { runEventLogSuite, compareEntryIds } from './event-log-suite.js';
export { runJobStoreSuite } from './job-store-suite.js';
export { expectAdapterError } from './adapter-errors.js';
export {
  buildSystemMetadata, buildMinimalSystemMetadata, buildObjectRecord, buildEventRecord, instant,
  HOSTILE_IDENTIFIERS, HOSTILE_STORAGE_KEYS,
} from './fixtures.js';
export { bytesSource, generatedSource, patternBytes, digestsOf, digestStream, readAll, Digester, type Digests } from './bytes.js';
export * from './node/index.js';
export { startCoordinatingNodeStub, type CoordinatingNodeStub, type ReplicationReport } from './cn-stub.js';
export { exercisePositionIndex, type PositionIndexParts } from './position-index.js';
export * from './wrap-suite.js';
