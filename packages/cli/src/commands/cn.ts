import { InvalidArgumentError, type Command } from 'commander';

// The Coordinating Node's commands: `memberkit cn init DIR`, `memberkit cn serve DIR` (also
// reached by `memberkit serve DIR` when the folder's node.type is "cn") and
// `memberkit cn add-format`. Each action imports @memberkit/cn when it runs.

export interface CnServeFlags {
  config?: string;
  port?: number;
  host?: string;
  baseUrl?: string;
}

function port(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new InvalidArgumentError('a port is an integer from 0 to 65535');
  return n;
}

/**
 * True when the folder's (or the named) configuration declares a Coordinating Node
 * (`node.type` "cn"). Reads the JSON only: a Member Node's start does not load @memberkit/cn.
 */
export async function isCnFolder(dir: string, configFile?: string): Promise<boolean> {
  const { readFile } = await import('node:fs/promises');
  const { join, resolve } = await import('node:path');
  const { CONFIG_FILE_NAME } = await import('../node-files.js');
  try {
    const raw = JSON.parse(await readFile(configFile ? resolve(configFile) : join(resolve(dir), CONFIG_FILE_NAME), 'utf8')) as { node?: { type?: unknown } } | null;
    return raw?.node?.type === 'cn';
  } catch {
    // Missing or unreadable: the Member Node's loader reports it.
    return false;
  }
}

/** `memberkit cn serve DIR`: load, build, listen; the banner goes to stderr, logs to stdout. */
export async function cnServeCommand(dir: string, opts: CnServeFlags): Promise<void> {
  const { createCnParts, createCoordinatingNode, loadCnFolder, resolveCnPath, toCnConfig } = await import('@memberkit/cn');
  const { createLogger, listenFirst, onStopSignals } = await import('@memberkit/core');
  const { listenError } = await import('../startup-errors.js');
  const { readFileSync } = await import('node:fs');
  const loaded = loadCnFolder({ dir, ...(opts.config ? { configFile: opts.config } : {}) });
  if (opts.baseUrl) loaded.config.node.baseURL = opts.baseUrl;
  const host = opts.host ?? loaded.config.server.host;
  const listenPort = opts.port ?? loaded.config.server.port;
  const tls = loaded.config.server.tls;
  const read = (p: string) => readFileSync(resolveCnPath(loaded, p), 'utf8');
  // Bound before the node is built: port 0 resolves to the port the derived baseURL names.
  let pending;
  try {
    pending = await listenFirst({
      port: listenPort,
      hostname: host,
      ...(tls ? { tls: { cert: read(tls.cert), key: read(tls.key), ca: tls.ca.map(read) } } : {}),
    });
  } catch (err) {
    throw listenError(err, listenPort, host, loaded.file) ?? err;
  }
  const logger = createLogger({ level: loaded.config.log.level });
  let running;
  try {
    const config = toCnConfig(loaded, pending.port);
    running = pending.attach(await createCoordinatingNode(config, { ...createCnParts(loaded), logger }));
  } catch (err) {
    await pending.close();
    throw err;
  }
  const url = `${tls ? 'https' : 'http'}://localhost:${running.port}${loaded.config.server.basePath}`;
  console.error([
    `memberkit coordinating node at ${url}`,
    `  capabilities:  curl ${url}/v2`,
    `  formats:       curl ${url}/v2/formats`,
    `  a token for the administrator: npm run -s memberkit -- cn token --subject "${loaded.config.access.administrators[0] ?? 'SUBJECT'}" ${dir}`,
  ].join('\n'));
  const stop = async () => {
    logger.info({}, 'shutting down');
    await running.close();
    process.exit(0);
  };
  onStopSignals(stop);
}

export function registerCnCommands(program: Command): void {
  const cn = program.command('cn').description('a DataONE Coordinating Node: create, serve and administer one');

  cn.command('init')
    .description('create a Coordinating Node in a folder: a configuration on files + SQLite and the CN\'s token signing key pair')
    .argument('<dir>', 'folder to create')
    .option('--identifier <id>', 'the CN\'s node identifier', 'urn:node:CNLOCAL')
    .option('-p, --port <port>', 'server.port', port)
    .action(async (dir: string, opts: { identifier: string; port?: number }) => {
      const { initCnFolder } = await import('@memberkit/cn');
      const file = initCnFolder(dir, {
        node: { type: 'cn', identifier: opts.identifier },
        ...(opts.port !== undefined ? { server: { port: opts.port, basePath: '/cn' } } : {}),
      });
      console.log(`wrote ${file}; start it with \`memberkit cn serve ${dir}\``);
    });

  cn.command('serve')
    .description('serve the Coordinating Node whose memberkit.config.json is in dir')
    .argument('<dir>', 'CN folder')
    .option('-c, --config <file>', 'configuration file (default: <dir>/memberkit.config.json)')
    .option('-p, --port <port>', 'port to listen on (overrides server.port)', port)
    .option('--host <host>', 'address to listen on (overrides server.host)')
    .option('--base-url <url>', 'public base URL published in the Node document (overrides node.baseURL)')
    .action(async (dir: string, opts: CnServeFlags) => {
      await cnServeCommand(dir, opts);
    });

  cn.command('add-format')
    .description('add an object format to the CN\'s format list (listFormats, getFormat)')
    .argument('<dir>', 'CN folder')
    .requiredOption('--id <formatId>', 'the formatId')
    .requiredOption('--name <formatName>', 'the formatName')
    .requiredOption('--type <formatType>', 'DATA, METADATA or RESOURCE')
    .option('--media-type <mediaType>', 'the media type', 'application/octet-stream')
    .option('--extension <ext>', 'the usual file extension, without the dot', '')
    .action(async (dir: string, opts: { id: string; name: string; type: string; mediaType: string; extension: string }) => {
      const { addFormatToFolder } = await import('@memberkit/cn');
      const type = opts.type.toUpperCase();
      if (!['DATA', 'METADATA', 'RESOURCE'].includes(type)) throw new InvalidArgumentError(`--type must be DATA, METADATA or RESOURCE (got '${opts.type}')`);
      await addFormatToFolder(dir, { formatId: opts.id, formatName: opts.name, formatType: type, mediaType: opts.mediaType, extension: opts.extension.replace(/^\./, '') });
      console.log(`added format '${opts.id}' to the Coordinating Node in ${dir}`);
    });
}
