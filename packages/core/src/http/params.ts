import { parseDateTime } from '@memberkit/types';
import { fail, type Operation } from '../errors.js';

/** Query parameters, form-decoded once (space as '+', %XX), read from the raw URL. */
export class QueryParams {
  /** Parsed on first use: most operations read no parameter. */
  #params: URLSearchParams | undefined;
  constructor(
    private readonly op: Operation,
    private readonly url: string,
  ) {}

  string(name: string): string | undefined {
    if (this.#params === undefined) {
      const q = this.url.indexOf('?');
      this.#params = new URLSearchParams(q < 0 ? '' : this.url.slice(q + 1));
    }
    const v = this.#params.get(name);
    return v === null || v === '' ? undefined : v;
  }

  date(name: string): Date | undefined {
    const v = this.string(name);
    if (v === undefined) return undefined;
    try {
      // An unescaped '+' of a zone offset arrives form-decoded as a space: read it back as '+'.
      return parseDateTime(v.replace(/ (\d{2}(?::?\d{2})?)$/, '+$1'), name);
    } catch {
      throw fail(this.op, 'InvalidRequest', `${name} '${v}' is not an ISO 8601 datetime (e.g. 2024-01-31T10:00:00Z)`);
    }
  }

  nonNegativeInt(name: string, fallback: number): number {
    const v = this.string(name);
    if (v === undefined) return fallback;
    if (!/^\d+$/.test(v.trim()) || !Number.isSafeInteger(Number(v))) throw fail(this.op, 'InvalidRequest', `${name} must be a non-negative integer (got '${v}')`);
    return Number(v);
  }

  boolean(name: string): boolean | undefined {
    const v = this.string(name)?.trim().toLowerCase();
    if (v === undefined) return undefined;
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    throw fail(this.op, 'InvalidRequest', `${name} must be true or false (got '${v}')`);
  }
}
