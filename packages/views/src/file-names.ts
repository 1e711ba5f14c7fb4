/**
 * File names from uploaders, made safe for zips, file systems and pages: control characters
 * (C0, DEL, C1) and bidirectional controls (U+200E/F, U+202A–202E, U+2066–2069, U+061C) are
 * removed, so `invoice\u202Etxt.exe` cannot masquerade as a `.txt`, and a name is cut at
 * 200 UTF-8 bytes on a code point boundary, keeping its extension where it fits (`unzip` and
 * most file systems refuse names over 255 bytes).
 */
export const MAX_NAME_BYTES = 200;

// eslint-disable-next-line no-control-regex
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

/** The name without control and bidirectional control characters (for display and download names). */
export function stripControls(name: string): string {
  return name.replace(INVISIBLE, '');
}

const utf8 = (s: string): number => Buffer.byteLength(s, 'utf8');

/** The longest prefix of `s` of at most `maxBytes` UTF-8 bytes, cut between code points. */
export function cutUtf8(s: string, maxBytes: number): string {
  if (utf8(s) <= maxBytes) return s;
  let out = '';
  let bytes = 0;
  for (const cp of s) {
    const n = utf8(cp);
    if (bytes + n > maxBytes) break;
    out += cp;
    bytes += n;
  }
  return out;
}

/** A file name safe in a zip and on any file system (not yet unique: callers number duplicates). */
export function safeFileName(name: string, maxBytes = MAX_NAME_BYTES): string {
  const cleaned = stripControls(name.normalize('NFC'))
    .replace(/[/\\:*?"<>|]+/g, '_')
    .replace(/^[.\s]+/, '')
    .replace(/[.\s]+$/, '');
  if (cleaned === '') return 'object';
  return fitName(cleaned, maxBytes);
}

/** `name` within `maxBytes` UTF-8 bytes, its extension (up to 16 bytes) kept where possible. */
export function fitName(name: string, maxBytes = MAX_NAME_BYTES): string {
  if (utf8(name) <= maxBytes) return name;
  const dot = name.lastIndexOf('.');
  const ext = dot > 0 ? name.slice(dot) : '';
  if (ext && utf8(ext) <= 16 && utf8(ext) < maxBytes) {
    const stem = cutUtf8(name.slice(0, dot), maxBytes - utf8(ext)).replace(/[.\s]+$/, '');
    if (stem !== '') return `${stem}${ext}`;
  }
  return cutUtf8(name, maxBytes).replace(/[.\s]+$/, '') || 'object';
}
