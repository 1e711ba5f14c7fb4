import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { serveMetrics, serveNode } from '@memberkit/core';
import { buildNode, tlsOptions } from '../build-node.js';
import { nodeIdentifierProblem } from '../config-schema.js';
import { DEV_KEY_FILE, DEV_SUBJECT, loadConfig } from '../load-config.js';
import { listenError } from '../startup-errors.js';

export interface ServeFlags {
  config?: string;
  port?: number;
  host?: string;
  baseUrl?: string;
  init?: boolean;
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

/** `memberkit serve`: load, build, listen; the banner and hints go to stderr, logs to stdout. */
export async function serveCommand(dir: string, opts: ServeFlags): Promise<void> {
  const loaded = await loadConfig({ dataDir: dir, ...(opts.config ? { configFile: opts.config } : {}), ...(opts.init ? { init: true } : {}) });
  if (opts.baseUrl) loaded.config.node.baseURL = opts.baseUrl;
  const host = opts.host ?? loaded.config.server.host;
  let listenPort = opts.port ?? loaded.config.server.port;
  if (listenPort === 0 && loaded.config.node.baseURL === undefined) listenPort = await freePort(host);
  const built = await buildNode(loaded, { port: listenPort });
  const idProblem = nodeIdentifierProblem(loaded.config.node.identifier);
  if (idProblem) built.logger.warn({ identifier: loaded.config.node.identifier }, `${idProblem}; \`memberkit register\` will refuse it`);
  const tls = tlsOptions(loaded);
  let running;
  try {
    running = await serveNode(built.node, { port: listenPort, hostname: host, ...(tls ? { tls } : {}) });
  } catch (err) {
    await built.close().catch(() => undefined);
    throw listenError(err, listenPort, host, loaded.file) ?? err;
  }
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
  process.once('SIGINT', () => void stop());
  process.once('SIGTERM', () => void stop());
}
