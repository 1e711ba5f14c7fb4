import type { QueryEngineDescription, QueryField } from '@memberkit/types';

/**
 * Field types, as Solr names them in the federation's schema:
 * - `string`: exact, case-sensitive match (identifiers, subjects, format ids);
 * - `text`: tokenized full text (lower-cased, diacritics folded, no stemming);
 * - `date`: ISO 8601 UTC datetimes, range-searchable;
 * - `long`/`double`: numbers, range-searchable;
 * - `boolean`: true/false.
 */
export type FieldType = 'string' | 'text' | 'date' | 'long' | 'double' | 'boolean';

export interface FieldDef {
  name: string;
  type: FieldType;
  multivalued: boolean;
  /** Returned in documents (fl). `text` is searchable only. */
  returnable: boolean;
  sortable: boolean;
  description: string;
}

const f = (name: string, type: FieldType, description: string, opts: { multi?: boolean; returnable?: boolean } = {}): FieldDef => ({
  name,
  type,
  multivalued: opts.multi ?? false,
  returnable: opts.returnable ?? true,
  sortable: !(opts.multi ?? false) && type !== 'text',
  description,
});

/** The index's fields: the federation's Solr field names for system and science metadata. */
export const FIELDS: readonly FieldDef[] = [
  // System metadata
  f('id', 'string', 'The identifier (PID) of the object.'),
  f('seriesId', 'string', 'The series identifier (SID) the object belongs to.'),
  f('formatId', 'string', 'The object format identifier (e.g. eml://ecoinformatics.org/eml-2.1.1).'),
  f('formatType', 'string', 'The kind of format: METADATA, DATA or RESOURCE.'),
  f('size', 'long', 'Size of the object in bytes.'),
  f('checksum', 'string', 'Checksum of the object (hex digest).'),
  f('checksumAlgorithm', 'string', 'Algorithm of the checksum (MD5, SHA-1, SHA-256).'),
  f('submitter', 'string', 'Subject that submitted the object.'),
  f('rightsHolder', 'string', 'Subject holding all rights on the object.'),
  f('readPermission', 'string', 'Subjects granted read permission by the access policy.', { multi: true }),
  f('writePermission', 'string', 'Subjects granted write permission by the access policy.', { multi: true }),
  f('changePermission', 'string', 'Subjects granted changePermission by the access policy.', { multi: true }),
  f('isPublic', 'boolean', 'True when the public subject may read the object.'),
  f('replicationAllowed', 'boolean', 'Replication policy: replication allowed.'),
  f('obsoletes', 'string', 'The identifier of the version this object replaces.'),
  f('obsoletedBy', 'string', 'The identifier of the version replacing this object.'),
  f('archived', 'boolean', 'True when the object is archived (hidden from searches unless the query names archived).'),
  f('dateUploaded', 'date', 'Date the object was uploaded.'),
  f('dateModified', 'date', 'Date the system metadata was last modified (dateSysMetadataModified).'),
  f('datasource', 'string', 'The origin Member Node of the object.'),
  f('authoritativeMN', 'string', 'The authoritative Member Node of the object.'),
  f('replicaMN', 'string', 'Member Nodes holding a replica.', { multi: true }),
  f('fileName', 'string', 'Suggested file name of the object.'),
  f('mediaType', 'string', 'Media type of the object (v2 system metadata).'),
  f('serialVersion', 'long', 'Serial version of the system metadata.'),
  // Package relations (from OAI-ORE resource maps)
  f('resourceMap', 'string', 'Resource maps (packages) that aggregate the object.', { multi: true }),
  f('documents', 'string', 'Objects this metadata document describes (cito:documents).', { multi: true }),
  f('isDocumentedBy', 'string', 'Metadata documents describing this object (cito:isDocumentedBy).', { multi: true }),
  // Science metadata
  f('title', 'text', 'Title of the dataset (science metadata).'),
  f('abstract', 'text', 'Abstract of the dataset (science metadata).'),
  f('keywords', 'string', 'Keywords of the dataset (science metadata).', { multi: true }),
  f('origin', 'string', 'Creators of the dataset, as display names (science metadata).', { multi: true }),
  f('author', 'string', 'First creator of the dataset (science metadata).'),
  f('authorGivenName', 'string', 'Given name of the first creator.'),
  f('authorSurName', 'string', 'Family name of the first creator.'),
  f('investigator', 'string', 'Family names of the creators.', { multi: true }),
  f('orcid', 'string', 'ORCID identifiers of the creators.', { multi: true }),
  f('originator', 'string', 'Organizations of the creators.', { multi: true }),
  f('publisher', 'string', 'Publisher of the dataset.'),
  f('pubDate', 'date', 'Publication date of the dataset.'),
  f('beginDate', 'date', 'Earliest begin date of the temporal coverage.'),
  f('endDate', 'date', 'Latest end date of the temporal coverage.'),
  f('northBoundCoord', 'double', 'Northern bound of the spatial coverage (decimal degrees).'),
  f('southBoundCoord', 'double', 'Southern bound of the spatial coverage (decimal degrees).'),
  f('eastBoundCoord', 'double', 'Eastern bound of the spatial coverage (decimal degrees).'),
  f('westBoundCoord', 'double', 'Western bound of the spatial coverage (decimal degrees).'),
  f('license', 'string', 'License name or URL of the dataset.'),
  // Indexing status
  f('notIndexed', 'string', 'Why the content of this science metadata document or resource map is not indexed: it exceeded a budget (size, nesting depth, elements, attributes, text, links), took too long or needed too much memory to read. Absent when the content is indexed; only system metadata is searchable then. notIndexed:* lists such objects.'),
  f('text', 'text', 'Full text of the science metadata document and the main fields; the default search field.', { returnable: false }),
];

export const FIELD_BY_NAME: ReadonlyMap<string, FieldDef> = new Map(FIELDS.map((d) => [d.name, d]));

/** Fields tokenized for full-text search (each has a full-text column in the index). */
export const TEXT_FIELDS = FIELDS.filter((d) => d.type === 'text').map((d) => d.name);
/** Single-valued fields: one column each in SQL indexes. */
export const SINGLE_FIELDS = FIELDS.filter((d) => !d.multivalued);
export const MULTI_FIELDS = FIELDS.filter((d) => d.multivalued);
/**
 * Package relations: filled only by resource maps (SearchIndex.setRelations), never by the
 * document itself; shown per caller (see sql/access.ts).
 */
export const LINK_FIELDS: readonly string[] = ['resourceMap', 'documents', 'isDocumentedBy'];
/** Internal multi-valued field: every subject that may read the object (rightsHolder + any grant). */
export const READERS_FIELD = '_readers';
/** The default search field (Solr's df). */
export const DEFAULT_FIELD = 'text';

export const ENGINE_VERSION = '1.0.0';
export const SCHEMA_VERSION = '1.0';

export function lookupField(name: string): FieldDef | undefined {
  return FIELD_BY_NAME.get(name);
}

/** The QueryEngineDescription of the `solr` engine over this schema. */
export function describeSchema(name = 'solr'): QueryEngineDescription {
  return {
    queryEngineVersion: ENGINE_VERSION,
    querySchemaVersion: SCHEMA_VERSION,
    name,
    additionalInfo: [
      'A subset of the Solr query syntax: field:value, field:"phrase", wildcards (* ?), ranges [a TO b] and {a TO b} with * open ends and NOW date math, AND/OR/NOT/+/-, parentheses, field:* and -field:*, *:*.',
      'Parameters: q, repeated fq, fl, rows, start, sort, facet, facet.field, facet.limit, facet.mincount, wt=xml|json. The default field is text.',
      'Archived objects are hidden unless the query names the archived field (e.g. fq=archived:true or archived:*). Results are limited to objects the caller may read.',
    ],
    queryField: FIELDS.map((d): QueryField => ({
      name: d.name,
      description: [d.description],
      type: d.type,
      searchable: true,
      returnable: d.returnable,
      sortable: d.sortable,
      multivalued: d.multivalued,
    })),
  };
}
