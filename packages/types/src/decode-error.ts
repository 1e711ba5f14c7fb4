/**
 * Raised when a document or value cannot be decoded: malformed or unsafe XML, a wrong root
 * element, a missing required field, a value of the wrong shape. `field` names the offending
 * element or attribute as a path (`systemMetadata/checksum/@algorithm`) so callers can say
 * exactly what to fix. The core maps it to InvalidSystemMetadata or InvalidRequest.
 */
const BRAND = Symbol.for('memberkit.DecodeError');

export class DecodeError extends Error {
  readonly [BRAND] = true;
  override readonly name = 'DecodeError';
  constructor(
    message: string,
    readonly field?: string,
  ) {
    super(field ? `${field}: ${message}` : message);
  }
  static is(e: unknown): e is DecodeError {
    return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true;
  }
}
