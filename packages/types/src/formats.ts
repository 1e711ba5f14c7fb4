import type { ObjectFormat, ObjectFormatList } from './models.js';
import { OBJECT_FORMATS } from './generated/object-formats.data.js';

/** One entry of the federation's format list, flattened. */
export interface FormatRecord {
  formatId: string;
  formatName: string;
  /** DATA, METADATA or RESOURCE. */
  formatType: string;
  mediaType: string;
  /** Usual file extension without the dot ('' when the list gives none). */
  extension: string;
}

const byId = new Map<string, FormatRecord>();
const byExtension = new Map<string, FormatRecord>();
const byMediaType = new Map<string, FormatRecord>();

// Preferred DATA formats for ambiguous extensions: the list has several formats per
// extension (xml, txt...) and the first DATA format is the least surprising reading.
for (const f of OBJECT_FORMATS) {
  byId.set(f.formatId, f);
  const ext = f.extension.toLowerCase();
  const prev = ext ? byExtension.get(ext) : undefined;
  if (ext && (!prev || (prev.formatType !== 'DATA' && f.formatType === 'DATA'))) byExtension.set(ext, f);
  const mt = f.mediaType.toLowerCase();
  const prevMt = byMediaType.get(mt);
  if (!prevMt || (prevMt.formatType !== 'DATA' && f.formatType === 'DATA')) byMediaType.set(mt, f);
}

/** The generic format used when nothing better is known. */
export const OCTET_STREAM_FORMAT_ID = 'application/octet-stream';

export function allFormats(): readonly FormatRecord[] {
  return OBJECT_FORMATS;
}

export function formatById(formatId: string): FormatRecord | undefined {
  return byId.get(formatId);
}

/** Format for a file extension (with or without the dot, any case). */
export function formatByExtension(extension: string): FormatRecord | undefined {
  return byExtension.get(extension.replace(/^\./, '').toLowerCase());
}

/** Format for a media type (parameters ignored). */
export function formatByMediaType(mediaType: string): FormatRecord | undefined {
  return byMediaType.get(mediaType.split(';')[0]!.trim().toLowerCase());
}

/** Format of a file name by its last extension, or the octet-stream format. */
export function formatForFileName(fileName: string): FormatRecord {
  const dot = fileName.lastIndexOf('.');
  const slash = Math.max(fileName.lastIndexOf('/'), fileName.lastIndexOf('\\'));
  const found = dot > slash + 1 ? formatByExtension(fileName.slice(dot + 1)) : undefined;
  return found ?? formatById(OCTET_STREAM_FORMAT_ID) ?? {
    formatId: OCTET_STREAM_FORMAT_ID, formatName: 'Octet Stream', formatType: 'DATA', mediaType: 'application/octet-stream', extension: 'data',
  };
}

export function toObjectFormat(f: FormatRecord): ObjectFormat {
  return {
    formatId: f.formatId,
    formatName: f.formatName,
    formatType: f.formatType,
    mediaType: { name: f.mediaType, property: [] },
    ...(f.extension ? { extension: f.extension } : {}),
  };
}

export function objectFormatList(): ObjectFormatList {
  const objectFormat = OBJECT_FORMATS.map(toObjectFormat);
  return { count: objectFormat.length, start: 0, total: objectFormat.length, objectFormat };
}
