export type { Creator, DataEntity, EntityAttribute, ResourceMap, ScienceMetadata, ScienceRead, SpatialCoverage, TemporalCoverage } from './types.js';
export { isScienceMetadataFormat, readScienceMetadata, readScienceMetadataResult, type ReadOptions } from './metadata.js';
export { isResourceMapFormat, readResourceMap, readResourceMapResult, type ReadMapOptions } from './ore.js';
export { isEmlFormat, ENTITY_LIMITS } from './eml.js';
export { isIsoFormat } from './iso.js';
export { isDataCiteFormat } from './datacite.js';
export { isDublinCoreFormat } from './dublin-core.js';
export { isFgdcFormat } from './fgdc.js';
export { isDryadFormat } from './dryad.js';
export { isMercuryFormat } from './mercury.js';
export { isSchemaOrgFormat, SCHEMA_ORG_FORMAT } from './schema-org.js';
export { creatorFromString, personFromString } from './names.js';
export { ScienceCache, type ScienceBytesLoader, type ScienceCacheOptions, type ScienceObjectRef } from './cache.js';
export { SciencePool, sharedSciencePool, closeSharedSciencePool, DEFAULT_POOL_OPTIONS, type SciencePoolOptions } from './pool.js';
export { DEFAULT_BUDGETS, budgetsOf, scanDocument, plainText, decodeEntities, type DocumentBudgets, type ScanResult } from './budgets.js';
export { DEFAULT_MAX_DOCUMENT_BYTES, decodeDocument } from './xml.js';
export { digestWithHead } from './formats/digest-with-head.js';
export {
  identifyFormat, detectFormat, FormatRules, FormatRulesError, formatRulesProblems, HEAD_BYTES, isGlob, compileGlob,
  type IdentifyInput, type IdentifyOptions, type FormatIdentification, type FormatRulesOptions, type CompiledGlob,
} from './formats/index.js';
export {
  folderDataset, folderOf, datasetMembership, isDatasetMetadataFormat, writeDatasetMap, RESOURCE_MAP_FORMAT,
  type FolderDataset, type FolderFile,
} from './dataset-map.js';
export { FolderDatasets, DatasetMapStorage, DATASET_MAP_KEY_PREFIX, type FolderDatasetsOptions, type DatasetReport } from './dataset-publisher.js';
