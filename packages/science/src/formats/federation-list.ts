/**
 * The federation's format list (vendored spec/formats/objectFormatListV2.xml, generated into
 * @memberkit/types) seen from identification: membership, and the format a file extension or
 * media type means when the content says nothing better.
 */
import { allFormats, formatById, type FormatRecord } from '@memberkit/types';

export function isListedFormat(formatId: string): boolean {
  return formatById(formatId) !== undefined;
}

export function listedFormat(formatId: string): FormatRecord | undefined {
  return formatById(formatId);
}

/**
 * Extensions whose first DATA format in the list is a specialised reading of generic
 * content (`.xml` → WaterML 1.0, `.rdf` → N3, `.jpg` → JPEG 2000, `.nc` → CF-1.0): here
 * they get the plain format, and content identification refines it.
 */
const PREFERRED_BY_EXTENSION: Readonly<Record<string, string>> = {
  xml: 'text/xml',
  rdf: 'application/rdf+xml',
  owl: 'application/rdf+xml',
  n3: 'text/n3',
  nt: 'http://www.w3.org/TR/rdf-testcases/#ntriples',
  nc: 'netCDF-3',
  nc4: 'netCDF-4',
  cdf: 'application/x-cdf',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  jp2: 'image/jp2',
  tif: 'image/tiff',
  tiff: 'image/tiff',
  mat: 'application/MATLAB-v4', // versions 5 and later have a header that content identification reads
  json: 'application/json',
  jsonld: 'application/json-ld',
  geojson: 'application/geo+json',
  zip: 'application/zip',
  h5: 'application/x-hdf5',
  hdf5: 'application/x-hdf5',
  he5: 'application/x-hdf5',
  hdf: 'application/x-hdf',
  h4: 'application/x-hdf',
  he4: 'application/x-hdf',
  gz: 'application/x-gzip',
  tgz: 'application/x-gzip',
  bz2: 'application/x-bzip2',
  tsv: 'text/tsv',
  tab: 'text/tsv',
  htm: 'text/html',
  html: 'text/html',
  md: 'text/markdown',
  rmd: 'text/x-rmarkdown',
  r: 'application/R',
  eps: 'application/postscript',
  mpeg: 'video/mpeg',
  sqlite: 'application/vnd.sqlite3',
  sqlite3: 'application/vnd.sqlite3',
  fit: 'application/fits',
  fa: 'application/x-fasta',
  fna: 'application/x-fasta',
  yaml: 'text/plain',
  yml: 'text/plain',
  log: 'text/plain',
};

/**
 * Extensions that name a file's format well enough that scanners need not read its bytes (a
 * GET per object in S3): content identification could not tell more of these. `.xml`,
 * `.json`, `.rdf`, `.nc`, `.tif`, `.zip`, `.mat` and unknown extensions are read.
 */
export const DECISIVE_EXTENSIONS: ReadonlySet<string> = new Set([
  'csv', 'tsv', 'tab', 'txt', 'pdf', 'png', 'jpg', 'jpeg', 'gif', 'bmp', 'jp2', 'xlsx', 'docx', 'pptx', 'xls', 'doc', 'ppt',
  'r', 'py', 'sh', 'm', 'sas', 'md', 'rmd', 'html', 'htm', 'mp3', 'mp4', 'avi', 'wav', 'mov', 'mpg', 'mpeg', 'wmv', 'wma',
  'gz', 'tgz', 'bz2', 'tar', 'rar', 'parquet', 'fits', 'gpkg', 'ipynb', 'geojson', 'rtf', 'ps', 'eps', 'svg', 'kml', 'kmz', 'gpx',
  'fasta', 'fa', 'fna', 'nxs', 'ttl', 'n3', 'nt', 'h4', 'hdf', 'he4', 'h5', 'hdf5', 'he5', 'sqlite', 'db',
]);

/** Extensions that say nothing beyond "some text or bytes": content decides for these. */
export const UNINFORMATIVE_EXTENSIONS: ReadonlySet<string> = new Set(['', 'xml', 'json', 'dat', 'data', 'bin', 'out', 'asc', 'raw']);

const byExtension = new Map<string, string>();
for (const f of allFormats()) {
  // DATA formats only: an extension alone never makes a file metadata.
  if (f.formatType !== 'DATA' || !f.extension) continue;
  const ext = f.extension.toLowerCase();
  const prev = byExtension.get(ext);
  // The plain format (formatId = media type) reads more truly than the first specialised one.
  if (prev === undefined || (f.formatId === f.mediaType && formatById(prev)?.mediaType !== prev)) byExtension.set(ext, f.formatId);
}
for (const [ext, formatId] of Object.entries(PREFERRED_BY_EXTENSION)) if (formatById(formatId)) byExtension.set(ext, formatId);

/** The DATA format of a file extension (no dot, any case), when the list has one. */
export function formatOfExtension(extension: string): string | undefined {
  return byExtension.get(extension.toLowerCase());
}

/** The format of a media type (parameters ignored): the one whose formatId is the type, else the list's first DATA one. */
export function formatOfMediaType(mediaType: string): string | undefined {
  const t = mediaType.split(';')[0]!.trim().toLowerCase();
  if (t === '' || t === 'application/octet-stream' || t === 'binary/octet-stream') return undefined;
  if (formatById(t)) return t;
  for (const f of allFormats()) if (f.formatType === 'DATA' && f.mediaType.toLowerCase() === t) return f.formatId;
  return undefined;
}

/** The extension of a file name or path: after its last dot, lower case; '' when none or when it is all digits (`Blandy.76.2`). */
export function extensionOf(name: string): string {
  const base = name.slice(Math.max(name.lastIndexOf('/'), name.lastIndexOf('\\')) + 1);
  const dot = base.lastIndexOf('.');
  if (dot <= 0) return '';
  const ext = base.slice(dot + 1).toLowerCase();
  return /^\d+$/.test(ext) || ext.length > 16 ? '' : ext;
}
