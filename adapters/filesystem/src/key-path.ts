import { sep } from 'node:path';
import { AdapterError } from '@memberkit/types';

/**
 * Checks that `key` is a plain relative POSIX path and returns its segments.
 * Refused with kind 'invalid': empty keys, NUL, backslashes, absolute paths (a leading `/`
 * or a drive letter), empty segments (`a//b`, trailing `/`), and `.` or `..` segments.
 * A refused key never reaches the file system.
 */
export function keySegments(key: unknown): string[] {
  if (typeof key !== 'string' || key.length === 0) throw new AdapterError('invalid', 'a storage key must be a non-empty string');
  if (key.includes('\0')) throw new AdapterError('invalid', 'a storage key must not contain NUL');
  if (key.includes('\\')) throw new AdapterError('invalid', 'a storage key must not contain a backslash');
  if (key.startsWith('/') || /^[A-Za-z]:/.test(key)) throw new AdapterError('invalid', 'a storage key must be a relative path');
  const segments = key.split('/');
  for (const s of segments) {
    if (s === '') throw new AdapterError('invalid', 'a storage key must not contain empty path segments');
    if (s === '.' || s === '..') throw new AdapterError('invalid', 'a storage key must not contain "." or ".." segments');
  }
  return segments;
}

/** True when `candidate` is `root` itself or a path below it (both absolute and normalised). */
export function isInside(root: string, candidate: string): boolean {
  const base = root.endsWith(sep) ? root : root + sep;
  return candidate === root || candidate.startsWith(base);
}

/** A key whose real path leaves the store's root (a symlink on the way): the caller's key is refused. */
export function outsideTheStore(): AdapterError {
  return new AdapterError('invalid', 'storage key resolves outside the store');
}

/** Error codes that mean "the file is not there" for a lookup. */
export function isAbsent(e: unknown): boolean {
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  return code === 'ENOENT' || code === 'ENOTDIR';
}

/** Wraps a file-system failure into an AdapterError with a kind the core can map. */
export function fsError(e: unknown, what: string): AdapterError {
  if (AdapterError.is(e)) return e;
  const code = (e as NodeJS.ErrnoException | undefined)?.code;
  const kind = code === 'ENOSPC' || code === 'EDQUOT' || code === 'EMFILE' || code === 'ENFILE' || code === 'EBUSY' || code === 'EAGAIN' || code === 'EIO'
    ? 'unavailable'
    : code === 'ELOOP' ? 'invalid' : 'internal';
  return new AdapterError(kind, `${what} failed${code ? ` (${code})` : ''}`, { cause: e });
}

/** Throws the signal's reason when it has been aborted. */
export function throwIfAborted(signal: AbortSignal | undefined): void {
  signal?.throwIfAborted();
}

/** Validates an inclusive byte range against a size; a start at or past the end is 'invalid', an end past it is clamped. */
export function resolveRange(range: { start: number; end?: number } | undefined, size: number): { start: number; end: number } | undefined {
  if (range === undefined) return undefined;
  const { start } = range;
  if (!Number.isSafeInteger(start) || start < 0) throw new AdapterError('invalid', 'a range start must be a non-negative integer');
  if (range.end !== undefined && (!Number.isSafeInteger(range.end) || range.end < start)) throw new AdapterError('invalid', 'a range end must be an integer not below its start');
  if (start >= size) throw new AdapterError('invalid', `range start ${start} is past the end of an object of ${size} bytes`);
  return { start, end: Math.min(range.end ?? size - 1, size - 1) };
}
