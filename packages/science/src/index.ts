export type { Creator, ResourceMap, ScienceMetadata, SpatialCoverage, TemporalCoverage } from './types.js';
export { isScienceMetadataFormat, readScienceMetadata } from './metadata.js';
export { isResourceMapFormat, readResourceMap } from './ore.js';
export { isEmlFormat } from './eml.js';
export { isIsoFormat } from './iso.js';
export { isDataCiteFormat } from './datacite.js';
export { isDublinCoreFormat } from './dublin-core.js';
export { ScienceCache, type ScienceBytesLoader, type ScienceCacheOptions, type ScienceObjectRef } from './cache.js';
export { DEFAULT_MAX_DOCUMENT_BYTES } from './xml.js';
