export interface Creator {
  /** Display name ("Given Family" for a person whose name is split, else the name as given). */
  name: string;
  /**
   * The name exactly as the document writes it, when that differs from `name` ("Peach, A.",
   * "McClure, Sarah (Penn State)"): the federation's index searches names as written.
   */
  written?: string;
  /**
   * Person or organisation, the way the federation's indexer tells them apart (EML and ISO
   * individualName → person, organizationName/organisationName → organisation; DataCite
   * nameType; schema.org @type; names alone by their form). Absent when the document does
   * not say (an EML or ISO positionName only).
   */
  kind?: 'person' | 'organization';
  givenName?: string;
  familyName?: string;
  /** https://orcid.org/0000-... when the document carries one. */
  orcid?: string;
  organization?: string;
  email?: string;
}

export interface TemporalCoverage {
  /** Dates as written in the document (ISO 8601 where the format uses it). */
  begin?: string;
  end?: string;
}

export interface SpatialCoverage {
  west: number;
  east: number;
  north: number;
  south: number;
  description?: string;
}

/** A variable of a data entity (EML `attributeList/attribute`). */
export interface EntityAttribute {
  name: string;
  label?: string;
  definition?: string;
  /** EML standardUnit or customUnit. */
  unit?: string;
}

/**
 * A data entity a science metadata document describes (EML `dataTable`, `spatialRaster`,
 * `spatialVector`, `storedProcedure`, `view`, `otherEntity`): what a landing page shows beside
 * each file of the package.
 */
export interface DataEntity {
  /** The EML element: `dataTable`, `otherEntity`... */
  kind: string;
  id?: string;
  /** entityName (else physical objectName). */
  name: string;
  description?: string;
  /** physical/objectName: the file name the document gives. */
  objectName?: string;
  /** physical/distribution/online/url: often the object's resolve URL, naming its PID. */
  urls: string[];
  attributes: EntityAttribute[];
}

/** What a landing page, a search index or a citation needs from a science metadata document. */
export interface ScienceMetadata {
  formatId: string;
  title?: string;
  creators: Creator[];
  abstract?: string;
  keywords: string[];
  temporal: TemporalCoverage[];
  spatial: SpatialCoverage[];
  license?: { name?: string; url?: string };
  publisher?: string;
  pubDate?: string;
  alternateIdentifiers: string[];
  /** Named places without coordinates (DataCite geoLocationPlace alone, Dryad/Dublin Core spatial names). */
  places?: string[];
  /** Where the data can be had (schema.org distribution / DataDownload). */
  distribution?: Array<{ url?: string; name?: string; mediaType?: string }>;
  /** The data entities the document describes (EML), bounded (see eml.ts ENTITY_LIMITS); absent when none. */
  entities?: DataEntity[];
}

/** An OAI-ORE aggregation read from a resource map. */
export interface ResourceMap {
  /** URI of the ore:Aggregation. */
  aggregation: string;
  /** PID of the resource map itself when the map names it (dcterms:identifier of the ResourceMap). */
  resourceMap?: string;
  /** Member PIDs, in document order. */
  aggregated: string[];
  /** cito:documents / cito:isDocumentedBy relations, as PIDs: `metadata` documents `data`. */
  documents: Array<{ metadata: string; data: string }>;
  /**
   * `prov:atLocation` of members, as the map writes it (the federation's R client writes the
   * path of the file in the package, e.g. `data/raw/site1.csv`): at most one per member (the
   * first), members in document order. Untrusted text: check it before using it as a path.
   * Optional only for maps built by hand; readResourceMap always sets it.
   */
  locations?: Array<{ pid: string; location: string }>;
}

/**
 * What reading an untrusted document gave:
 * - `read`: the value (and the document's plain text when asked for);
 * - `unreadable`: not XML, not this format's shape, no aggregation... (as `undefined` before);
 * - `not-indexed`: the document exceeded a budget (size, depth, elements, attributes, text,
 *   links), took longer than the time budget or more memory than the worker may use. It is
 *   not read again for the same object version.
 */
export type ScienceRead<T> =
  | { status: 'read'; value: T; text?: string }
  | { status: 'unreadable'; reason: string }
  | { status: 'not-indexed'; reason: string };

export function emptyMetadata(formatId: string): ScienceMetadata {
  return { formatId, creators: [], keywords: [], temporal: [], spatial: [], alternateIdentifiers: [] };
}
