import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { CoordinatingNodeClient } from '@memberkit/client';
import type { LoadedConfig } from '../load-config.js';
import { ConfigError } from '../node-files.js';

// The configuration, the client, the core and the node are imported by the actions that use
// them (a fast --help).
const config = () => import('../load-config.js');

interface CnOptions {
  config?: string;
  cn?: string;
  token?: string;
  tokenFile?: string;
  cert?: string;
  key?: string;
}

/** A CN client from flags, else from the configuration's federation section. */
async function cnClient(loaded: LoadedConfig, o: CnOptions): Promise<CoordinatingNodeClient> {
  const { CoordinatingNodeClient } = await import('@memberkit/client');
  const { resolvePath } = await config();
  const f = loaded.config.federation;
  const baseUrl = o.cn ?? f?.cnBaseUrl;
  if (!baseUrl) throw new Error('name the Coordinating Node with --cn URL (or federation.cnBaseUrl in the configuration)');
  const tokenFile = o.tokenFile ?? (f?.credentials.tokenFile ? resolvePath(loaded, f.credentials.tokenFile) : undefined);
  const token = o.token ?? (tokenFile ? readFileSync(tokenFile, 'utf8').trim() : undefined);
  const certPath = o.cert ?? (f?.credentials.certificate ? resolvePath(loaded, f.credentials.certificate.cert) : undefined);
  const keyPath = o.key ?? (f?.credentials.certificate ? resolvePath(loaded, f.credentials.certificate.key) : undefined);
  return new CoordinatingNodeClient({
    baseUrl,
    ...(token ? { token } : {}),
    ...(certPath && keyPath ? { certificate: { cert: readFileSync(certPath, 'utf8'), key: readFileSync(keyPath, 'utf8') } } : {}),
    ...(f?.credentials.ca.length ? { ca: f.credentials.ca.map((p) => readFileSync(resolvePath(loaded, p), 'utf8')) } : {}),
  });
}

/** The Node document this configuration serves (as getCapabilities would answer it). */
async function nodeDocument(loaded: LoadedConfig) {
  const { buildNode } = await import('../build-node.js');
  const { silentLogger } = await import('@memberkit/core');
  const built = await buildNode({ ...loaded, config: { ...loaded.config, federation: undefined, wrap: undefined } }, { port: loaded.config.server.port, logger: silentLogger });
  try {
    return built.node.services.capabilities.node();
  } finally {
    await built.close();
  }
}

function withCnOptions(cmd: Command): Command {
  return cmd
    .argument('[dir]', 'data folder', 'data')
    .option('-c, --config <file>', 'configuration file')
    .option('--cn <url>', 'Coordinating Node base URL (default: federation.cnBaseUrl)')
    .option('--token <jwt>', "a JWT naming this node's subject")
    .option('--token-file <file>', 'a file holding that JWT')
    .option('--cert <file>', "this node's client certificate (PEM)")
    .option('--key <file>', 'its private key (PEM)');
}

/** `memberkit register` (CNRegister.register) and `memberkit update-node` (updateNodeCapabilities). */
export function registerFederationCommands(program: Command): void {
  withCnOptions(program.command('register').description("register this node's Node document with a Coordinating Node")).action(async (dir: string, o: CnOptions) => {
    const loaded = await (await config()).loadConfig({ dataDir: dir, ...(o.config ? { configFile: o.config } : {}) });
    // The production CN refuses other identifiers; say so before asking it.
    const { nodeIdentifierProblem } = await import('../config-schema.js');
    const idProblem = nodeIdentifierProblem(loaded.config.node.identifier);
    if (idProblem) throw new ConfigError(`cannot register: ${idProblem} (change it in ${loaded.file})`);
    const client = await cnClient(loaded, o);
    try {
      const node = await nodeDocument(loaded);
      const id = await client.register(node);
      const { createLogger } = await import('@memberkit/core');
      createLogger().info({ node: id, cn: o.cn ?? loaded.config.federation?.cnBaseUrl }, 'node registered');
      console.log(`registered ${id}; a CN administrator approves the registration before the node is harvested`);
    } finally {
      await client.close();
    }
  });

  withCnOptions(program.command('update-node').description("send this node's current Node document to the Coordinating Node (updateNodeCapabilities)")).action(async (dir: string, o: CnOptions) => {
    const loaded = await (await config()).loadConfig({ dataDir: dir, ...(o.config ? { configFile: o.config } : {}) });
    const client = await cnClient(loaded, o);
    try {
      const node = await nodeDocument(loaded);
      await client.updateNodeCapabilities(node.identifier, node);
      console.log(`updated the node document of ${node.identifier}`);
    } finally {
      await client.close();
    }
  });
}
