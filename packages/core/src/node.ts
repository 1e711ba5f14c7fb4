import type { Hono } from 'hono';
import type { CoreConfig } from './config.js';
import { createNodeContainer, type ContainerOptions, type NodeAdapters } from './container.js';
import { createApp } from './http/app.js';
import type { NodeServices } from './http/services.js';
import type { Logger } from './logger.js';
import { TOKENS } from './tokens.js';
import { Federation } from './federation/federation.js';
import type { FederationHandle } from './container.js';
import type { Clock } from './clock.js';
import type { ChangeNotifier, NodeExtension } from './extension.js';
import type { AccessControl } from './services/access-control.js';
import type { ObjectService } from './services/object-service.js';
import type { EventService } from './services/event-service.js';
import { StrandedBytesSweep, type SweepOptions } from './services/sweep.js';
import type { CatalogueWriter } from './services/catalogue-writer.js';

export interface MemberNode {
  app: Hono;
  services: NodeServices;
  /** The one path of catalogue changes (wrap scans commit through it: events, notices). */
  writer: CatalogueWriter;
  /** Close the adapters (the HTTP server, if any, is closed by its owner). */
  close(): Promise<void>;
}

/**
 * Build a Member Node from configuration and adapter instances: opens the adapters, wires
 * the services, returns the Hono app (serve it with `serveNode`, or call `app.request` in tests).
 */
export interface MemberNodeOptions extends ContainerOptions {
  /** Optional APIs (MNView, MNPackage, MNQuery...) to plug in. */
  extensions?: readonly NodeExtension[];
  /** The sweep of stranded bytes (sweep.ts), at start and periodically; false turns it off. */
  sweep?: SweepOptions | false;
}

export { StrandedBytesSweep, type SweepOptions } from './services/sweep.js';

export async function createMemberNode(config: CoreConfig, adapters: NodeAdapters, options: MemberNodeOptions = {}): Promise<MemberNode> {
  const opened: Array<{ close?(): Promise<void> }> = [];
  const unique = [...new Set<object>([adapters.metadata, adapters.eventLog, adapters.storage, ...(adapters.jobs ? [adapters.jobs] : [])])] as Array<{ open?(): Promise<void>; close?(): Promise<void> }>;
  try {
    for (const a of unique) {
      await a.open?.();
      opened.push(a);
    }
  } catch (err) {
    for (const a of opened.reverse()) await a.close?.().catch(() => {});
    throw err;
  }
  const extensions = options.extensions ?? [];
  const federationHandle: FederationHandle = { current: undefined };
  const container = createNodeContainer(config, adapters, { ...options, federation: federationHandle, extensionServices: extensions.flatMap((e) => e.services ?? []) });
  const kit = {
    objects: container.get<ObjectService>(TOKENS.Objects),
    access: container.get<AccessControl>(TOKENS.AccessControl),
    events: container.get<EventService>(TOKENS.Events),
    metadata: adapters.metadata,
    storage: adapters.storage,
    logger: container.get<Logger>(TOKENS.Logger),
  };
  const changes = container.get<ChangeNotifier>(TOKENS.Changes);
  if (config.federation) {
    if (!adapters.jobs) throw new Error('a federation section needs a job store (NodeAdapters.jobs)');
    const federation = new Federation({
      config: config as CoreConfig & { federation: NonNullable<CoreConfig['federation']> },
      metadata: adapters.metadata,
      storage: adapters.storage,
      jobs: adapters.jobs,
      access: kit.access,
      clock: container.get<Clock>(TOKENS.Clock),
      logger: kit.logger,
    });
    federationHandle.current = federation;
    federation.start();
    opened.push({ close: () => federation.stop() });
  }
  if (options.sweep !== false) {
    const sweep = new StrandedBytesSweep({ metadata: adapters.metadata, storage: adapters.storage, logger: kit.logger }, options.sweep ?? config.sweep ?? {});
    if (sweep.applicable) {
      sweep.start();
      opened.push({ close: () => sweep.stop() });
    }
  }
  for (const ext of extensions) {
    await ext.open?.({ ...kit, operation: () => () => Promise.reject(new Error('operation is available in routes() only')) });
    opened.push(ext);
    if (ext.onChange) changes.subscribe((c) => ext.onChange!(c));
  }
  const services: NodeServices = {
    objects: container.get(TOKENS.Objects),
    storing: container.get(TOKENS.Storing),
    events: container.get(TOKENS.Events),
    capabilities: container.get(TOKENS.Capabilities),
    sessions: container.get(TOKENS.Sessions),
    logger: container.get<Logger>(TOKENS.Logger),
    extensions,
    kit,
    federation: federationHandle,
    ping: async () => {
      await adapters.metadata.identifierUse('memberkit:ping');
    },
  };
  const app = createApp(services, { basePath: config.basePath });
  return {
    app,
    services,
    writer: container.get<CatalogueWriter>(TOKENS.Writer),
    async close() {
      // Read events written behind (EventService.recordBehind) are committed before the log closes.
      await container.get<EventService>(TOKENS.Events).settled();
      for (const a of opened.reverse()) await a.close?.();
    },
  };
}
