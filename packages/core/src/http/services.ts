import type { CapabilitiesService } from '../services/capabilities-service.js';
import type { EventService } from '../services/event-service.js';
import type { ObjectService } from '../services/object-service.js';
import type { SessionResolver } from '../services/session-resolver.js';
import type { MNStorageService } from '../services/mn-storage-service.js';
import type { Logger } from '../logger.js';
import type { ExtensionKit, NodeExtension } from '../extension.js';
import type { FederationHandle } from '../container.js';

/** What the HTTP layer needs from the container. */
export interface NodeServices {
  objects: ObjectService;
  storing: MNStorageService;
  events: EventService;
  capabilities: CapabilitiesService;
  sessions: SessionResolver;
  logger: Logger;
  /** Optional APIs plugged in, and what they may use. */
  extensions: readonly NodeExtension[];
  kit: Omit<ExtensionKit, 'operation'>;
  /** Tier 4: replication and CN interplay, when configured. */
  federation: FederationHandle;
  /** Light internal check for ping. */
  ping(): Promise<void>;
}
