import cluster from 'node:cluster';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { listenFirst, onStopSignals, serveMetrics } from '@memberkit/core';
import { buildNode, tlsOptions } from '../build-node.js';
import { WORKER_ENV, type WorkerSettings } from '../cluster-messages.js';
import { workerCount, type WorkersSetting } from '../cluster-size.js';
import { nodeIdentifierProblem } from '../config-schema.js';
import { DEV_KEY_FILE, DEV_SUBJECT, loadConfig } from '../load-config.js';
import { listenError } from '../startup-errors.js';

export interface ServeFlags {
  config?: string;
  port?: number;
  host?: string;
  baseUrl?: string;
  init?: boolean;
  /** Processes behind the port (overrides server.workers); 1: this process serves alone. */
  workers?: WorkersSetting;
}

function firstRunHelp(dataDir: string, url: string, devKey: boolean): string {
  const lines = [
    `memberkit node at ${url}`,
    `  capabilities:  curl ${url}/v2/node`,
    `  list objects:  curl '${url}/v2/object?count=10'`,
  ];
  if (devKey) {
    lines.push(
      `  write with a token signed by the local developer key (${join(dataDir, DEV_KEY_FILE)}):`,
      `    export TOKEN=$(npm run -s memberkit -- token --subject "${DEV_SUBJECT}" ${dataDir})`,
      `    curl -H "Authorization: Bearer $TOKEN" -F pid=my-first-object -F object=@README.md -F sysmeta=@sysmeta.xml ${url}/v2/object`,
      `  (see README.md for a complete walk-through)`,
    );
  }
  return lines.join('\n');
}

/** A free port on `host`: port 0 resolved before the node is built, so a derived baseURL names the real port. */
function freePort(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(0, host, () => {
      const { port } = probe.address() as { port: number };
      probe.close(() => resolve(port));
    });
  });
}

/**
 * `memberkit serve`: load, build, listen; the banner and hints go to stderr, logs to stdout.
 * With several workers (server.workers, --workers) this process is the cluster's primary:
 * it validates the configuration (and writes a first-run one), chooses the port, and runs
 * the workers (cluster-primary.ts), each of which comes back here as a worker.
 */
export async function serveCommand(dir: string, opts: ServeFlags): Promise<void> {
  const workerSettings = cluster.isWorker ? process.env[WORKER_ENV] : undefined;
  if (workerSettings !== undefined) {
    const { runClusterWorker } = await import('../cluster-worker.js');
    return runClusterWorker(JSON.parse(workerSettings) as WorkerSettings);
  }
  const loaded = await loadConfig({ dataDir: dir, ...(opts.config ? { configFile: opts.config } : {}), ...(opts.init ? { init: true } : {}) });
  if (opts.baseUrl) loaded.config.node.baseURL = opts.baseUrl;
  const host = opts.host ?? loaded.config.server.host;
  const workers = workerCount(loaded.config, opts.workers ?? loaded.config.server.workers);
  if (workers.count > 1) return serveCluster(loaded, opts, host, workers);
  const listenPort = opts.port ?? loaded.config.server.port;
  const tls = tlsOptions(loaded);
  // The port is bound before the node is built: port 0 resolves to the port the derived
  // baseURL names, and no other process can take it in between.
  let pending;
  try {
    pending = await listenFirst({ port: listenPort, hostname: host, ...(tls ? { tls } : {}) });
  } catch (err) {
    throw listenError(err, listenPort, host, loaded.file) ?? err;
  }
  let built;
  try {
    built = await buildNode(loaded, { port: pending.port });
  } catch (err) {
    await pending.close();
    throw err;
  }
  const idProblem = nodeIdentifierProblem(loaded.config.node.identifier);
  if (idProblem) built.logger.warn({ identifier: loaded.config.node.identifier }, `${idProblem}; \`memberkit register\` will refuse it`);
  const running = pending.attach(built.node);
  let metricsServer: { port: number; close(): Promise<void> } | undefined;
  if (built.metrics) {
    const m = loaded.config.metrics;
    try {
      metricsServer = await serveMetrics(built.metrics, { port: m.port, host: m.host });
    } catch (err) {
      await running.close().catch(() => undefined);
      throw listenError(err, m.port, m.host, loaded.file, { port: 'metrics.port', portFlag: '', host: 'metrics.host', hostFlag: '' }) ?? err;
    }
  }
  const url = `${tls ? 'https' : 'http'}://localhost:${running.port}${loaded.config.server.basePath}`;
  if (loaded.created) console.error(`wrote a first-run configuration to ${loaded.file}`);
  console.error(firstRunHelp(loaded.baseDir, url, existsSync(join(loaded.baseDir, DEV_KEY_FILE))));
  if (metricsServer) console.error(`  metrics:       curl http://${loaded.config.metrics.host}:${metricsServer.port}/metrics`);
  const stop = async () => {
    built.logger.info({}, 'shutting down');
    await metricsServer?.close();
    await running.close();
    process.exit(0);
  };
  onStopSignals(stop);
}

/** Several workers behind one port: the port is chosen here, before any worker starts, so all of them and the banner agree. */
async function serveCluster(loaded: Awaited<ReturnType<typeof loadConfig>>, opts: ServeFlags, host: string, workers: { count: number; reason: string }): Promise<void> {
  const configured = opts.port ?? loaded.config.server.port;
  const port = configured === 0 ? await freePort(host) : configured;
  const idProblem = nodeIdentifierProblem(loaded.config.node.identifier);
  const { runClusterPrimary } = await import('../cluster-primary.js');
  const tls = loaded.config.server.tls !== undefined;
  await runClusterPrimary({
    loaded,
    count: workers.count,
    warnings: idProblem ? [{ fields: { identifier: loaded.config.node.identifier }, message: `${idProblem}; \`memberkit register\` will refuse it` }] : [],
    settings: {
      dir: loaded.baseDir,
      // The file named, or the one in the folder (written by --init here if it was missing).
      configFile: loaded.file,
      port,
      host,
      ...(loaded.config.node.baseURL !== undefined ? { baseUrl: loaded.config.node.baseURL } : {}),
    },
    ...(configured === 0 ? { choosePort: () => freePort(host) } : {}),
    banner(served, metricsPort) {
      const url = `${tls ? 'https' : 'http'}://localhost:${served}${loaded.config.server.basePath}`;
      if (loaded.created) console.error(`wrote a first-run configuration to ${loaded.file}`);
      console.error(firstRunHelp(loaded.baseDir, url, existsSync(join(loaded.baseDir, DEV_KEY_FILE))));
      console.error(`  workers:       ${workers.count} processes behind port ${served} (${workers.reason})`);
      if (metricsPort !== undefined) console.error(`  metrics:       curl http://${loaded.config.metrics.host}:${metricsPort}/metrics (every worker's, aggregated)`);
    },
  });
}
