import { readFileSync } from 'node:fs';
import { Command, InvalidArgumentError } from 'commander';
import { registerFederationCommands } from './commands/federation.js';
import { registerNewCommand } from './commands/new.js';
import { registerTokenCommand } from './commands/token.js';
import { registerCnCommands } from './commands/cn.js';
import { registerCnAdminCommands } from './commands/cn-admin.js';
import { registerFederationUpCommand } from './commands/federation-up.js';

// This module only declares the commands: each action imports what it runs when it runs, so
// `--help`, `--version` and light commands never load the core, the adapters or the drivers.

function workers(value: string): number | 'auto' {
  if (value === 'auto') return value;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 256) throw new InvalidArgumentError('workers is "auto" or an integer from 1 to 256');
  return n;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port is an integer from 0 to 65535');
  return n;
}

/** The CLI package's version (package.json sits one folder above both src/ and dist/). */
export function cliVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

export async function runCli(argv: string[]): Promise<void> {
  const program = new Command('memberkit')
    .description('Turn any data repository into a DataONE Member Node')
    .version(cliVersion(), '-V, --version', 'print the version')
    .showHelpAfterError();

  program
    .command('init')
    .description('create a node in a folder: a configuration for files + SQLite and a development key pair')
    .argument('[dir]', 'data folder to create', 'data')
    .action(async (dir: string) => {
      const { initNode } = await import('./load-config.js');
      const file = await initNode(dir);
      console.log(`wrote ${file}; start it with \`memberkit serve ${dir}\``);
    });

  program
    .command('serve')
    .description('serve a Member Node from a data folder holding memberkit.config.json (with no folder named: ./data, created on first run)')
    .argument('[dir]', 'data folder (configuration, catalogue, objects); default ./data, created when missing')
    .option('-c, --config <file>', 'configuration file (default: <dir>/memberkit.config.json)')
    .option('-p, --port <port>', 'port to listen on (overrides server.port; moves a baseURL derived from it)', port)
    .option('--host <host>', 'address to listen on (overrides server.host)')
    .option('--base-url <url>', 'public base URL published in the Node document (overrides node.baseURL)')
    .option('--init', 'create the node first when the folder holds no configuration (as `memberkit init`)')
    .option('--workers <n>', 'processes serving behind the one port: a number, or auto (overrides server.workers; 1: one process)', workers)
    .action(async (dir: string | undefined, opts: { config?: string; port?: number; host?: string; baseUrl?: string; init?: boolean; workers?: number | 'auto' }) => {
      // A folder whose node.type is "cn" holds a Coordinating Node.
      const cn = await import('./commands/cn.js');
      if (dir !== undefined && (await cn.isCnFolder(dir, opts.config))) return cn.cnServeCommand(dir, opts);
      const { serveCommand } = await import('./commands/serve.js');
      // `npm start` names no folder: ./data is the zero-configuration node, created on first run.
      // A named folder must hold a configuration, so a typo never becomes a new, empty node.
      await serveCommand(dir ?? 'data', { ...opts, init: opts.init === true || (dir === undefined && opts.config === undefined) });
    });

  program
    .command('scan')
    .description('rescan a wrapped tree or bucket now: added, changed and removed files become visible to listObjects')
    .argument('[dir]', 'data folder', 'data')
    .option('-c, --config <file>', 'configuration file')
    .action(async (dir: string, opts: { config?: string }) => {
      const { scanCommand } = await import('./commands/scan.js');
      await scanCommand(dir, opts);
    });

  registerNewCommand(program);
  registerFederationCommands(program);
  registerTokenCommand(program);
  registerCnCommands(program);
  registerCnAdminCommands(program);
  registerFederationUpCommand(program);

  await program.parseAsync(argv);
}
