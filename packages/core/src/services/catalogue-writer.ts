import { inject, injectable } from 'inversify';
import type { CatalogueChange, EventLogStore, CatalogueAdapter } from '@memberkit/types';
import { TOKENS } from '../tokens.js';
import type { ChangeNotifier, ObjectChange } from '../extension.js';
import type { EventService } from './event-service.js';

/** Who caused a change, for its event-log entries. */
export interface ChangeActor {
  subject: string;
  ipAddress: string;
  userAgent: string;
}

/** One change to the catalogue, with the events it logs and the notices extensions hear. */
export interface CatalogueCommit {
  change: CatalogueChange;
  /** Event-log entries of the change (`create`, `update`, `archive`, `delete`, ...). */
  events: ReadonlyArray<{ event: string; pid: string }>;
  actor: ChangeActor;
  /** What extensions (query index, views cache) hear once the change is committed. */
  notices: readonly ObjectChange[];
  /** Write intents (from `intend`) of the bytes the change references: settled with it. */
  intents?: readonly string[];
}

/** What a commit stored: the catalogue's dates, and the notices as sent (with those dates). */
export interface CommittedChange {
  /** dateSysMetadataModified as stored, by PID (the catalogue's clock may move a proposed date forward). */
  dates: ReadonlyMap<string, Date>;
  notices: readonly ObjectChange[];
}

/**
 * The one path every change to the catalogue takes (requests, wrap scans, federation
 * refreshes): apply the change, log its events, tell the extensions.
 * - Events commit in the change's own transaction when the catalogue writes them
 *   (`logsEventsTo`: catalogue and log are one store), so no write is ever without its event;
 *   otherwise they are appended right after.
 * - The catalogue assigns dateSysMetadataModified from its one clock; notices and the result
 *   carry the stored dates, never the proposed ones.
 * - Bytes are committed to storage after `intend(name)`; the change that references them
 *   settles the intent, and the sweep (sweep.ts) removes bytes whose intent was never settled.
 */
@injectable()
export class CatalogueWriter {
  constructor(
    @inject(TOKENS.Catalogue) private readonly metadata: CatalogueAdapter,
    @inject(TOKENS.Events) private readonly events: EventService,
    @inject(TOKENS.Changes) private readonly changes: ChangeNotifier,
    @inject(TOKENS.EventLog) private readonly eventLog: EventLogStore,
  ) {}

  async commit(commit: CatalogueCommit): Promise<CommittedChange> {
    if (!this.metadata.apply) throw new Error('the catalogue is read-only');
    const { change } = commit;
    const inTransaction = this.metadata.logsEventsTo?.(this.eventLog) === true;
    let dates: ReadonlyMap<string, Date> = new Map();
    if ((change.insert?.length ?? 0) + (change.replace?.length ?? 0) + (change.remove?.length ?? 0) > 0) {
      const applied = await this.metadata.apply({
        ...change,
        ...(inTransaction && commit.events.length > 0 ? { events: commit.events.map((e) => this.events.entry(commit.actor, e.event, e.pid)) } : {}),
        ...(commit.intents && commit.intents.length > 0 && this.metadata.intend ? { intents: commit.intents } : {}),
      });
      if (applied) dates = applied.dates;
      if (!inTransaction) await Promise.all(commit.events.map((e) => this.events.recordAs(commit.actor, e.event, e.pid)));
    } else await Promise.all(commit.events.map((e) => this.events.recordAs(commit.actor, e.event, e.pid)));
    const notices = commit.notices.map((n) => withStoredDate(n, dates));
    for (const notice of notices) await this.changes.emit(notice);
    return { dates, notices };
  }

  /** True when the catalogue records write intents (`intend` returns an id). */
  get keepsIntents(): boolean {
    return this.metadata.intend !== undefined;
  }

  /**
   * Record that bytes are about to be committed to storage under `name` (the PID), before
   * committing them; pass the returned id in the commit's `intents`. Undefined when the
   * catalogue keeps no intents (nothing to sweep then). With `unused`, nothing is recorded
   * and it fails 'already-exists' if one of those identifiers is in use.
   */
  async intend(name: string, unused?: readonly string[]): Promise<string | undefined> {
    return this.metadata.intend?.(name, unused);
  }
}

/** The notice with the dateSysMetadataModified the catalogue stored for its record. */
function withStoredDate(notice: ObjectChange, dates: ReadonlyMap<string, Date>): ObjectChange {
  const date = dates.get(notice.pid);
  if (!notice.record || !date || notice.record.sysmeta.dateSysMetadataModified.getTime() === date.getTime()) return notice;
  return { ...notice, record: { ...notice.record, sysmeta: { ...notice.record.sysmeta, dateSysMetadataModified: date } } };
}
