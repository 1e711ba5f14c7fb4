// A realistic legacy archive for mapping-mode tests and the example: `datasets` (versioned:
// dataset_version + supersedes), `files` (one row per file, path under a files root, MD5 for
// some), and a view `catalogue_files` joining them. Written for SQLite and PostgreSQL.
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { SqlDialectName, SqlMapping } from '../../src/index.js';
import type { FreshDatabase } from './databases.js';

export interface LegacyFile {
  id: number;
  datasetId: number;
  name: string;
  relpath: string;
  mediaType: string;
  bytes: string;
  md5: boolean;
}

export const DATASETS = [
  // id, accession, version, supersedes, owner, public, updated
  { id: 1, accession: 'ds-100', version: 1, supersedes: null, owner: 'https://orcid.org/0000-0001-0000-0001', isPublic: true, updated: '2024-01-01 10:00:00' },
  { id: 2, accession: 'ds-100', version: 2, supersedes: 1, owner: 'https://orcid.org/0000-0001-0000-0001', isPublic: true, updated: '2024-02-01 10:00:00' },
  { id: 3, accession: 'ds-100', version: 3, supersedes: 2, owner: 'https://orcid.org/0000-0001-0000-0001', isPublic: true, updated: '2024-03-01 10:00:00' },
  { id: 4, accession: 'ds-200', version: 1, supersedes: null, owner: 'https://orcid.org/0000-0002-0000-0002', isPublic: false, updated: '2024-01-15 08:30:00' },
  { id: 5, accession: 'ds-300', version: 1, supersedes: null, owner: 'https://orcid.org/0000-0003-0000-0003', isPublic: true, updated: '2024-01-20 12:00:00' },
];

export const FILES: LegacyFile[] = [
  { id: 11, datasetId: 1, name: 'obs.csv', relpath: 'ds-100/v1/obs.csv', mediaType: 'text/csv', bytes: 'site,value\nA,1\n', md5: true },
  { id: 12, datasetId: 2, name: 'obs.csv', relpath: 'ds-100/v2/obs.csv', mediaType: 'text/csv', bytes: 'site,value\nA,1\nB,2\n', md5: false },
  { id: 13, datasetId: 3, name: 'obs.csv', relpath: 'ds-100/v3/obs.csv', mediaType: 'text/csv', bytes: 'site,value\nA,1\nB,2\nC,3\n', md5: true },
  { id: 14, datasetId: 3, name: 'readme.txt', relpath: 'ds-100/v3/readme.txt', mediaType: 'text/plain', bytes: 'Observations, third release.\n', md5: false },
  { id: 21, datasetId: 4, name: 'secret.csv', relpath: 'ds-200/v1/secret.csv', mediaType: 'text/csv', bytes: 'x\n1\n', md5: true },
  { id: 31, datasetId: 5, name: 'map.png', relpath: 'ds-300/v1/map file.png', mediaType: 'image/png', bytes: '\u0089PNG fake', md5: false },
];

const md5 = async (s: string) => (await import('node:crypto')).createHash('md5').update(s).digest('hex');

/** The legacy DDL + rows for `dialect`, as statements. */
export async function legacyStatements(dialect: SqlDialectName): Promise<string[]> {
  const ts = dialect === 'postgres' ? 'TIMESTAMP' : 'TEXT';
  const bool = dialect === 'postgres' ? 'BOOLEAN' : 'INTEGER';
  const q = (s: string | null) => (s === null ? 'NULL' : `'${s.replace(/'/g, "''")}'`);
  const b = (v: boolean) => (dialect === 'postgres' ? String(v) : v ? '1' : '0');
  const statements = [
    `CREATE TABLE datasets (
      id INTEGER PRIMARY KEY, accession TEXT NOT NULL, dataset_version INTEGER NOT NULL,
      supersedes INTEGER REFERENCES datasets (id), owner_orcid TEXT NOT NULL, is_public ${bool} NOT NULL,
      created_at ${ts} NOT NULL, updated_at ${ts} NOT NULL)`,
    `CREATE TABLE files (
      id INTEGER PRIMARY KEY, dataset_id INTEGER NOT NULL REFERENCES datasets (id), file_name TEXT NOT NULL,
      relpath TEXT NOT NULL, media_type TEXT, size_bytes INTEGER NOT NULL, md5 TEXT, updated_at ${ts} NOT NULL)`,
    // The catalogue view the mapping reads: one row per file of each dataset version.
    `CREATE VIEW catalogue_files AS
      SELECT f.id AS file_id,
             d.accession || '.v' || d.dataset_version || '/' || f.file_name AS pid,
             d.accession || '/' || f.file_name AS series_key,
             d.dataset_version AS version,
             (SELECT p.accession || '.v' || p.dataset_version || '/' || f.file_name FROM datasets p
               JOIN files pf ON pf.dataset_id = p.id AND pf.file_name = f.file_name WHERE p.id = d.supersedes) AS previous_pid,
             f.file_name, f.relpath, f.media_type, f.size_bytes, f.md5, d.owner_orcid,
             CASE WHEN d.is_public = ${b(true)} THEN 'public' ELSE 'private' END AS visibility,
             CASE WHEN f.updated_at > d.updated_at THEN f.updated_at ELSE d.updated_at END AS modified_at,
             d.created_at
      FROM files f JOIN datasets d ON d.id = f.dataset_id`,
  ];
  for (const d of DATASETS) {
    statements.push(`INSERT INTO datasets VALUES (${d.id}, ${q(d.accession)}, ${d.version}, ${d.supersedes ?? 'NULL'}, ${q(d.owner)}, ${b(d.isPublic)}, ${q(d.updated)}, ${q(d.updated)})`);
  }
  for (const f of FILES) {
    const ds = DATASETS.find((d) => d.id === f.datasetId)!;
    statements.push(
      `INSERT INTO files VALUES (${f.id}, ${f.datasetId}, ${q(f.name)}, ${q(f.relpath)}, ${q(f.mediaType)}, ${Buffer.byteLength(f.bytes)}, ${f.md5 ? q(await md5(f.bytes)) : 'NULL'}, ${q(ds.updated)})`,
    );
  }
  return statements;
}

/** Creates the legacy schema in `db` and its files under `root`. */
export async function createLegacyArchive(db: FreshDatabase, root: string): Promise<void> {
  for (const statement of await legacyStatements(db.dialect)) await db.exec(statement);
  for (const f of FILES) {
    const file = join(root, ...f.relpath.split('/'));
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, f.bytes);
  }
}

/** The mapping of the view (series + version obsolescence). */
export function legacyMapping(dialect: SqlDialectName, options: { predecessor?: boolean } = {}): SqlMapping {
  return {
    source: { view: 'catalogue_files' },
    pid: 'pid',
    formatId: { mediaType: 'media_type' },
    size: 'size_bytes',
    checksum: { value: 'md5', algorithm: { value: 'MD5' } },
    checksumAlgorithm: 'SHA-256',
    modified: { column: 'modified_at', type: dialect === 'postgres' ? 'timestamp' : 'iso-text' },
    uploaded: { column: 'created_at', type: dialect === 'postgres' ? 'timestamp' : 'iso-text' },
    rightsHolder: 'owner_orcid',
    access: { column: 'visibility', publicValue: 'public' },
    location: { column: 'relpath', kind: 'path' },
    obsolescence: options.predecessor ? { predecessor: 'previous_pid' } : { series: 'series_key', version: 'version' },
    fileName: 'file_name',
  };
}
