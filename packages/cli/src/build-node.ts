import { mkdirSync, readFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { createLogger, createMemberNode, createNodeMetrics, isWrapStorage, observeRequests, pidFromPath, WrapScanner, type CoreConfig, type Logger, type MemberNode, type NodeMetrics } from '@memberkit/core';
import type { CatalogueAdapter, StorageAdapter } from '@memberkit/types';
import { createPackagesExtension, createViewsExtension } from '@memberkit/views';
import { createQueryExtension, type QueryExtension } from '@memberkit/query';
import { catalogueBackend, storageBackend, type BackendContext, type Backends, type Catalogue, type ScanReport, type WrapOptions } from './backends/index.js';
import type { MemberkitConfig } from './config-schema.js';
import { formatRulesProblems } from '@memberkit/science';
import { ConfigError, resolvePath, type LoadedConfig } from './load-config.js';
import { progressFigures, startProgress } from './progress.js';
import { labelOpenFailures } from './startup-errors.js';

export interface BuiltNode {
  node: MemberNode;
  scanner?: WrapScanner;
  logger: Logger;
  /** Present when `metrics.enabled`: serve it with serveMetrics. */
  metrics?: NodeMetrics;
  /** Stop background work (rescans), then close the node. */
  close(): Promise<void>;
  /** Present when this process keeps the query index current: apply every change committed so far (asked by the other workers). */
  indexCatchUp?(): Promise<void>;
}

/**
 * A worker of `memberkit serve --workers` other than the first: the first worker runs the
 * background work of the folder (wrap scans, the sweep of stranded bytes, query indexing) so
 * it runs once; this one serves requests only, and asks the first to bring the shared query
 * index up to date before each query.
 */
export interface FollowerRole {
  indexCatchUp(): Promise<void>;
}

export function toCoreConfig(config: MemberkitConfig, port: number, resolve: (p: string) => string = (p) => p): CoreConfig {
  const basePath = config.server.basePath;
  const f = config.federation;
  return {
    node: {
      ...config.node,
      baseURL: config.node.baseURL ?? `http://localhost:${port}${basePath}`,
    },
    access: config.access,
    auth: authConfig(config, resolve),
    basePath,
    maxPageSize: config.limits.maxPageSize,
    sweep: { graceMs: config.sweep.graceSeconds * 1000, intervalMs: config.sweep.intervalSeconds * 1000 },
    ...(config.limits.maxObjectBytes !== undefined ? { maxObjectBytes: config.limits.maxObjectBytes } : {}),
    ...(f
      ? {
          federation: {
            cnBaseUrl: f.cnBaseUrl,
            credentials: {
              ...(f.credentials.tokenFile ? { token: () => readFileSync(resolve(f.credentials.tokenFile!), 'utf8').trim() } : {}),
              ...(f.credentials.certificate ? { certificate: { cert: readFileSync(resolve(f.credentials.certificate.cert), 'utf8'), key: readFileSync(resolve(f.credentials.certificate.key), 'utf8') } } : {}),
              ...(f.credentials.ca.length ? { ca: f.credentials.ca.map((p) => readFileSync(resolve(p), 'utf8')) } : {}),
            },
            replication: { concurrency: f.replication.concurrency, maxAttempts: f.replication.maxAttempts, leaseMs: f.replication.leaseMs, ...(f.replication.retryDelayMs !== undefined ? { retryDelayMs: f.replication.retryDelayMs } : {}) },
            checkReservations: f.checkReservations,
            ...(f.syncFailureWebhook ? { syncFailureWebhook: f.syncFailureWebhook } : {}),
          },
        }
      : {}),
  };
}

/** The auth section with its files read (paths relative to the configuration). */
export function authConfig(config: MemberkitConfig, resolve: (p: string) => string): NonNullable<CoreConfig['auth']> {
  const a = config.auth;
  const read = (p: string) => readFileSync(resolve(p), 'utf8');
  const clientCa = (a.clientCa ?? config.server.tls?.ca ?? []).map(read);
  return {
    clientCa,
    ...(a.proxy ? { proxy: { header: a.proxy.header, trustedProxies: a.proxy.trustedProxies, verifyValue: a.proxy.verifyValue, ...(a.proxy.verifyHeader ? { verifyHeader: a.proxy.verifyHeader } : {}) } } : {}),
    jwt: {
      keys: a.jwt.keys.map(read),
      clockToleranceSeconds: a.jwt.clockToleranceSeconds,
      ...(a.jwt.issuer ? { issuer: a.jwt.issuer } : {}),
      ...(a.jwt.algorithms ? { algorithms: a.jwt.algorithms } : {}),
      ...(a.jwt.jwksUrl ? { jwksUrl: a.jwt.jwksUrl } : {}),
    },
    identity: { ...a.identity },
  };
}

/** The HTTPS options of `server.tls`, files read. */
export function tlsOptions(loaded: LoadedConfig): { cert: string; key: string; ca: string[] } | undefined {
  const tls = loaded.config.server.tls;
  if (!tls) return undefined;
  const read = (p: string) => readFileSync(resolvePath(loaded, p), 'utf8');
  return { cert: read(tls.cert), key: read(tls.key), ca: tls.ca.map(read) };
}

interface Parts {
  storage: StorageAdapter;
  catalogue: Catalogue;
  ctx: BackendContext;
}

/** A catalogue without its own event log gets this one, in an SQLite file beside the configuration. */
const EMBEDDED_EVENT_LOG_FILE = 'memberkit-events.db';

/** Build (not open) a storage by its configuration section (ctx.createStorage: the files of a mapped catalogue). */
async function createStorage(backends: Backends, section: { type: string } & Record<string, unknown>, ctx: BackendContext): Promise<StorageAdapter> {
  const { type, ...options } = section;
  const backend = storageBackend(type, backends);
  if (!backend) throw new ConfigError(`storage type '${type}' is not offered (known: ${backends.storage.map((b) => b.type).join(', ')})`);
  const parsed = await backend.options['~standard'].validate(options);
  if (parsed.issues) throw new ConfigError(`storage type '${type}': ${parsed.issues.map((i) => i.message).join('; ')}`);
  return backend.create(parsed.value as never, ctx);
}

/** The adapters the configuration asks for (not yet opened), from the backends loaded with it. */
async function createParts(loaded: LoadedConfig, logger: Logger): Promise<Parts> {
  const { config } = loaded;
  const { backends } = loaded;
  let catalogue: Catalogue | undefined;
  const { type: catalogueType, ...catalogueOptions } = config.catalogue;
  const ctx: BackendContext = {
    resolvePath: (p) => resolvePath(loaded, p),
    logger,
    scanState: () => {
      const state = catalogue?.scanState;
      if (!state) throw new ConfigError(`wrap: the catalogue type '${catalogueType}' keeps no scan state`);
      return state;
    },
    createStorage: (section) => createStorage(backends, section, ctx),
  };
  // parseConfig validated both sections with these backends' schemas (defaults filled in).
  const parts = await catalogueBackend(catalogueType, backends)!.create(catalogueOptions as never, ctx);
  catalogue = { ...parts, eventLog: parts.eventLog ?? (await embeddedEventLog(ctx)) };
  const { type: storageType, ...storageOptions } = config.storage;
  const backend = storageBackend(storageType, backends)!;
  const created = await backend.create(storageOptions as never, ctx);
  // Generated dataset maps (wrap.datasets) are served beside any wrappable storage, from the catalogue's scan state.
  const storage = backend.wrappable ? new (await import('@memberkit/science')).DatasetMapStorage(created, () => ctx.scanState()) : created;
  // A database that refuses us or a missing bucket: one line naming the settings to change.
  labelOpenFailures('catalogue', [catalogue.metadata, catalogue.eventLog, ...(catalogue.jobs ? [catalogue.jobs] : [])], config, loaded.file);
  labelOpenFailures('storage', [storage], config, loaded.file);
  return { storage, catalogue, ctx };
}

/** The event log of a catalogue that keeps none: the embedded SQL store's, beside the configuration. */
async function embeddedEventLog(ctx: BackendContext) {
  const { createSqlCatalogue } = await import('@memberkit/adapter-sql');
  return createSqlCatalogue({ dialect: 'sqlite', connection: ctx.resolvePath(EMBEDDED_EVENT_LOG_FILE) }).eventLog;
}

function wrapOptions(config: MemberkitConfig): WrapOptions {
  const wrap = config.wrap!;
  return {
    nodeId: config.node.identifier,
    pidPrefix: wrap.pidPrefix,
    formatOverrides: wrap.formatOverrides,
    extraFormats: wrap.extraFormats,
    rightsHolder: wrap.rightsHolder,
    accessPolicy: { allow: wrap.accessPolicy },
    ...(wrap.checksumAlgorithm ? { checksumAlgorithm: wrap.checksumAlgorithm } : {}),
    datasets: wrap.datasets,
  };
}

/** MNQuery over the configured index (SQLite file next to the configuration, or PostgreSQL); a follower only reads it. */
function queryExtension(loaded: LoadedConfig, follower?: FollowerRole) {
  const q = loaded.config.extensions.query;
  const elsewhere = follower ? { indexedElsewhere: { catchUp: () => follower.indexCatchUp() } } : {};
  if (q.index === 'postgres') return createQueryExtension({ index: { kind: 'postgres', url: q.url!, schema: q.schema }, ...elsewhere });
  const file = resolvePath(loaded, q.file);
  mkdirSync(dirname(file), { recursive: true });
  return createQueryExtension({ index: { kind: 'sqlite', file }, ...elsewhere });
}

/** The wrap-mode scanner of a configuration (also used by `memberkit scan`): the core's, over the storage's listing. */
export function createScanner(loaded: LoadedConfig, storage: StorageAdapter, metadata: CatalogueAdapter, node: MemberNode, ctx: BackendContext, logger: Logger): WrapScanner {
  // An override naming a format outside the list (and not extra) is refused before any scan.
  const wrap = wrapOptions(loaded.config);
  const problems = formatRulesProblems({ overrides: wrap.formatOverrides, extraFormats: wrap.extraFormats });
  if (problems.length > 0) throw new ConfigError(problems.map((p) => `invalid configuration in ${loaded.file}: ${p}`).join('\n'));
  // Generated dataset maps are served beside the wrapped storage; the scanner walks the storage itself.
  const inner = (storage as { inner?: StorageAdapter }).inner ?? storage;
  if (!isWrapStorage(inner)) throw new ConfigError(`wrap: storage type '${loaded.config.storage.type}' does not list its entries`);
  const root = (inner as { root?: unknown }).root;
  return new WrapScanner({
    storage: inner,
    root: typeof root === 'string' ? root : loaded.config.storage.type,
    catalogue: metadata,
    writer: node.writer,
    state: ctx.scanState(),
    nodeId: wrap.nodeId,
    pidRule: (key) => pidFromPath(key, wrap.pidPrefix),
    formatOverrides: wrap.formatOverrides,
    extraFormats: wrap.extraFormats,
    rightsHolder: wrap.rightsHolder,
    accessPolicy: wrap.accessPolicy,
    ...(wrap.checksumAlgorithm ? { checksumAlgorithm: wrap.checksumAlgorithm } : {}),
    datasets: wrap.datasets,
    logger,
  });
}

/** The node of a configuration: core, adapters and the enabled extensions (a follower: no sweep, the query index only read). */
async function createNode(loaded: LoadedConfig, parts: Parts, port: number, logger: Logger, follower?: FollowerRole): Promise<MemberNode> {
  const { config } = loaded;
  return createMemberNode(
    toCoreConfig(config, port, (p) => resolvePath(loaded, p)),
    { storage: parts.storage, metadata: parts.catalogue.metadata, eventLog: parts.catalogue.eventLog, ...(parts.catalogue.jobs ? { jobs: parts.catalogue.jobs } : {}) },
    { logger, ...(follower ? { sweep: false as const } : {}), extensions: [...(config.extensions.views ? [createViewsExtension({ baseURL: () => loaded.config.node.baseURL, federation: () => loaded.config.federation?.cnBaseUrl })] : []), ...(config.extensions.packages ? [createPackagesExtension()] : []), ...(config.extensions.query.enabled ? [queryExtension(loaded, follower)] : [])] },
  );
}

/** Compose adapters and core from a loaded configuration (the composition root). */
export async function buildNode(loaded: LoadedConfig, options: { port: number; logger?: Logger; follower?: FollowerRole }): Promise<BuiltNode> {
  const { config } = loaded;
  const logger = options.logger ?? createLogger({ level: config.log.level });
  const parts = await createParts(loaded, logger);
  const node = await createNode(loaded, parts, options.port, logger, options.follower);
  let metrics: NodeMetrics | undefined;
  if (config.metrics.enabled) {
    metrics = createNodeMetrics({ metadata: parts.catalogue.metadata, ...(parts.catalogue.jobs ? { jobs: parts.catalogue.jobs } : {}) });
    observeRequests(node.app, metrics.request);
  }
  let scanner: WrapScanner | undefined;
  let watcher: { stop(): Promise<void> } | undefined;
  // A follower scans nothing: the first worker scans (once, then every rescanIntervalSeconds).
  if (config.wrap && !options.follower) {
    scanner = createScanner(loaded, parts.storage, parts.catalogue.metadata, node, parts.ctx, logger);
    const counts = (r: ScanReport) => ({ added: r.added, changed: r.changed, removed: r.removed, unchanged: r.unchanged, skipped: r.skipped.length });
    // Objects appear as they are hashed: the node answers while the first scan runs, and
    // its progress shows (a live line on a terminal, a log line every 5 s otherwise).
    const expected = await expectedFiles(parts.catalogue.metadata);
    const progress = await startProgress({ label: 'wrap scan', logger, ...(expected ? { expected } : {}) });
    metrics?.scan.started();
    // The process's CPU over the scan (every thread: hashing included): steadier than its
    // duration on a shared machine (requests served meanwhile count too).
    const cpuAtStart = process.cpuUsage();
    void scanner.scan({ onProgress: (r) => { progress.update(r); metrics?.scan.progress(counts(r)); } }).then(
      (r) => {
        progress.stop();
        if (r.leased === false) {
          logger.debug({}, 'wrap scan skipped: another process is scanning this root');
          return;
        }
        metrics?.scan.finished({ ...counts(r), durationMs: r.durationMs });
        const cpu = process.cpuUsage(cpuAtStart);
        logger.info({ ...progressFigures(r), added: r.added, changed: r.changed, removed: r.removed, durationMs: Math.round(r.durationMs), cpuMs: Math.round((cpu.user + cpu.system) / 1000) }, 'wrap scan finished');
      },
      (err: unknown) => {
        progress.stop();
        metrics?.scan.failed();
        logger.error({ err }, 'wrap scan failed');
      },
    );
    if (config.wrap.rescanIntervalSeconds > 0) {
      watcher = scanner.watch({
        intervalMs: config.wrap.rescanIntervalSeconds * 1000,
        // The scanners log what each rescan changed; here only the metrics hear of it.
        onScan: (r) => metrics?.scan.finished({ ...counts(r), durationMs: r.durationMs }),
        onError: (err) => {
          metrics?.scan.failed();
          logger.error({ err }, 'wrap rescan failed');
        },
      });
    }
  }
  const indexer = (node.services.extensions.find((e) => e.name === 'query') as QueryExtension | undefined)?.indexer;
  return {
    node,
    ...(scanner ? { scanner } : {}),
    ...(metrics ? { metrics } : {}),
    logger,
    async close() {
      await watcher?.stop();
      await node.close();
    },
    ...(indexer ? { indexCatchUp: () => indexer.catchUp() } : {}),
  };
}

/** Objects already catalogued: what the previous scan found, this scan's likely total (for an ETA). */
async function expectedFiles(metadata: CatalogueAdapter): Promise<number | undefined> {
  const total = (await metadata.list({ start: 0, count: 0 }).catch(() => undefined))?.total;
  return total ? total : undefined;
}

/**
 * Run one scan of a wrapped storage now (`memberkit scan`), its progress shown while it runs.
 * The node is built without serving, so the scan's changes are logged and indexed as a
 * running node's are; it waits for a scan another process is running on the same root.
 */
export async function scanOnce(loaded: LoadedConfig, logger: Logger): Promise<ScanReport> {
  if (!loaded.config.wrap) throw new Error('scan applies to configurations with a "wrap" section');
  const parts = await createParts(loaded, logger);
  const node = await createNode({ ...loaded, config: { ...loaded.config, federation: undefined } }, parts, loaded.config.server.port, logger);
  try {
    const scanner = createScanner(loaded, parts.storage, parts.catalogue.metadata, node, parts.ctx, logger);
    const expected = await expectedFiles(parts.catalogue.metadata);
    const progress = await startProgress({ label: 'wrap scan', logger, ...(expected ? { expected } : {}) });
    try {
      return await scanner.scan({ onProgress: (r) => progress.update(r), waitForLease: true });
    } finally {
      progress.stop();
    }
  } finally {
    await node.close();
  }
}
