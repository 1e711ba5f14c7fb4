import { inject, injectable } from 'inversify';
import type { CatalogueChange, MetadataAdapter } from '@memberkit/types';
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
}

/**
 * The one path every change to the catalogue takes (requests, wrap scans, federation
 * refreshes): apply the change, log its events, tell the extensions.
 */
@injectable()
export class CatalogueWriter {
  constructor(
    @inject(TOKENS.Metadata) private readonly metadata: MetadataAdapter,
    @inject(TOKENS.Events) private readonly events: EventService,
    @inject(TOKENS.Changes) private readonly changes: ChangeNotifier,
  ) {}

  async commit(commit: CatalogueCommit): Promise<void> {
    if (!this.metadata.apply) throw new Error('the catalogue is read-only');
    const { change } = commit;
    if ((change.insert?.length ?? 0) + (change.replace?.length ?? 0) + (change.remove?.length ?? 0) > 0) await this.metadata.apply(change);
    await Promise.all(commit.events.map((e) => this.events.recordAs(commit.actor, e.event, e.pid)));
    for (const notice of commit.notices) await this.changes.emit(notice);
  }
}
