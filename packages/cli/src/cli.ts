import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Command, InvalidArgumentError } from 'commander';
import { serveNode } from '@memberkit/core';
import { createLogger } from '@memberkit/core';
import { buildNode, scanOnce, tlsOptions } from './build-node.js';
import { registerNewCommand } from './commands/new.js';
import { registerFederationCommands } from './commands/federation.js';
import { registerTokenCommand } from './commands/token.js';
import { CONFIG_FILE_NAME, ConfigError, DEV_KEY_FILE, DEV_SUBJECT, loadConfig } from './load-config.js';

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port is an integer from 0 to 65535');
  return n;
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

export async function runCli(argv: string[]): Promise<void> {
  const program = new Command('memberkit').description('Turn any data repository into a DataONE Member Node').showHelpAfterError();

  program
    .command('serve')
    .description('serve a Member Node (first run: writes a configuration for files + SQLite into the data folder)')
    .argument('[dir]', 'data folder (configuration, catalogue, objects)', 'data')
    .option('-c, --config <file>', `configuration file (default: <dir>/${CONFIG_FILE_NAME})`)
    .option('-p, --port <port>', 'port to listen on (overrides the configuration)', port)
    .option('--host <host>', 'address to listen on')
    .option('--base-url <url>', 'public base URL published in the Node document')
    .action(async (dir: string, opts: { config?: string; port?: number; host?: string; baseUrl?: string }) => {
      const loaded = loadConfig({ dataDir: dir, ...(opts.config ? { configFile: opts.config } : {}) });
      if (opts.baseUrl) loaded.config.node.baseURL = opts.baseUrl;
      const listenPort = opts.port ?? loaded.config.server.port;
      const built = await buildNode(loaded, { port: listenPort });
      const tls = tlsOptions(loaded);
      const running = await serveNode(built.node, { port: listenPort, hostname: opts.host ?? loaded.config.server.host, ...(tls ? { tls } : {}) });
      if (listenPort === 0) loaded.config.node.baseURL ??= `http://localhost:${running.port}${loaded.config.server.basePath}`;
      const url = `${tls ? 'https' : 'http'}://localhost:${running.port}${loaded.config.server.basePath}`;
      if (loaded.created) console.log(`wrote a first-run configuration to ${loaded.file}`);
      console.log(firstRunHelp(loaded.baseDir, url, existsSync(join(loaded.baseDir, DEV_KEY_FILE))));
      const stop = async () => {
        built.logger.info({}, 'shutting down');
        await running.close();
        process.exit(0);
      };
      process.once('SIGINT', () => void stop());
      process.once('SIGTERM', () => void stop());
    });

  program
    .command('scan')
    .description('rescan a wrapped tree now: added, changed and removed files become visible to listObjects')
    .argument('[dir]', 'data folder', 'data')
    .option('-c, --config <file>', 'configuration file')
    .action(async (dir: string, opts: { config?: string }) => {
      const loaded = loadConfig({ dataDir: dir, ...(opts.config ? { configFile: opts.config } : {}) });
      if (!loaded.config.wrap) throw new ConfigError('scan applies to configurations with a "wrap" section');
      const report = await scanOnce(loaded, createLogger({ level: loaded.config.log.level }));
      console.log(`added ${report.added}, changed ${report.changed}, removed ${report.removed}, unchanged ${report.unchanged}, skipped ${report.skipped.length} (${report.durationMs} ms)`);
      for (const s of report.skipped.slice(0, 20)) console.log(`  skipped ${s.path}: ${s.reason}`);
    });

  registerNewCommand(program);
  registerFederationCommands(program);
  registerTokenCommand(program);

  await program.parseAsync(argv);
}
