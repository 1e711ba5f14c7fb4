export interface Creator {
  /** Display name as the document gives it ("Given Family", or an organization's name). */
  name: string;
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
}

export function emptyMetadata(formatId: string): ScienceMetadata {
  return { formatId, creators: [], keywords: [], temporal: [], spatial: [], alternateIdentifiers: [] };
}
