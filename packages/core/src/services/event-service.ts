import { inject, injectable } from 'inversify';
import { EVENTS_V1, type EventLogStore, type EventRecord, type Log } from '@memberkit/types';
import type { CoreConfig } from '../config.js';
import { DEFAULT_MAX_PAGE_SIZE } from '../config.js';
import { TOKENS } from '../tokens.js';
import { actorOf, type CallContext } from '../session.js';
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

/** How long a write-behind entry waits for others to share its commit, and how many may wait. */
const WRITE_BEHIND_MS = 20;
const WRITE_BEHIND_MAX = 500;
const noop = (): void => undefined;

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
  /** How many of the pending entries a caller awaits (`record`): they are committed at once. */
  private awaited = 0;
  private flushing = false;
  /** The timer of a write-behind batch (`recordBehind`), and whether it has fired. */
  private behind: NodeJS.Timeout | undefined;
  private due = false;
  /** Callers of `settled` waiting for the commits in flight. */
  private settling: Array<() => void> = [];

  /**
   * Record `event` on `pid`. Concurrent requests share one append (a group commit: the
   * entries that arrive while one append runs go together in the next), so a busy node does
   * one log transaction per batch, not per request. Resolves once the entry is stored. A
   * failure to log never fails the operation that already happened; it is reported to the
   * operator instead.
   */
  record(ctx: CallContext, event: string, pid: string): Promise<void> {
    return this.recordAs(actorOf(ctx), event, pid);
  }

  /** `record` for a change with no request behind it (a wrap scan, a refresh): the actor is named. */
  recordAs(actor: { subject: string; ipAddress: string; userAgent: string }, event: string, pid: string): Promise<void> {
    const entry = this.entry(actor, event, pid);
    return new Promise<void>((done) => {
      this.pending.push({ entry, done });
      this.awaited++;
      this.kick();
    });
  }

  /**
   * Record `event` on `pid` without making the caller wait for the commit: the entry joins a
   * batch committed within WRITE_BEHIND_MS (at once when WRITE_BEHIND_MAX entries wait). For
   * reads, whose answer does not depend on their log entry: a busy node then writes its read
   * log in batches of tens instead of one transaction per two or three gets. getLogRecords of
   * this process and close() first commit what waits; a process killed in that window loses
   * those entries, never an object or its system metadata.
   */
  recordBehind(ctx: CallContext, event: string, pid: string): void {
    this.pending.push({ entry: this.entry(actorOf(ctx), event, pid), done: noop });
    this.kick();
  }

  /** Resolves once every entry recorded so far is committed (or reported as failed). */
  settled(): Promise<void> {
    if (this.pending.length === 0 && !this.flushing) return Promise.resolve();
    return new Promise<void>((done) => {
      this.settling.push(done);
      this.kick();
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

  /** Whether what is pending must be committed now rather than after the write-behind wait. */
  private get urgent(): boolean {
    return this.due || this.awaited > 0 || this.settling.length > 0 || this.pending.length >= WRITE_BEHIND_MAX;
  }

  /** Start a commit of what is pending when it is urgent, else wait for the write-behind timer. */
  private kick(): void {
    if (this.flushing || this.pending.length === 0) return;
    if (this.urgent) void this.flush();
    else
      this.behind ??= setTimeout(() => {
        this.behind = undefined;
        this.due = true;
        this.kick();
      }, WRITE_BEHIND_MS);
  }

  /**
   * Commits batch after batch while that is urgent: entries that arrive while one commits go
   * together in the next. Write-behind entries left over wait for their timer.
   */
  private async flush(): Promise<void> {
    this.flushing = true;
    clearTimeout(this.behind);
    this.behind = undefined;
    while (this.pending.length > 0 && this.urgent) {
      const batch = this.pending;
      this.pending = [];
      this.awaited = 0;
      this.due = false;
      try {
        await this.store.append(batch.map((b) => b.entry));
      } catch (err) {
        this.logger.error({ err, events: batch.length }, 'could not record events');
      }
      for (const b of batch) b.done();
    }
    this.flushing = false;
    // Callers of settled() keep the loop going until nothing is pending.
    const settling = this.settling;
    this.settling = [];
    for (const done of settling) done();
    this.kick();
  }

  /**
   * getLogRecords: "Only records the requestor may read." Administrators and CNs read every
   * entry; any other caller reads the entries of objects it may read. v1 logs show only the
   * events of the v1 Event enumeration.
   */
  async getLogRecords(ctx: CallContext, q: LogRecordsQuery): Promise<Log> {
    await this.settled();
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
