import { AdapterError, allFormats, formatByExtension, formatByMediaType, OCTET_STREAM_FORMAT_ID, type ChecksumAlgorithmName } from '@memberkit/types';
import { sql, type RawBuilder } from 'kysely';
import type { SqlDialectName } from './dialect.js';

/**
 * A value taken from the legacy source: a column name of the source (a plain string, quoted
 * as an identifier) or an SQL expression over the source's columns (`{ sql: "'doi:' || id" }`,
 * written in the database's own dialect; columns may be qualified with the alias `s`).
 */
export type SqlValue = string | { sql: string };

/** How a date column is stored in the legacy schema. */
export type SqlTimeType =
  /** TIMESTAMP / DATETIME / timestamptz (read as UTC). */
  | 'timestamp'
  /** Integer milliseconds since 1970. */
  | 'epoch-ms'
  /** Integer (or fractional) seconds since 1970. */
  | 'epoch-s'
  /** ISO 8601 text (`2024-01-02T03:04:05Z`, `2024-01-02 03:04:05`). */
  | 'iso-text';

/** A date of the legacy source. */
export interface SqlTime {
  column: SqlValue;
  type: SqlTimeType;
}

/**
 * The declarative mapping from a legacy table, view or query to DataONE system metadata.
 * memberkit only reads the source (SELECT); what the archive lacks lives in memberkit's
 * overlay tables (`mk_overlay*`), created in the same database.
 */
export interface SqlMapping {
  /** Where the rows are: one row per object. A query is used as a derived table. */
  source: { table: string } | { view: string } | { query: string };
  /** The PID (required, unique across the source). */
  pid: SqlValue;
  /** The seriesId (SID); null or absent: none. */
  sid?: SqlValue;
  /**
   * The formatId: a column holding DataONE formatIds; or an extension or media-type column
   * translated through `map` (keys compared lower case, extensions without the dot) and then
   * through the federation's vocabulary (`formatByExtension` / `formatByMediaType`); or a
   * constant `{ value }`. Unknown values get `fallback` (default application/octet-stream).
   */
  formatId?:
    | SqlValue
    | { value: string }
    | { extension: SqlValue; map?: Record<string, string>; fallback?: string }
    | { mediaType: SqlValue; map?: Record<string, string>; fallback?: string };
  /** Size in bytes. Absent: taken from the storage (`stat`) and cached in the overlay. */
  size?: SqlValue;
  /**
   * The checksum the archive keeps, and its algorithm (a column or a constant name). Absent:
   * computed from the bytes once (`checksumAlgorithm`), cached in the overlay, computed again
   * only when the modified column changes.
   */
  checksum?: { value: SqlValue; algorithm: SqlValue | { value: ChecksumAlgorithmName } };
  /** Algorithm of computed checksums (default SHA-256). */
  checksumAlgorithm?: ChecksumAlgorithmName;
  /**
   * The row's last change: drives dateSysMetadataModified, so that CN polling (listObjects
   * fromDate) sees changes. For big archives map an indexed `epoch-ms` column or add an
   * expression index matching the conversion, so the sort is an index walk.
   */
  modified: SqlTime;
  /** dateUploaded; absent: the modified value. */
  uploaded?: SqlTime;
  /** The rightsHolder: a column, or `{ value }` for every object. */
  rightsHolder: SqlValue | { value: string };
  /** The submitter; absent: the rightsHolder. */
  submitter?: SqlValue | { value: string };
  /**
   * Read access: `{ value: 'public' }` (default: public read), `{ value: 'private' }` (rightsHolder
   * only), or a column whose value equals `publicValue` (default 'public') for public rows.
   */
  access?: { value: 'public' | 'private' } | { column: SqlValue; publicValue?: string };
  /**
   * Where the bytes are, as a storage key for the StorageAdapter given to the catalogue:
   * `path` (relative path under the tree storage root), `s3-key` (key in the S3 storage) or
   * `url` (kept as is, for a storage that fetches URLs). `prefix` is put in front of the value.
   */
  location: { column: SqlValue; kind: 'path' | 's3-key' | 'url'; prefix?: string };
  /**
   * Versions: `predecessor` is a value holding the PID this row obsoletes (null: first
   * version); or `series` + `version`: rows sharing `series` form a chain ordered by
   * `version` (numeric). obsoletedBy is derived in both cases.
   */
  obsolescence?: { predecessor: SqlValue } | { series: SqlValue; version: SqlValue };
  /** fileName of the system metadata (optional). */
  fileName?: SqlValue;
  /** The node recorded as origin and authoritative Member Node (optional). */
  nodeIdentifier?: string;
}

/** Column aliases of the mapped row `m` (the compiled inner SELECT). */
export interface MappedRow {
  mk_pid: unknown;
  mk_sid: unknown;
  mk_format: unknown;
  mk_size: unknown;
  mk_checksum: unknown;
  mk_algorithm: unknown;
  mk_modified: unknown;
  mk_uploaded: unknown;
  mk_rights_holder: unknown;
  mk_submitter: unknown;
  mk_public: unknown;
  mk_location: unknown;
  mk_file_name: unknown;
  mk_predecessor: unknown;
  mk_series: unknown;
  mk_version: unknown;
}

function value(v: SqlValue): RawBuilder<unknown> {
  return typeof v === 'string' ? sql.ref(`s.${v}`) : sql.raw(`(${v.sql})`);
}

function isConstant(v: unknown): v is { value: string } {
  return typeof v === 'object' && v !== null && 'value' in v;
}

/** An identifier compared and ordered by code point in every dialect. */
function identifier(dialect: SqlDialectName, v: RawBuilder<unknown>): RawBuilder<unknown> {
  if (dialect === 'postgres') return sql`CAST(${v} AS TEXT) COLLATE "C"`;
  if (dialect === 'mysql') return sql`CAST(${v} AS BINARY)`;
  return sql`CAST(${v} AS TEXT)`;
}

/** Epoch milliseconds of a legacy date, as an integer expression. */
function epochMsOf(dialect: SqlDialectName, t: SqlTime): RawBuilder<unknown> {
  const v = value(t.column);
  if (t.type === 'epoch-ms') return sql`CAST(${v} AS ${sql.raw(dialect === 'mysql' ? 'SIGNED' : 'BIGINT')})`;
  if (t.type === 'epoch-s') return sql`CAST(ROUND(${v} * 1000) AS ${sql.raw(dialect === 'mysql' ? 'SIGNED' : 'BIGINT')})`;
  if (dialect === 'postgres') {
    return t.type === 'timestamp'
      ? sql`CAST(ROUND(EXTRACT(EPOCH FROM ${v}) * 1000) AS BIGINT)`
      : sql`CAST(ROUND(EXTRACT(EPOCH FROM CAST(${v} AS TIMESTAMPTZ)) * 1000) AS BIGINT)`;
  }
  if (dialect === 'mysql') return sql`CAST(ROUND(UNIX_TIMESTAMP(${v}) * 1000) AS SIGNED)`;
  return sql`CAST(ROUND((julianday(${v}) - 2440587.5) * 86400000.0) AS INTEGER)`;
}

const NULL = sql`NULL`;

/** The inner SELECT: one row per object with the mapped values under `mk_*` aliases. */
export function compileSource(dialect: SqlDialectName, m: SqlMapping): RawBuilder<unknown> {
  const src = m.source;
  const from = 'query' in src ? sql`(${sql.raw(src.query)}) s` : sql`${sql.table('table' in src ? src.table : src.view)} s`;
  const fmt = m.formatId;
  const format =
    fmt === undefined ? NULL
      : isConstant(fmt) ? sql`${fmt.value}`
      : typeof fmt === 'object' && 'extension' in fmt ? sql`LOWER(${value(fmt.extension)})`
      : typeof fmt === 'object' && 'mediaType' in fmt ? sql`LOWER(${value(fmt.mediaType)})`
      : value(fmt as SqlValue);
  const constantOr = (v: SqlValue | { value: string } | undefined) => (v === undefined ? NULL : isConstant(v) ? sql`${v.value}` : value(v));
  const access = m.access ?? { value: 'public' as const };
  // On MySQL/MariaDB compared as bytes: a string literal of a view carries the collation of
  // the session that created it, which may differ from ours ("Illegal mix of collations").
  const isPublic = 'column' in access
    ? dialect === 'mysql'
      ? sql`CASE WHEN CAST(${value(access.column)} AS BINARY) = CAST(${access.publicValue ?? 'public'} AS BINARY) THEN 1 ELSE 0 END`
      : sql`CASE WHEN ${value(access.column)} = ${access.publicValue ?? 'public'} THEN 1 ELSE 0 END`
    : sql.raw(access.value === 'public' ? '1' : '0');
  const obs = m.obsolescence;
  const columns: Array<[keyof MappedRow, RawBuilder<unknown>]> = [
    ['mk_pid', identifier(dialect, value(m.pid))],
    ['mk_sid', m.sid === undefined ? NULL : identifier(dialect, value(m.sid))],
    ['mk_format', format],
    ['mk_size', m.size === undefined ? NULL : value(m.size)],
    ['mk_checksum', m.checksum === undefined ? NULL : value(m.checksum.value)],
    ['mk_algorithm', m.checksum === undefined ? NULL : constantOr(m.checksum.algorithm)],
    ['mk_modified', epochMsOf(dialect, m.modified)],
    ['mk_uploaded', m.uploaded === undefined ? NULL : epochMsOf(dialect, m.uploaded)],
    ['mk_rights_holder', constantOr(m.rightsHolder)],
    ['mk_submitter', constantOr(m.submitter)],
    ['mk_public', isPublic],
    ['mk_location', value(m.location.column)],
    ['mk_file_name', m.fileName === undefined ? NULL : value(m.fileName)],
    ['mk_predecessor', obs !== undefined && 'predecessor' in obs ? identifier(dialect, value(obs.predecessor)) : NULL],
    ['mk_series', obs !== undefined && 'series' in obs ? value(obs.series) : NULL],
    ['mk_version', obs !== undefined && 'version' in obs ? value(obs.version) : NULL],
  ];
  return sql`(SELECT ${sql.join(columns.map(([alias, expr]) => sql`${expr} AS ${sql.raw(alias)}`))} FROM ${from})`;
}

/** Translates the mapped format column to formatIds, both ways (for pushing formatId filters down). */
export class FormatTranslation {
  readonly #mode: 'none' | 'column' | 'constant' | 'extension' | 'mediaType';
  readonly #map = new Map<string, string>();
  readonly #fallback: string;

  constructor(mapping: SqlMapping['formatId']) {
    if (mapping === undefined) this.#mode = 'none';
    else if (isConstant(mapping)) this.#mode = 'constant';
    else if (typeof mapping === 'object' && 'extension' in mapping) this.#mode = 'extension';
    else if (typeof mapping === 'object' && 'mediaType' in mapping) this.#mode = 'mediaType';
    else this.#mode = 'column';
    const fallback = typeof mapping === 'object' && mapping !== null && 'fallback' in mapping ? mapping.fallback : undefined;
    this.#fallback = fallback ?? OCTET_STREAM_FORMAT_ID;
    if (this.#mode === 'extension' || this.#mode === 'mediaType') {
      for (const f of allFormats()) {
        const key = this.#mode === 'extension' ? f.extension.toLowerCase() : f.mediaType.toLowerCase();
        if (key === '') continue;
        const found = this.#mode === 'extension' ? formatByExtension(key) : formatByMediaType(key);
        if (found) this.#map.set(key, found.formatId);
      }
      const userMap = (mapping as { map?: Record<string, string> }).map ?? {};
      for (const [k, v] of Object.entries(userMap)) this.#map.set(this.#normal(k), v);
      if (this.#mode === 'extension') for (const [k, v] of [...this.#map]) this.#map.set(`.${k}`, v);
    }
  }

  #normal(raw: string): string {
    const lower = raw.trim().toLowerCase();
    return this.#mode === 'mediaType' ? lower.split(';')[0]!.trim() : lower;
  }

  /** The formatId of a mapped row's format value. */
  formatOf(raw: unknown): string {
    if (this.#mode === 'none') return this.#fallback;
    if (raw === null || raw === undefined) return this.#fallback;
    const s = Buffer.isBuffer(raw) ? raw.toString('utf8') : String(raw);
    if (this.#mode === 'column' || this.#mode === 'constant') return s;
    return this.#map.get(this.#normal(s)) ?? this.#fallback;
  }

  /** An SQL condition on `m.mk_format` selecting the rows whose formatId is `formatId`. */
  condition(formatId: string): RawBuilder<unknown> {
    const col = sql.ref('m.mk_format');
    if (this.#mode === 'none') return formatId === this.#fallback ? sql`1 = 1` : sql`1 = 0`;
    if (this.#mode === 'column' || this.#mode === 'constant') return sql`${col} = ${formatId}`;
    const keys = [...this.#map].filter(([, v]) => v === formatId).map(([k]) => k);
    const parts: RawBuilder<unknown>[] = [];
    if (keys.length > 0) parts.push(sql`${col} IN (${sql.join(keys.map((k) => sql`${k}`))})`);
    if (formatId === this.#fallback) {
      const all = [...this.#map.keys()];
      parts.push(sql`${col} IS NULL`, sql`${col} NOT IN (${sql.join(all.map((k) => sql`${k}`))})`);
    }
    return parts.length === 0 ? sql`1 = 0` : sql`(${sql.join(parts, sql` OR `)})`;
  }
}

/** Checks the mapping's shape early, with messages that name the field ('invalid'). */
export function validateMapping(m: SqlMapping): void {
  const fail = (field: string, why: string): never => {
    throw new AdapterError('invalid', `mapping.${field}: ${why}`);
  };
  if (typeof m !== 'object' || m === null) fail('', 'a mapping object is required');
  const src = m.source as Record<string, unknown> | undefined;
  if (!src || ['table', 'view', 'query'].filter((k) => typeof src[k] === 'string').length !== 1) fail('source', 'give exactly one of table, view or query');
  const isValue = (v: unknown) => typeof v === 'string' || (typeof v === 'object' && v !== null && typeof (v as { sql?: unknown }).sql === 'string');
  if (!isValue(m.pid)) fail('pid', 'a column name or { sql }');
  if (!m.modified || !isValue(m.modified.column) || !['timestamp', 'epoch-ms', 'epoch-s', 'iso-text'].includes(m.modified.type)) {
    fail('modified', '{ column, type: timestamp | epoch-ms | epoch-s | iso-text }');
  }
  if (m.rightsHolder === undefined) fail('rightsHolder', 'a column, { sql } or { value }');
  if (!m.location || !isValue(m.location.column) || !['path', 's3-key', 'url'].includes(m.location.kind)) fail('location', '{ column, kind: path | s3-key | url }');
  for (const name of ['sid', 'size', 'fileName'] as const) if (m[name] !== undefined && !isValue(m[name])) fail(name, 'a column name or { sql }');
}
