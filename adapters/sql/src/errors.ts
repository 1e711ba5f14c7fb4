import { AdapterError } from '@memberkit/types';

interface DriverError {
  code?: unknown;
  errno?: unknown;
}

function fields(e: unknown): DriverError {
  return typeof e === 'object' && e !== null ? (e as DriverError) : {};
}

/**
 * A unique or primary-key violation: PostgreSQL SQLSTATE 23505, MySQL/MariaDB
 * ER_DUP_ENTRY (1062), SQLite SQLITE_CONSTRAINT_PRIMARYKEY / _UNIQUE.
 */
export function isUniqueViolation(e: unknown): boolean {
  const { code, errno } = fields(e);
  return code === '23505' || errno === 1062 || code === 'ER_DUP_ENTRY' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY' || code === 'SQLITE_CONSTRAINT_UNIQUE';
}

/**
 * A failure that goes away when the transaction is run again: PostgreSQL serialization
 * failure (40001) and deadlock (40P01), MySQL deadlock (1213) and lock wait timeout (1205),
 * SQLite BUSY/LOCKED.
 */
export function isRetryable(e: unknown): boolean {
  const { code, errno } = fields(e);
  if (code === '40001' || code === '40P01' || errno === 1213 || errno === 1205) return true;
  return typeof code === 'string' && /^SQLITE_(BUSY|LOCKED)/.test(code);
}

/** Connection-level failures: the database is down, overloaded or out of space. */
function isUnavailable(e: unknown): boolean {
  const { code, errno } = fields(e);
  if (typeof code === 'string') {
    if (/^(ECONNREFUSED|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENOTFOUND|EPIPE|PROTOCOL_CONNECTION_LOST|SQLITE_(FULL|CANTOPEN))$/.test(code)) return true;
    // PostgreSQL classes 08 (connection), 53 (resources), 57P (operator intervention)
    if (/^(08|53|57P)/.test(code)) return true;
  }
  if (errno === 1040 || errno === 1203) return true; // too many connections
  return e instanceof Error && /Connection terminated|timeout exceeded when trying to connect/i.test(e.message);
}

/** Invalid input bytes: PostgreSQL 22021 (bad UTF-8, NUL) and 22P05 (untranslatable). */
function isInvalidInput(e: unknown): boolean {
  const { code, errno } = fields(e);
  return code === '22021' || code === '22P05' || code === '22001' || errno === 1406 || errno === 1366;
}

/**
 * Maps anything a driver throws to the adapter error contract: AdapterErrors pass through;
 * retryable and connection failures become 'unavailable', unique violations
 * 'already-exists', bad input 'invalid', everything else 'internal' (cause kept, never shown).
 */
export function toAdapterError(e: unknown, what: string): AdapterError {
  if (AdapterError.is(e)) return e;
  if (isUniqueViolation(e)) return new AdapterError('already-exists', `${what}: an identifier is already in use`, { cause: e });
  if (isRetryable(e) || isUnavailable(e)) return new AdapterError('unavailable', `${what}: the database is unavailable, retry later`, { cause: e });
  if (isInvalidInput(e)) return new AdapterError('invalid', `${what}: a value cannot be stored`, { cause: e });
  return new AdapterError('internal', `${what} failed`, { cause: e });
}
