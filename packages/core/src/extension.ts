import type { Context, Hono } from 'hono';
import type { ApiVersion, MetadataAdapter, ObjectRecord, StorageAdapter } from '@memberkit/types';
import type { Operation } from './errors.js';
import type { CallContext } from './session.js';
import type { QueryParams } from './http/params.js';
import type { Logger } from './logger.js';
import type { AccessControl } from './services/access-control.js';
import type { EventService } from './services/event-service.js';
import type { ObjectService } from './services/object-service.js';

/** Wraps a handler: session, call context, query parameters, and DataONE errors for `op`. */
export type OperationWrapper = (op: Operation, handler: (c: Context, ctx: CallContext, query: QueryParams) => Promise<Response>) => (c: Context) => Promise<Response>;

/** What an extension may use: the services the core's own routes use. */
export interface ExtensionKit {
  wrap: OperationWrapper;
  objects: ObjectService;
  access: AccessControl;
  events: EventService;
  metadata: MetadataAdapter;
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
  /** Called after each change the node commits (never for changes made by other processes or scanners). */
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
