/**
 * Binary formats by their signatures (magic bytes), for those the federation's list has.
 * NetCDF classic headers are read far enough to find a global `Conventions` attribute naming
 * a CF version, which the list has as formats of their own.
 */
import type { ContentMatch } from './content-match.js';

const CF_LISTED = /^CF-1\.[0-7]$/;

// Module functions, not closures per call: every file a scan identifies runs each check.
function at(b: Uint8Array, offset: number, ...bytes: number[]): boolean {
  for (let k = 0; k < bytes.length; k++) if (b[offset + k] !== bytes[k]) return false;
  return true;
}

function ascii(b: Uint8Array, offset: number, s: string): boolean {
  for (let k = 0; k < s.length; k++) if (b[offset + k] !== s.charCodeAt(k)) return false;
  return true;
}

function hit(formatId: string, mediaType: string, reason: string): ContentMatch {
  return { formatId, exact: true, mediaType, reason };
}

export function matchMagic(b: Uint8Array, extension: string): ContentMatch | undefined {
  if (ascii(b, 0, 'CDF') && (b[3] === 1 || b[3] === 2 || b[3] === 5)) {
    const conventions = netcdfConventions(b);
    const cf = conventions?.split(/[\s,]+/).find((c) => /^CF-\d/.test(c));
    if (cf && CF_LISTED.test(cf)) return hit(cf, 'application/netcdf', `netCDF classic with Conventions ${conventions}`);
    if (cf) return hit('netCDF-CF', 'application/netcdf', `netCDF classic with Conventions ${conventions}`);
    return hit('netCDF-3', 'application/netcdf', 'netCDF classic signature');
  }
  if (ascii(b, 0, 'MATLAB 7.3 MAT-file')) return hit('application/MATLAB-v7.3', 'application/octet-stream', 'MATLAB 7.3 header');
  // Version 5 headers are shared by MATLAB 6 and 7 files (7 may compress); 7 reads both.
  if (ascii(b, 0, 'MATLAB 5.0 MAT-file')) return hit('application/MATLAB-v7', 'application/octet-stream', 'MATLAB 5 header');
  for (const offset of [0, 512, 1024, 2048, 4096]) {
    if (at(b, offset, 0x89, 0x48, 0x44, 0x46, 0x0d, 0x0a, 0x1a, 0x0a)) {
      return extension === 'nc' || extension === 'nc4'
        ? hit('netCDF-4', 'application/netcdf', 'HDF5 signature in a .nc file')
        : hit('application/x-hdf5', 'application/x-hdf5', 'HDF5 signature');
    }
  }
  if (at(b, 0, 0x0e, 0x03, 0x13, 0x01)) return hit('application/x-hdf', 'application/x-hdf', 'HDF4 signature');
  if (ascii(b, 0, '%PDF-')) return hit('application/pdf', 'application/pdf', 'PDF signature');
  if (at(b, 0, 0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a)) return hit('image/png', 'image/png', 'PNG signature');
  if (ascii(b, 0, 'GIF87a') || ascii(b, 0, 'GIF89a')) return hit('image/gif', 'image/gif', 'GIF signature');
  if (at(b, 0, 0xff, 0xd8, 0xff)) return hit('image/jpeg', 'image/jpeg', 'JPEG signature');
  if (at(b, 0, 0x00, 0x00, 0x00, 0x0c, 0x6a, 0x50, 0x20, 0x20, 0x0d, 0x0a, 0x87, 0x0a)) return hit('image/jp2', 'image/jp2', 'JPEG 2000 signature');
  if (ascii(b, 0, 'II*\0') || ascii(b, 0, 'MM\0*')) {
    return geotiff(b) ? hit('image/geotiff', 'image/tiff', 'TIFF with GeoTIFF keys') : hit('image/tiff', 'image/tiff', 'TIFF signature');
  }
  if (ascii(b, 0, 'BM') && b.length >= 14 && at(b, 6, 0, 0, 0, 0)) return hit('image/bmp', 'image/bmp', 'BMP signature');
  if (at(b, 0, 0x50, 0x4b, 0x03, 0x04) || at(b, 0, 0x50, 0x4b, 0x05, 0x06)) return zipFamily(b, extension);
  if (at(b, 0, 0x1f, 0x8b)) return hit('application/x-gzip', 'application/x-gzip', 'gzip signature');
  if (ascii(b, 0, 'BZh') && b[3]! >= 0x31 && b[3]! <= 0x39) return hit('application/x-bzip2', 'application/x-bzip2', 'bzip2 signature');
  if (ascii(b, 257, 'ustar')) return hit('application/x-tar', 'application/x-tar', 'tar header');
  if (ascii(b, 0, 'Rar!\x1a\x07')) return hit('application/x-rar-compressed', 'application/x-rar-compressed', 'RAR signature');
  if (ascii(b, 0, 'SQLite format 3\0')) {
    return ascii(b, 68, 'GPKG') || extension === 'gpkg'
      ? hit('application/geopackage+sqlite3', 'application/geopackage+sqlite3', 'GeoPackage (SQLite) header')
      : hit('application/vnd.sqlite3', 'application/vnd.sqlite3', 'SQLite header');
  }
  if (ascii(b, 0, 'PAR1')) return hit('application/vnd.apache.parquet', 'application/vnd.apache.parquet', 'Parquet signature');
  if (ascii(b, 0, 'SIMPLE  =')) return hit('application/fits', 'application/fits', 'FITS header');
  if (at(b, 0, 0xcd, 0xf3, 0x00, 0x01) || at(b, 0, 0xcd, 0xf2, 0x60, 0x02)) return hit('application/x-cdf', 'application/x-cdf', 'CDF signature');
  if (ascii(b, 0, '{\\rtf')) return hit('application/rtf', 'application/rtf', 'RTF signature');
  if (ascii(b, 0, '%!PS')) return hit('application/postscript', 'application/postscript', 'PostScript signature');
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'WAVE')) return hit('audio/x-wav', 'audio/x-wav', 'WAVE signature');
  if (ascii(b, 0, 'RIFF') && ascii(b, 8, 'AVI ')) return hit('video/avi', 'video/avi', 'AVI signature');
  if (ascii(b, 4, 'ftyp')) return ascii(b, 8, 'qt  ') ? hit('video/quicktime', 'video/quicktime', 'QuickTime signature') : hit('video/mp4', 'video/mp4', 'MPEG-4 signature');
  if (ascii(b, 0, 'ID3')) return hit('audio/mpeg', 'audio/mpeg', 'MP3 (ID3) signature');
  if (at(b, 0, 0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1)) {
    // OLE2 compound files: Word, Excel and PowerPoint share the container; the name says which.
    const byExt: Record<string, string> = { doc: 'application/msword', xls: 'application/vnd.ms-excel', ppt: 'application/vnd.ms-powerpoint' };
    const f = byExt[extension];
    return f ? hit(f, f, 'OLE2 container') : undefined;
  }
  return undefined;
}

function zipFamily(b: Uint8Array, extension: string): ContentMatch {
  // The first entries of an Office Open XML package name its kind.
  const names = new TextDecoder('latin1').decode(b.subarray(0, Math.min(b.length, 4096)));
  const f = (formatId: string, reason: string): ContentMatch => ({ formatId, exact: true, mediaType: formatId, reason });
  if (names.includes('word/')) return f('application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'zip holding word/');
  if (names.includes('xl/')) return f('application/vnd.openxmlformats-officedocument.spreadsheetml.sheet', 'zip holding xl/');
  if (names.includes('ppt/')) return f('application/vnd.openxmlformats-officedocument.presentationml.presentation', 'zip holding ppt/');
  if (extension === 'kmz') return f('application/vnd.google-earth.kmz', 'zip named .kmz');
  return { formatId: 'application/zip', exact: false, mediaType: 'application/zip', reason: 'zip signature' };
}

/** True when a TIFF's first IFD holds the GeoKeyDirectory tag (34735). */
function geotiff(b: Uint8Array): boolean {
  const le = b[0] === 0x49;
  const u16 = (o: number) => (o + 2 <= b.length ? (le ? b[o]! | (b[o + 1]! << 8) : (b[o]! << 8) | b[o + 1]!) : -1);
  const u32 = (o: number) => (o + 4 <= b.length ? (le ? (b[o]! | (b[o + 1]! << 8) | (b[o + 2]! << 16)) + b[o + 3]! * 2 ** 24 : b[o]! * 2 ** 24 + ((b[o + 1]! << 16) | (b[o + 2]! << 8) | b[o + 3]!)) : -1);
  const ifd = u32(4);
  const count = ifd >= 0 ? u16(ifd) : -1;
  for (let k = 0; k < count && k < 512; k++) {
    const tag = u16(ifd + 2 + 12 * k);
    if (tag < 0) return false;
    if (tag === 34735) return true;
  }
  return false;
}

/**
 * The `Conventions` global attribute of a netCDF classic (CDF-1, CDF-2) or CDF-5 header, when
 * it lies within the bytes given. Every length is checked against the buffer.
 */
export function netcdfConventions(b: Uint8Array): string | undefined {
  const version = b[3];
  const wide = version === 5; // CDF-5: 64-bit counts and lengths
  const view = new DataView(b.buffer, b.byteOffset, b.byteLength);
  let p = 4;
  const need = (k: number) => p + k <= b.length;
  const count = (): number | undefined => {
    if (wide) {
      if (!need(8)) return undefined;
      const hi = view.getUint32(p), lo = view.getUint32(p + 4);
      p += 8;
      return hi === 0 ? lo : undefined;
    }
    if (!need(4)) return undefined;
    const v = view.getUint32(p);
    p += 4;
    return v;
  };
  const tag = (): number | undefined => {
    if (!need(4)) return undefined;
    const v = view.getUint32(p);
    p += 4;
    return v;
  };
  const name = (): string | undefined => {
    const len = count();
    if (len === undefined || len > 256 || !need(len)) return undefined;
    const s = new TextDecoder('utf-8').decode(b.subarray(p, p + len));
    p += (len + 3) & ~3;
    return s;
  };
  if (count() === undefined) return undefined; // numrecs
  // dim_list: NC_DIMENSION (10) and its dimensions, or ABSENT (two zeros).
  const dimTag = tag();
  const dims = count();
  if (dimTag === undefined || dims === undefined || (dimTag !== 10 && dimTag !== 0) || dims > 10_000) return undefined;
  for (let k = 0; k < dims; k++) {
    if (name() === undefined || count() === undefined) return undefined;
  }
  // gatt_list: NC_ATTRIBUTE (12).
  const attTag = tag();
  const atts = count();
  if (attTag !== 12 || atts === undefined || atts > 10_000) return undefined;
  const size: Record<number, number> = { 1: 1, 2: 1, 3: 2, 4: 4, 5: 4, 6: 8, 7: 1, 8: 2, 9: 4, 10: 8, 11: 8 };
  for (let k = 0; k < atts; k++) {
    const attName = name();
    const type = tag();
    const nelems = count();
    if (attName === undefined || type === undefined || nelems === undefined || size[type] === undefined) return undefined;
    const bytes = nelems * size[type]!;
    if (!need(bytes)) return undefined;
    if (attName === 'Conventions' && type === 2) return new TextDecoder('utf-8').decode(b.subarray(p, p + bytes)).replace(/\0+$/, '').trim();
    p += (bytes + 3) & ~3;
  }
  return undefined;
}
