import 'reflect-metadata';
import { Container } from 'inversify';
import { Keyv } from 'keyv';
import type { EventLogStore, JobStore, CatalogueAdapter, StorageAdapter } from '@memberkit/types';
import type { CoreConfig } from './config.js';
import { MonotonicClock, type Clock } from './clock.js';
import { createLogger, type Logger } from './logger.js';
import { AccessControl } from './services/access-control.js';
import { CapabilitiesService } from './services/capabilities-service.js';
import { EventService } from './services/event-service.js';
import { ObjectService } from './services/object-service.js';
import { SessionResolver } from './services/session-resolver.js';
import { MNStorageService } from './services/mn-storage-service.js';
import { CatalogueWriter } from './services/catalogue-writer.js';
import { TOKENS } from './tokens.js';
import { ChangeNotifier } from './extension.js';
import type { Federation } from './federation/federation.js';

/** The federation services, when configured (bound before they exist, filled in at start). */
export interface FederationHandle {
  current: Federation | undefined;
}

/**
 * Where a node that keeps its own identity store (a Coordinating Node) expands a caller's
 * subject: used by session resolution instead of asking a remote CN (getSubjectInfo).
 */
export interface LocalSubjectSource {
  /** Every subject `subject` acts as (itself, equivalent identities, groups, transitively). */
  expand(subject: string): Promise<ReadonlySet<string>>;
}

/** The local subject source, when the node has one (bound before it exists, filled in at start). */
export interface LocalSubjectsHandle {
  current: LocalSubjectSource | undefined;
}

/** The adapter instances configuration chose; the composition root binds them. */
export interface NodeAdapters {
  storage: StorageAdapter;
  metadata: CatalogueAdapter;
  eventLog: EventLogStore;
  /** Durable jobs; required when the configuration has a federation section. */
  jobs?: JobStore;
}

export interface ContainerOptions {
  logger?: Logger;
  clock?: Clock;
  /** keyv store for caches (computed checksums...). Default: in memory. */
  cache?: Keyv;
  /** Filled in by createMemberNode when the node takes part in a federation. */
  federation?: FederationHandle;
  /** A Coordinating Node's own identity store, used by session resolution instead of a remote CN. */
  localSubjects?: LocalSubjectsHandle;
  /** Services optional APIs add to the Node document. */
  extensionServices?: ReadonlyArray<{ name: string; versions: readonly ('v1' | 'v2')[] }>;
}

/** One container per node: adapters and config as constants, services as singletons. */
export function createNodeContainer(config: CoreConfig, adapters: NodeAdapters, options: ContainerOptions = {}): Container {
  const c = new Container({ defaultScope: 'Singleton' });
  c.bind(TOKENS.Config).toConstantValue(config);
  c.bind(TOKENS.Storage).toConstantValue(adapters.storage);
  c.bind(TOKENS.Catalogue).toConstantValue(adapters.metadata);
  c.bind(TOKENS.EventLog).toConstantValue(adapters.eventLog);
  c.bind(TOKENS.Logger).toConstantValue(options.logger ?? createLogger());
  c.bind(TOKENS.Clock).toConstantValue(options.clock ?? new MonotonicClock());
  c.bind(TOKENS.Cache).toConstantValue(options.cache ?? new Keyv({ namespace: 'memberkit' }));
  c.bind(TOKENS.Changes).toConstantValue(new ChangeNotifier(c.get<Logger>(TOKENS.Logger)));
  c.bind(TOKENS.Federation).toConstantValue(options.federation ?? { current: undefined });
  c.bind(TOKENS.ExtensionServices).toConstantValue(options.extensionServices ?? []);
  c.bind(TOKENS.LocalSubjects).toConstantValue(options.localSubjects ?? { current: undefined });
  c.bind(TOKENS.AccessControl).to(AccessControl);
  c.bind(TOKENS.Sessions).to(SessionResolver);
  c.bind(TOKENS.Events).to(EventService);
  c.bind(TOKENS.Objects).to(ObjectService);
  c.bind(TOKENS.Writer).to(CatalogueWriter);
  c.bind(TOKENS.Storing).to(MNStorageService);
  c.bind(TOKENS.Capabilities).to(CapabilitiesService);
  return c;
}
