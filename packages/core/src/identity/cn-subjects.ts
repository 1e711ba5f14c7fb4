import type { Keyv } from 'keyv';
import { NodeListCodec } from '@memberkit/types';
import type { Logger } from '../logger.js';
import { fetchCn, joinUrl } from './cn-fetch.js';

export interface CnSubjectsOptions {
  cnBaseUrl: string;
  ttlMs: number;
  failureTtlMs?: number;
  timeoutMs: number;
  cache: Keyv;
  logger: Logger;
}

/**
 * The federation's Coordinating Node subjects, read from the CN's node list
 * (`GET {cn}/v2/node`: the `subject`s of nodes with type="cn"), cached in keyv. A failed
 * read is logged and gives the empty list (until it is retried after failureTtlMs).
 */
export class CnSubjects {
  private inFlight: Promise<ReadonlySet<string>> | undefined;
  private readonly key: string;
  constructor(private readonly options: CnSubjectsOptions) {
    this.key = `cn-subjects:${options.cnBaseUrl}`;
  }

  async subjects(): Promise<ReadonlySet<string>> {
    const cached = (await this.options.cache.get(this.key)) as string[] | undefined;
    if (cached) return new Set(cached);
    this.inFlight ??= this.fetch().finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  private async fetch(): Promise<ReadonlySet<string>> {
    const url = joinUrl(this.options.cnBaseUrl, 'v2/node');
    try {
      const body = await fetchCn(url, { timeoutMs: this.options.timeoutMs });
      if (body === undefined) throw new Error(`${url} answered 404`);
      const list = NodeListCodec.decode(body);
      const subjects = list.node.filter((n) => String(n.type).toLowerCase() === 'cn').flatMap((n) => n.subject);
      await this.options.cache.set(this.key, subjects, this.options.ttlMs);
      return new Set(subjects);
    } catch (err) {
      this.options.logger.warn({ err, url }, "cannot read the CN's node list; no CN subjects from it for now");
      await this.options.cache.set(this.key, [], this.options.failureTtlMs ?? 60_000);
      return new Set();
    }
  }
}
