import { inject, injectable } from 'inversify';
import { EVENTS_V1, type EventLogStore, type Log } from '@memberkit/types';
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

  /**
   * Record `event` on `pid`. A failure to log never fails the operation that already
   * happened; it is reported to the operator instead.
   */
  async record(ctx: CallContext, event: string, pid: string): Promise<void> {
    try {
      await this.store.append([
        {
          identifier: pid,
          event,
          subject: ctx.session.subject,
          ipAddress: ctx.ipAddress,
          userAgent: ctx.userAgent,
          dateLogged: new Date(),
          nodeIdentifier: this.config.node.identifier,
        },
      ]);
    } catch (err) {
      this.logger.error({ err, event, pid }, 'could not record event');
    }
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
