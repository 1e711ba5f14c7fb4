import type { Context, Hono } from 'hono';
import type { ApiVersion, FeedEntry, CatalogueAdapter, ObjectRecord, StorageAdapter } from '@memberkit/types';
import type { Operation } from './errors.js';
import type { CallContext } from './session.js';
import type { QueryParams } from './http/params.js';
import type { Logger } from './logger.js';
import type { AccessControl } from './services/access-control.js';
import type { EventService } from './services/event-service.js';
import type { ObjectService } from './services/object-service.js';

/**
 * Binds a handler to an operation: the caller's session, the call context, query parameters,
 * and DataONE errors with `op`'s detail codes. (Not to be confused with wrap mode.)
 */
export type OperationRoute = (op: Operation, handler: (c: Context, ctx: CallContext, query: QueryParams) => Promise<Response>) => (c: Context) => Promise<Response>;

/** What an extension may use: the services the core's own routes use. */
export interface ExtensionKit {
  /** Binds an operation's handler: session, call context, query parameters, DataONE errors for `op`. */
  operation: OperationRoute;
  objects: ObjectService;
  access: AccessControl;
  events: EventService;
  metadata: CatalogueAdapter;
  storage: StorageAdapter;
  logger: Logger;
}

/** A change the node made to an object, announced after it is committed. */
export interface ObjectChange {
  kind: 'create' | 'update' | 'archive' | 'delete' | 'updateSystemMetadata';
  pid: string;
  /** The record after the change (absent for delete). */
  record?: ObjectRecord;
}

/**
 * An optional Member Node API (MNQuery, MNView, MNPackage...) plugged into the core. Its
 * routes are mounted under `/v1` and `/v2` before the core answers NotImplemented for
 * optional APIs nobody provides; its services are advertised in the Node document.
 */
export interface NodeExtension {
  name: string;
  /** Services for the Node document, e.g. `{ name: 'MNView', versions: ['v1', 'v2'] }`. */
  services?: ReadonlyArray<{ name: string; versions: readonly ApiVersion[] }>;
  open?(kit: ExtensionKit): Promise<void>;
  close?(): Promise<void>;
  /** Register routes on the version's sub-app (paths relative to `/vN`). */
  routes?(app: Hono, version: ApiVersion, kit: ExtensionKit): void;
  /** Called after each change this process commits; other processes' changes come from the change feed (ChangeFollower). */
  onChange?(change: ObjectChange): void | Promise<void>;
}

/** Fans committed changes out to extensions; a failing listener is logged, never fatal. */
export class ChangeNotifier {
  private readonly listeners: Array<(c: ObjectChange) => void | Promise<void>> = [];
  constructor(private readonly logger: Logger) {}
  subscribe(listener: (c: ObjectChange) => void | Promise<void>): void {
    this.listeners.push(listener);
  }
  async emit(change: ObjectChange): Promise<void> {
    for (const l of this.listeners) {
      try {
        await l(change);
      } catch (err) {
        this.logger.error({ err, pid: change.pid, kind: change.kind }, 'change listener failed');
      }
    }
  }
}

/**
 * Follows the catalogue's change feed (CatalogueAdapter.changesSince/changeHead) for a consumer
 * that keeps derived state (a query index, a cache): every change of every process, in commit
 * order. `catchUp` reads the head (one cheap query) and hands the entries after the consumer's
 * position to it; call it before answering a request that must reflect every committed change
 * (an object made private elsewhere is then refused at once). A caller always waits for a head
 * read issued after it asked; the callers of one turn of the event loop share one (concurrent
 * requests pay one read between them); reads of different turns overlap, and entries reach the
 * consumer one run at a time.
 */
export class ChangeFollower {
  private position: number | undefined;
  private last: Promise<void> = Promise.resolve();
  /** The run not yet started, which every caller asking now joins. */
  private next: Promise<void> | undefined;

  constructor(
    private readonly metadata: CatalogueAdapter,
    private readonly apply: (entries: FeedEntry[], head: number) => Promise<void>,
    private readonly pageSize = 500,
  ) {}

  /** True when the catalogue has a change feed. */
  get available(): boolean {
    return !!(this.metadata.changesSince && this.metadata.changeHead);
  }

  /** The position handled so far (undefined before `begin`). */
  get at(): number | undefined {
    return this.position;
  }

  /** Start after `from` (a persisted position), or at the head now; returns the position. */
  async begin(from?: number): Promise<number> {
    this.position = from ?? (await this.metadata.changeHead!());
    return this.position;
  }

  /**
   * True when the consumer has every change committed up to now, known without I/O (the
   * catalogue can tell its head from memory): the caller may skip `catchUp`.
   */
  get current(): boolean {
    return this.position !== undefined && this.metadata.knownChangeHead?.() === this.position;
  }

  /** Hand every change committed up to now to the consumer. A no-op before `begin` or without a feed. */
  catchUp(): Promise<void> {
    if (this.next) return this.next;
    const previous = this.last;
    // Every caller waits for a head read issued after it asked, and callers until then share it.
    // A remote feed (PostgreSQL, MySQL) is read at this turn's check phase, once the turn's
    // callers have asked, beside a read of an earlier turn still under way (a request no longer
    // waits for that one to end before its own is issued). A feed known from memory (SQLite) is
    // read once the previous run has ended, in the caller's own phase of the loop: its callers
    // then go on answering within the turn's requests (see SqliteSync.dataVersion).
    const issue = this.metadata.knownChangeHead ? previous : new Promise<void>((resolve) => setImmediate(resolve));
    const head = issue.then(() => {
      this.next = undefined;
      return this.available && this.position !== undefined ? this.metadata.changeHead!() : undefined;
    });
    const run = Promise.all([head, previous]).then(([h]) => (h === undefined ? undefined : this.runTo(h)));
    this.next = run;
    this.last = run.catch(() => undefined);
    return run;
  }

  /** Resolves when the runs asked for so far have ended (shutdown). */
  idle(): Promise<void> {
    return this.last;
  }

  private async runTo(head: number): Promise<void> {
    if (this.position === undefined) return;
    while (this.position < head) {
      const page = await this.metadata.changesSince!(this.position, this.pageSize);
      if (page.entries.length === 0) {
        this.position = Math.max(this.position, Math.min(head, page.head));
        break;
      }
      await this.apply(page.entries, page.head);
      this.position = page.entries.at(-1)!.seq;
    }
  }
}
