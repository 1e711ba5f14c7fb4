import type { Keyv } from 'keyv';
import { SubjectInfoCodec, type SubjectInfo } from '@memberkit/types';
import type { Logger } from '../logger.js';
import { fetchCn, joinUrl } from './cn-fetch.js';

export interface SubjectInfoLookupOptions {
  /** CN base URL without the version, e.g. https://cn.dataone.org/cn. */
  cnBaseUrl: string;
  /** How long an answer (also "no such subject") is cached. */
  ttlMs: number;
  /** How long a failed lookup is remembered (so a CN outage does not slow every request). */
  failureTtlMs?: number;
  timeoutMs: number;
  token?: string | (() => string | Promise<string>);
  cache: Keyv;
  logger: Logger;
}

type Cached = { info: SubjectInfo | null };

/**
 * CNIdentity.getSubjectInfo (`GET {cn}/v2/accounts/{subject}`), cached in keyv. A failure
 * (CN unreachable, timeout, unreadable answer) is logged and degrades to "no subject
 * information": the caller keeps its primary subject and gains no equivalent identities
 * or groups, and never gains more than it would have.
 */
export class SubjectInfoLookup {
  private readonly inFlight = new Map<string, Promise<SubjectInfo | undefined>>();
  constructor(private readonly options: SubjectInfoLookupOptions) {}

  async lookup(subject: string): Promise<SubjectInfo | undefined> {
    const key = `subject-info:${this.options.cnBaseUrl}:${subject}`;
    const cached = (await this.options.cache.get(key)) as Cached | undefined;
    if (cached) return cached.info ?? undefined;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.fetch(subject, key).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async fetch(subject: string, key: string): Promise<SubjectInfo | undefined> {
    const url = joinUrl(this.options.cnBaseUrl, `v2/accounts/${encodeURIComponent(subject)}`);
    try {
      const body = await fetchCn(url, { timeoutMs: this.options.timeoutMs, ...(this.options.token ? { token: this.options.token } : {}) });
      const info = body === undefined ? null : SubjectInfoCodec.decode(body);
      await this.options.cache.set(key, { info } satisfies Cached, this.options.ttlMs);
      return info ?? undefined;
    } catch (err) {
      this.options.logger.warn({ err, subject, url }, 'getSubjectInfo failed; continuing without equivalent identities and groups');
      await this.options.cache.set(key, { info: null } satisfies Cached, this.options.failureTtlMs ?? 60_000);
      return undefined;
    }
  }
}
