export * from './types.js';
export { parseQuery, parseSolrDate, fieldsOf, QuerySyntaxError, type QueryNode, type Occur, type ParseOptions } from './parser.js';
export { FIELDS, FIELD_BY_NAME, DEFAULT_FIELD, READERS_FIELD, describeSchema, lookupField, type FieldDef, type FieldType } from './schema.js';
export { SolrQueryEngine, parseSolrParams, writeJson, writeXml, type SolrEngineOptions, type ParsedSolrRequest } from './solr-engine.js';
export { SqliteSearchIndex, type SqliteIndexOptions } from './sql/sqlite-index.js';
export { PostgresSearchIndex, type PostgresIndexOptions } from './sql/postgres-index.js';
export { buildDocument, resourceMapRelations, normalizeDate, xmlText } from './document.js';
export { CatalogueIndexer, type IndexerOptions } from './indexer.js';
export { createQueryExtension, engineParams, type IndexConfig, type QueryExtension, type QueryExtensionOptions } from './extension.js';
