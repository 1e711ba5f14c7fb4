import type { ResourceMap } from '@memberkit/science';
import { safeFileName } from './file-names.js';

/**
 * Where a map puts a member in the package (`prov:atLocation`), as a safe relative path:
 * `..`, `.` and empty segments, absolute paths, drive letters and URLs are dropped,
 * each segment is made a safe file name (file-names.ts). Undefined when nothing usable is left.
 */
export function safeLocation(raw: string): string | undefined {
  let s = raw.trim();
  // A URL names no place in the package; a file: URL or a plain path may.
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(s) && !/^file:\/\//i.test(s)) return undefined;
  s = s.replace(/^file:\/\/[^/]*/i, '');
  try {
    s = /%[0-9a-f]{2}/i.test(s) ? decodeURIComponent(s) : s;
  } catch {
    /* keep as written */
  }
  const segments = s
    .replace(/\\/g, '/')
    .replace(/^[a-z]:/i, '')
    .split('/')
    .filter((seg) => seg !== '' && seg !== '.' && seg !== '..')
    .map((seg) => safeFileName(seg));
  if (segments.length === 0) return undefined;
  return segments.slice(-16).join('/');
}

/** The locations a map gives, by member identifier (as the science reader exposes them). */
export function locationsOf(map: ResourceMap): Map<string, string> {
  const out = new Map<string, string>();
  const raw = (map as ResourceMap & { locations?: unknown }).locations;
  const entries: Array<[string, unknown]> =
    raw instanceof Map ? [...(raw as Map<string, unknown>)] : Array.isArray(raw) ? (raw as Array<{ pid?: unknown; location?: unknown }>).map((e) => [String(e.pid), e.location]) : raw && typeof raw === 'object' ? Object.entries(raw) : [];
  for (const [id, loc] of entries) {
    if (typeof loc !== 'string') continue;
    const safe = safeLocation(loc);
    if (safe !== undefined && !out.has(id)) out.set(id, safe);
  }
  return out;
}
