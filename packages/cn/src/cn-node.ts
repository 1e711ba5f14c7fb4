import { Hono } from 'hono';
import type { StorageAdapter } from '@memberkit/types';
import {
  answerUnknownPaths,
  createBaseApp,
  createLogger,
  createNodeContainer,
  MonotonicClock,
  operationRoute,
  rawPath,
  TOKENS,
  type Clock,
  type LocalSubjectsHandle,
  type Logger,
} from '@memberkit/core';
import type { SqlCatalogue } from '@memberkit/adapter-sql';
import type { CnConfig } from './config.js';
import type { NodeDirectory, SubjectDirectory } from './ports.js';
import type { CnServices } from './services.js';
import type { CnRouteModule } from './http/route-module.js';
import { coordinatingNodeDocument } from './capabilities.js';
import { migrateCnAreas, type CnSchemaArea } from './store/cn-migrations.js';
import { coreArea } from './store/core-area.js';
import { FormatStore } from './store/formats.js';
import { ReservationStore } from './store/reservations.js';
import { coreRoutes } from './http/core-routes.js';
import { readRoutes } from './http/read-routes.js';
import { authorizationRoutes } from './http/authorization-routes.js';
import { viewRoutes } from './http/view-routes.js';
import { NodeRegistry } from './registry/node-registry.js';
import { registryRoutes } from './registry/routes.js';
import { registrySchema } from './registry/schema.js';
import { tokenRoutes } from './tokens/routes.js';
import { identityArea } from './identity/schema.js';
import { identityRoutes } from './identity/routes.js';
import { IdentityStore } from './identity/identity-store.js';
import { SqlSubjectDirectory } from './identity/subject-directory.js';
import { diagnosticRoutes } from './diagnostic/routes.js';

/** The CN's schema areas, each owned by one module (see cn-migrations.ts). */
const AREAS: readonly CnSchemaArea[] = [
  coreArea,
  registrySchema,
  identityArea,
];

/** The CN's API groups; each module registers its routes on each version's sub-app. */
const ROUTE_MODULES: readonly CnRouteModule[] = [
  coreRoutes,
  readRoutes,
  authorizationRoutes,
  viewRoutes,
  registryRoutes,
  tokenRoutes,
  identityRoutes,
  diagnosticRoutes,
];

/** Bring the CN's tables (every area) to the newest schema; the store must be open. */
export function migrateCoordinatingNode(catalogue: SqlCatalogue): Promise<void> {
  return migrateCnAreas(catalogue.store, AREAS);
}

export interface CoordinatingNodeOptions {
  /** The native SQL catalogue (createSqlCatalogue): the CN's copies, its event log, and its mk_cn_* tables. */
  catalogue: SqlCatalogue;
  /** Managed storage of the bytes the CN holds (science metadata, resource maps). */
  storage: StorageAdapter;
  logger?: Logger;
  clock?: Clock;
  /** Replace the node registry (default: the CN's own, in its database). */
  nodes?: NodeDirectory;
  /** Replace the identity store (default: the CN's own, in its database). */
  subjects?: SubjectDirectory;
}

export interface CoordinatingNode {
  app: Hono;
  services: CnServices;
  /** Close the catalogue and storage (the HTTP server, if any, is closed by its owner). */
  close(): Promise<void>;
}

/**
 * Build a Coordinating Node: opens the catalogue and storage, migrates the CN's tables,
 * wires the core's services over the CN's copies (sessions expanded through the CN's own
 * identity store), and returns the Hono app serving `{basePath}/v1` and `{basePath}/v2`.
 */
export async function createCoordinatingNode(config: CnConfig, options: CoordinatingNodeOptions): Promise<CoordinatingNode> {
  const logger = options.logger ?? createLogger();
  const clock = options.clock ?? new MonotonicClock();
  const { catalogue, storage } = options;
  await catalogue.open();
  try {
    await storage.open?.();
  } catch (err) {
    await catalogue.close().catch(() => undefined);
    throw err;
  }
  const close = async () => {
    await storage.close?.();
    await catalogue.close();
  };
  try {
    const store = catalogue.store;
    await migrateCoordinatingNode(catalogue);

    const nodes = options.nodes ?? new NodeRegistry(store);
    const subjects = options.subjects ?? new SqlSubjectDirectory(new IdentityStore(store));
    const localSubjects: LocalSubjectsHandle = { current: subjects };
    const container = createNodeContainer(
      config,
      { storage, metadata: catalogue.catalogue, eventLog: catalogue.eventLog, jobs: catalogue.jobs },
      { logger, clock, localSubjects },
    );
    const services: CnServices = {
      config,
      logger,
      clock,
      store,
      metadata: catalogue.catalogue,
      storage,
      eventLog: catalogue.eventLog,
      objects: container.get(TOKENS.Objects),
      storing: container.get(TOKENS.Storing),
      access: container.get(TOKENS.AccessControl),
      events: container.get(TOKENS.Events),
      writer: container.get(TOKENS.Writer),
      sessions: container.get(TOKENS.Sessions),
      nodes,
      subjects,
      formats: new FormatStore(store),
      reservations: new ReservationStore(store),
      capabilities: () => coordinatingNodeDocument(config),
      ping: async () => {
        await catalogue.catalogue.identifierUse('memberkit:ping');
      },
    };
    // Read events written behind (EventService.recordBehind) are committed before the catalogue closes.
    const closeAll = async () => {
      await services.events.settled();
      await close();
    };
    return { app: createCnApp(services), services, close: closeAll };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}

/** The CN's HTTP face: every route module under `{basePath}/v1` and `{basePath}/v2`, DataONE errors everywhere under the base. */
export function createCnApp(services: CnServices): Hono {
  const basePath = services.config.basePath.replace(/\/+$/, '');
  const app = createBaseApp(services.logger);
  for (const version of ['v1', 'v2'] as const) {
    const api = new Hono({ getPath: rawPath });
    const operation = operationRoute(services, version);
    for (const register of ROUTE_MODULES) register(api, { services, operation, version });
    app.route(`${basePath}/${version}`, api);
    // getCapabilities is `GET /` under the version path: with and without the trailing slash.
    app.get(`${basePath}/${version}/`, (c) => api.fetch(new Request(new URL('/', c.req.url), c.req.raw), c.env));
  }
  // The capabilities document also at the bare base address, as on a Member Node.
  const bare = operationRoute(services, 'v2')('CNCore.getCapabilities', async (c) => app.fetch(new Request(new URL(`${basePath}/v2`, c.req.url), { headers: c.req.raw.headers }), c.env));
  app.get(basePath === '' ? '/' : basePath, bare);
  if (basePath !== '') app.get(`${basePath}/`, bare);
  answerUnknownPaths(app, { basePath, logger: services.logger, operation: 'CNCore.getCapabilities', api: 'the Coordinating Node API' });
  return app;
}
