import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import {
  createFilesystemStorage,
  createTreeStorage,
  openSqliteStore,
  pidFromPath,
  TreeScanner,
  type SqliteStore,
} from '@memberkit/adapter-filesystem';
import { createLogger, createMemberNode, type CoreConfig, type Logger, type MemberNode } from '@memberkit/core';
import type { StorageAdapter } from '@memberkit/types';
import type { MemberkitConfig } from './config-schema.js';
import { resolvePath, type LoadedConfig } from './load-config.js';

export interface BuiltNode {
  node: MemberNode;
  store: SqliteStore;
  scanner?: TreeScanner;
  logger: Logger;
  /** Stop background work (rescans), then close the node. */
  close(): Promise<void>;
}

export function toCoreConfig(config: MemberkitConfig, port: number): CoreConfig {
  const basePath = config.server.basePath;
  return {
    node: {
      ...config.node,
      baseURL: config.node.baseURL ?? `http://localhost:${port}${basePath}`,
    },
    access: config.access,
    basePath,
    maxPageSize: config.limits.maxPageSize,
    ...(config.limits.maxObjectBytes !== undefined ? { maxObjectBytes: config.limits.maxObjectBytes } : {}),
  };
}

/** The scanner of a wrap-mode node (also used by `memberkit scan`). */
export function createScanner(loaded: LoadedConfig, store: SqliteStore, storage: ReturnType<typeof createTreeStorage>): TreeScanner {
  const { config } = loaded;
  const wrap = config.wrap!;
  return new TreeScanner({
    storage,
    catalogue: store.catalogue,
    stateDatabase: store.database,
    nodeId: config.node.identifier,
    pidRule: (relativePath) => pidFromPath(relativePath, wrap.pidPrefix),
    formatOverrides: wrap.formatOverrides,
    rightsHolder: wrap.rightsHolder,
    accessPolicy: { allow: wrap.accessPolicy },
    checksumAlgorithm: wrap.checksumAlgorithm,
  });
}

/** Compose adapters and core from a loaded configuration (the composition root). */
export async function buildNode(loaded: LoadedConfig, options: { port: number; logger?: Logger }): Promise<BuiltNode> {
  const { config } = loaded;
  const logger = options.logger ?? createLogger({ level: config.log.level });
  const dbFile = resolvePath(loaded, config.catalogue.file);
  mkdirSync(dirname(dbFile), { recursive: true });
  const store = openSqliteStore({ file: dbFile });
  let storage: StorageAdapter;
  let tree: ReturnType<typeof createTreeStorage> | undefined;
  if (config.mode === 'wrap') {
    tree = createTreeStorage({ root: resolvePath(loaded, config.wrap!.root) });
    storage = tree;
  } else {
    storage = createFilesystemStorage({ root: resolvePath(loaded, config.storage.root), fsync: config.storage.fsync });
  }
  const node = await createMemberNode(toCoreConfig(config, options.port), { storage, metadata: store.catalogue, eventLog: store.eventLog }, { logger });
  let scanner: TreeScanner | undefined;
  let watcher: { stop(): Promise<void> } | undefined;
  if (tree) {
    scanner = createScanner(loaded, store, tree);
    // Objects appear as they are hashed: the node answers while the first scan runs.
    void scanner.scan().then(
      (r) => logger.info({ ...r, skipped: r.skipped.length }, 'wrap scan finished'),
      (err: unknown) => logger.error({ err }, 'wrap scan failed'),
    );
    const interval = config.wrap!.rescanIntervalSeconds;
    if (interval > 0) watcher = scanner.watch({ intervalMs: interval * 1000 });
  }
  return {
    node,
    store,
    ...(scanner ? { scanner } : {}),
    logger,
    async close() {
      await watcher?.stop();
      await node.close();
    },
  };
}
