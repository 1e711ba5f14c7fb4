import { inject, injectable } from 'inversify';
import { EVENTS_V1, type EventLogStore, type EventRecord, type Log } from '@memberkit/types';
import type { CoreConfig } from '../config.js';
import { DEFAULT_MAX_PAGE_SIZE } from '../config.js';
import { TOKENS } from '../tokens.js';
import type { CallContext } from '../session.js';
import type { Logger } from '../logger.js';
import { AccessControl } from './access-control.js';

export interface LogRecordsQuery {
  fromDate?: Date;
  toDate?: Date;
  event?: string;
  idFilter?: string;
  start: number;
  count: number;
}

/** The event log: every access recorded; getLogRecords answered from it. */
@injectable()
export class EventService {
  constructor(
    @inject(TOKENS.EventLog) private readonly store: EventLogStore,
    @inject(TOKENS.Config) private readonly config: CoreConfig,
    @inject(TOKENS.AccessControl) private readonly access: AccessControl,
    @inject(TOKENS.Logger) private readonly logger: Logger,
  ) {}

  /** Entries waiting for the next group commit, with the callers waiting on them. */
  private pending: Array<{ entry: EventRecord; done: () => void }> = [];
  private flushing = false;

  /**
   * Record `event` on `pid`. Concurrent requests share one append (a group commit: the
   * entries that arrive while one append runs go together in the next), so a busy node does
   * one log transaction per batch, not per request. Resolves once the entry is stored. A
   * failure to log never fails the operation that already happened; it is reported to the
   * operator instead.
   */
  record(ctx: CallContext, event: string, pid: string): Promise<void> {
    return this.recordAs({ subject: ctx.session.subject, ipAddress: ctx.ipAddress, userAgent: ctx.userAgent }, event, pid);
  }

  /** `record` for a change with no request behind it (a wrap scan, a refresh): the actor is named. */
  recordAs(actor: { subject: string; ipAddress: string; userAgent: string }, event: string, pid: string): Promise<void> {
    const entry = this.entry(actor, event, pid);
    return new Promise<void>((done) => {
      this.pending.push({ entry, done });
      if (!this.flushing) void this.flush();
    });
  }

  /**
   * The log entry of `event` on `pid` by `actor`, now. Writes use it to log their events in
   * the change's own transaction (CatalogueWriter); reads go through the group commit above.
   */
  entry(actor: { subject: string; ipAddress: string; userAgent: string }, event: string, pid: string): EventRecord {
    return {
      identifier: pid,
      event,
      subject: actor.subject,
      ipAddress: actor.ipAddress,
      userAgent: actor.userAgent,
      dateLogged: new Date(),
      nodeIdentifier: this.config.node.identifier,
    };
  }

  private async flush(): Promise<void> {
    this.flushing = true;
    while (this.pending.length > 0) {
      const batch = this.pending;
      this.pending = [];
      try {
        await this.store.append(batch.map((b) => b.entry));
      } catch (err) {
        this.logger.error({ err, events: batch.length }, 'could not record events');
      }
      for (const b of batch) b.done();
    }
    this.flushing = false;
  }

  /**
   * getLogRecords: "Only records the requestor may read." Administrators and CNs read every
   * entry; any other caller reads the entries of objects it may read. v1 logs show only the
   * events of the v1 Event enumeration.
   */
  async getLogRecords(ctx: CallContext, q: LogRecordsQuery): Promise<Log> {
    const maxPage = this.config.maxPageSize ?? DEFAULT_MAX_PAGE_SIZE;
    const events = q.event !== undefined ? [q.event] : ctx.version === 'v1' ? EVENTS_V1 : undefined;
    const readableBy = this.access.listingFilter(ctx.session);
    const result = await this.store.query({
      ...(q.fromDate ? { fromDate: q.fromDate } : {}),
      ...(q.toDate ? { toDate: q.toDate } : {}),
      ...(events ? { events } : {}),
      ...(q.idFilter ? { idPrefix: q.idFilter } : {}),
      ...(readableBy ? { readableBy } : {}),
      start: q.start,
      count: Math.min(q.count, maxPage),
    });
    return {
      start: q.start,
      count: result.entries.length,
      total: result.total,
      logEntry: result.entries.map((e) => ({
        entryId: e.entryId,
        identifier: e.identifier,
        ipAddress: e.ipAddress,
        userAgent: e.userAgent,
        subject: e.subject,
        event: e.event,
        dateLogged: e.dateLogged,
        nodeIdentifier: e.nodeIdentifier,
      })),
    };
  }
}
