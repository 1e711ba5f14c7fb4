import { expect } from 'vitest';
import { AdapterError, type AdapterErrorKind } from '@memberkit/types';

/** A short description of a thrown value, for assertion messages. */
export function describeError(e: unknown): string {
  if (AdapterError.is(e)) return `AdapterError(${e.kind}): ${e.message}`;
  if (e instanceof Error) return `${e.name}: ${e.message}`;
  return String(e);
}

/**
 * Await `action` and assert that it rejects with an AdapterError of one of `kinds` (from any
 * copy of @memberkit/types). Returns the error.
 */
export async function expectAdapterError(
  action: Promise<unknown> | (() => Promise<unknown> | unknown),
  kinds: AdapterErrorKind | readonly AdapterErrorKind[],
  what = 'the operation',
): Promise<AdapterError> {
  const wanted = typeof kinds === 'string' ? [kinds] : kinds;
  let outcome: { ok: true; value: unknown } | { ok: false; error: unknown };
  try {
    outcome = { ok: true, value: await (typeof action === 'function' ? action() : action) };
  } catch (error) {
    outcome = { ok: false, error };
  }
  if (outcome.ok) {
    expect.fail(`${what} resolved, but MUST reject with AdapterError kind ${wanted.map((k) => `'${k}'`).join(' or ')}`);
  }
  const error = outcome.error;
  if (!AdapterError.is(error) || !wanted.includes(error.kind)) {
    expect.fail(`${what} MUST reject with AdapterError kind ${wanted.map((k) => `'${k}'`).join(' or ')}, got ${describeError(error)}`);
  }
  return error;
}
