import type { CatalogueAdapter, EventLogStore, Node, StorageAdapter } from '@memberkit/types';
import type { AccessControl, CatalogueWriter, Clock, EventService, Logger, MNStorageService, ObjectService, SessionResolver } from '@memberkit/core';
import type { SqlStore } from '@memberkit/adapter-sql';
import type { CnConfig } from './config.js';
import type { NodeDirectory, SubjectDirectory } from './ports.js';
import type { FormatStore } from './store/formats.js';
import type { ReservationStore } from './store/reservations.js';

/**
 * Everything the CN's route modules use. The core's services work on the CN's
 * authoritative copies (the catalogue); the CN's own tables (`mk_cn_*`) live in the
 * catalogue's database (`store`).
 */
export interface CnServices {
  config: CnConfig;
  logger: Logger;
  clock: Clock;
  /** The SQL store of the catalogue: `store.read`/`store.write` run transactions on the CN's tables. */
  store: SqlStore;
  /** The CN's authoritative system metadata (and the bytes it holds, by storage key). */
  metadata: CatalogueAdapter;
  storage: StorageAdapter;
  eventLog: EventLogStore;
  objects: ObjectService;
  /** The core's write path (create with bytes...), over the CN's copies. */
  storing: MNStorageService;
  access: AccessControl;
  events: EventService;
  writer: CatalogueWriter;
  sessions: SessionResolver;
  /** Registered nodes (H4's registry; an empty directory until it lands). */
  nodes: NodeDirectory;
  /** Accounts, groups, equivalences (H3's identity store); sessions expand through it. */
  subjects: SubjectDirectory;
  formats: FormatStore;
  reservations: ReservationStore;
  /** The CN's own Node document (getCapabilities). */
  capabilities(): Node;
  /** A light check of the database (ping). */
  ping(): Promise<void>;
}
