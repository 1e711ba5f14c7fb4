/**
 * The one error adapters throw. It is protocol-neutral: the core maps each kind to the
 * DataONE exception and detailCode of the operation in progress (core/src/errors).
 * Absence on lookup is `undefined`, never an AdapterError.
 */
export type AdapterErrorKind =
  /** The key or record does not exist (on an operation that needs it to). */
  | 'not-found'
  /** An insert collided with an existing identifier (PID or SID) or key. */
  | 'already-exists'
  /** A compare-and-set failed: the record changed since it was read. */
  | 'conflict'
  /** The input cannot be stored (bad checksum, size mismatch, bad key). */
  | 'invalid'
  /** The adapter does not support this operation (capability not declared). */
  | 'unsupported'
  /** The backend is unreachable or out of resources; the caller may retry later. */
  | 'unavailable'
  /** Anything else; the cause is logged, never shown to callers. */
  | 'internal';

export const ADAPTER_ERROR_KINDS: readonly AdapterErrorKind[] = [
  'not-found', 'already-exists', 'conflict', 'invalid', 'unsupported', 'unavailable', 'internal',
];

const BRAND = Symbol.for('memberkit.AdapterError');

export class AdapterError extends Error {
  readonly [BRAND] = true;
  override readonly name = 'AdapterError';
  /**
   * True when the change was made (committed) although the call failed: only its durability
   * could not be confirmed (a log that could not be flushed to the disk). Repeating the change
   * would apply it twice; read it back instead.
   */
  readonly committed: boolean;
  constructor(
    readonly kind: AdapterErrorKind,
    message: string,
    options?: { cause?: unknown; committed?: boolean },
  ) {
    super(message, options);
    this.committed = options?.committed === true;
  }
  /** True for AdapterErrors from any copy of this package (branded with Symbol.for). */
  static is(e: unknown, kind?: AdapterErrorKind): e is AdapterError {
    return typeof e === 'object' && e !== null && (e as Record<symbol, unknown>)[BRAND] === true && (kind === undefined || (e as AdapterError).kind === kind);
  }
}
