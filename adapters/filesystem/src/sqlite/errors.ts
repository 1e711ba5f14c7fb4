import { AdapterError } from '@memberkit/types';

/** The extended result code of a better-sqlite3 SqliteError (e.g. 'SQLITE_CONSTRAINT_UNIQUE'). */
export function sqliteCode(e: unknown): string | undefined {
  if (typeof e === 'object' && e !== null && typeof (e as { code?: unknown }).code === 'string') {
    const code = (e as { code: string }).code;
    return code.startsWith('SQLITE_') ? code : undefined;
  }
  return undefined;
}

/** True for a unique/primary-key violation, or the identifier-collision trigger of the schema. */
export function isIdentifierCollision(e: unknown): boolean {
  const code = sqliteCode(e);
  if (code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE') return true;
  return code === 'SQLITE_CONSTRAINT_TRIGGER' && e instanceof Error && e.message.includes('memberkit: identifier collision');
}

/**
 * Maps anything thrown by better-sqlite3 to the adapter error contract: AdapterErrors pass
 * through; SQLITE_BUSY / SQLITE_LOCKED (another process holds the lock past busy_timeout),
 * SQLITE_FULL and SQLITE_CANTOPEN become 'unavailable'; everything else 'internal', with the
 * original error as cause.
 */
export function toAdapterError(e: unknown, what: string): AdapterError {
  if (AdapterError.is(e)) return e;
  const code = sqliteCode(e);
  if (code !== undefined && /^SQLITE_(BUSY|LOCKED|FULL|CANTOPEN)/.test(code)) {
    return new AdapterError('unavailable', `${what}: SQLite is unavailable (${code})`, { cause: e });
  }
  return new AdapterError('internal', `${what} failed${code ? ` (${code})` : ''}`, { cause: e });
}
