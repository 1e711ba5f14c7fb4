import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join, resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Command } from 'commander';
import { CONFIG_FILE_NAME, ConfigError, DEV_SUBJECT } from '../node-files.js';

/**
 * `memberkit federation up DIR`: a whole federation on this machine. DIR holds three node
 * folders, created on the first run and reused afterwards:
 * - `cn`: a Coordinating Node (`memberkit cn init`) that accepts loopback baseURLs;
 * - `mn1`, `mn2`: Member Nodes (`memberkit init`) whose `federation.cnBaseUrl` is that CN, which
 *   trust the tokens it signs (`auth.jwt.jwksUrl`: its published key set) and send it a token
 *   it signed for their node subject (`federation.credentials.tokenFile`, renewed on each run).
 * Each node runs as its own `memberkit serve` process on a loopback port chosen on the first
 * run (kept in its configuration), logging to `memberkit.log` in its folder. The contact
 * subject (the developer) gets a verified account on the CN; each MN registers with
 * `memberkit register` (or `update-node` when it already is), and is approved as an
 * administrator would (`memberkit cn approve-node`). Then the command prints what to try and
 * stays in the foreground: Ctrl-C (SIGINT) or SIGTERM stops all three.
 */

const HOST = '127.0.0.1';
const CN_FOLDER = 'cn';
const MEMBER_NODES = [
  { folder: 'mn1', identifier: 'urn:node:LOCALMN1', name: 'Local Member Node 1' },
  { folder: 'mn2', identifier: 'urn:node:LOCALMN2', name: 'Local Member Node 2' },
] as const;
/** Lifetime of the tokens the MNs present to the CN (renewed by every `federation up`). */
const NODE_TOKEN_TTL_SECONDS = 30 * 86_400;
const NODE_TOKEN_FILE = 'cn-token.jwt';
const LOG_FILE = 'memberkit.log';
const START_TIMEOUT_MS = 90_000;

const nodeSubject = (identifier: string) => `CN=${identifier},DC=dataone,DC=org`;

/** Free loopback ports, distinct (all held open at once while they are chosen). */
async function freePorts(n: number): Promise<number[]> {
  const servers: Server[] = [];
  try {
    for (let i = 0; i < n; i++) {
      const server = createServer();
      await new Promise<void>((res, rej) => {
        server.once('error', rej);
        server.listen(0, HOST, () => res());
      });
      servers.push(server);
    }
    return servers.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise<void>((res) => s.close(() => res()))));
  }
}

/** True when nothing listens on HOST:port. */
function portIsFree(port: number): Promise<boolean> {
  return new Promise((res) => {
    const probe = createServer();
    probe.once('error', () => res(false));
    probe.listen(port, HOST, () => probe.close(() => res(true)));
  });
}

function readJson(file: string): Record<string, any> {
  return JSON.parse(readFileSync(file, 'utf8')) as Record<string, any>;
}

function writeJson(file: string, value: unknown): void {
  writeFileSync(file, JSON.stringify(value, null, 2) + '\n', { mode: 0o600 });
}

/** How this process was started (node, its flags, the CLI script): children run the same CLI. */
function cliInvocation(): { command: string; prefix: string[]; shown: string } {
  const fromSource = process.execArgv.some((a) => a.includes('tsx'));
  return { command: process.execPath, prefix: [...process.execArgv, process.argv[1]!], shown: fromSource ? 'npm run -s memberkit --' : 'memberkit' };
}

interface Started {
  name: string;
  child: ChildProcess;
  url: string;
}

/** `memberkit serve DIR` as a child process, output appended to DIR/memberkit.log; resolves when it answers ping. */
async function startNode(name: string, dir: string, pingUrl: string): Promise<ChildProcess> {
  const cli = cliInvocation();
  const log = openSync(join(dir, LOG_FILE), 'a');
  let child: ChildProcess;
  try {
    child = spawn(cli.command, [...cli.prefix, 'serve', dir], { stdio: ['ignore', log, log], env: process.env });
  } finally {
    closeSync(log);
  }
  const deadline = Date.now() + START_TIMEOUT_MS;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`the ${name} in ${dir} stopped while starting (exit ${child.exitCode ?? child.signalCode}):\n${logTail(dir)}`);
    try {
      const res = await fetch(pingUrl, { signal: AbortSignal.timeout(2000) });
      await res.body?.cancel();
      if (res.status === 200) return child;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`the ${name} in ${dir} did not answer ${pingUrl} within ${START_TIMEOUT_MS / 1000} s:\n${logTail(dir)}`);
    }
    await sleep(200);
  }
}

function logTail(dir: string, lines = 15): string {
  try {
    return readFileSync(join(dir, LOG_FILE), 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** A CLI command of this memberkit to completion (e.g. `register DIR`); its output, or an error carrying it. */
function runCli(args: readonly string[]): Promise<string> {
  const cli = cliInvocation();
  return new Promise((res, rej) => {
    const child = spawn(cli.command, [...cli.prefix, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: process.env });
    let out = '';
    child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    child.once('error', rej);
    child.once('exit', (code) => (code === 0 ? res(out.trim()) : rej(new Error(`memberkit ${args.join(' ')} failed (exit ${code}): ${out.trim()}`))));
  });
}

/** Stop the children: SIGTERM, then SIGKILL after 15 s. */
async function stopAll(started: readonly Started[]): Promise<void> {
  await Promise.all(
    started.map(({ child }) => {
      if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
      return new Promise<void>((res) => {
        const kill = setTimeout(() => child.kill('SIGKILL'), 15_000);
        child.once('exit', () => {
          clearTimeout(kill);
          res();
        });
        child.kill('SIGTERM');
      });
    }),
  );
}

/** The CN folder: created on the first run with a loopback-friendly configuration; its port. */
async function ensureCn(dir: string, port: () => number): Promise<{ port: number; created: boolean }> {
  const file = join(dir, CONFIG_FILE_NAME);
  if (existsSync(file)) return { port: Number(readJson(file).server?.port ?? 8090), created: false };
  const { initCnFolder, CN_SIGNING_KEY_FILE } = await import('@memberkit/cn');
  const p = port();
  initCnFolder(dir, {
    node: { type: 'cn', identifier: 'urn:node:CNLOCAL', name: 'Local Coordinating Node', baseURL: `http://${HOST}:${p}/cn` },
    server: { port: p, host: HOST, basePath: '/cn' },
    // A local federation: its nodes listen on loopback; registrations still wait for approval.
    cn: { registration: { allowLoopback: true, autoApprove: false }, tokens: { signingKey: CN_SIGNING_KEY_FILE } },
  });
  return { port: p, created: true };
}

/** A Member Node folder: created on the first run, then (every run) pointed at the CN and made to trust its keys; its port. */
async function ensureMn(dir: string, mn: (typeof MEMBER_NODES)[number], cnBaseUrl: string, port: () => number): Promise<{ port: number; created: boolean }> {
  const file = join(dir, CONFIG_FILE_NAME);
  let created = false;
  if (!existsSync(file)) {
    const { initNode } = await import('../load-config.js');
    await initNode(dir);
    created = true;
  }
  const config = readJson(file);
  const p = created ? port() : Number(config.server?.port ?? 8080);
  config.node = {
    ...config.node,
    ...(created ? { identifier: mn.identifier, name: mn.name, description: `${mn.name} of a local federation (memberkit federation up)`, subject: nodeSubject(mn.identifier), contactSubject: [DEV_SUBJECT] } : {}),
    baseURL: `http://${HOST}:${p}/mn`,
  };
  config.server = { ...config.server, port: p, host: HOST };
  config.auth = { ...config.auth, jwt: { ...config.auth?.jwt, jwksUrl: `${cnBaseUrl}/v2/tokens/keys` } };
  config.federation = { ...config.federation, cnBaseUrl, credentials: { ...config.federation?.credentials, tokenFile: NODE_TOKEN_FILE } };
  writeJson(file, config);
  return { port: p, created };
}

/** The contact subject's account on the CN, verified (a node's contact subjects must be). */
async function verifiedContact(cnBaseUrl: string, adminToken: string, subject: string): Promise<void> {
  const { CoordinatingNodeClient } = await import('@memberkit/client');
  const { DataONEException } = await import('@memberkit/types');
  const client = new CoordinatingNodeClient({ baseUrl: cnBaseUrl, token: adminToken });
  try {
    try {
      await client.registerAccount({ subject, givenName: ['memberkit'], familyName: 'developer', email: ['developer@example.org'], isMemberOf: [], equivalentIdentity: [] });
    } catch (err) {
      if (!(err instanceof DataONEException && err.name === 'IdentifierNotUnique')) throw err;
    }
    await client.verifyAccount(subject);
  } finally {
    await client.close();
  }
}

/** True when the CN knows the node (registered, approved or not). */
async function isRegistered(cnBaseUrl: string, identifier: string): Promise<boolean> {
  const res = await fetch(`${cnBaseUrl}/v2/node/${encodeURIComponent(identifier)}`);
  await res.body?.cancel();
  if (res.status === 200) return true;
  if (res.status === 404) return false;
  throw new Error(`the CN answered ${res.status} for getNodeCapabilities(${identifier})`);
}

export async function federationUp(dirArg: string): Promise<void> {
  const root = resolve(dirArg);
  const cnDir = join(root, CN_FOLDER);
  const mnDirs = MEMBER_NODES.map((m) => join(root, m.folder));
  // Ports for the folders created now, chosen together so they differ.
  const fresh = await freePorts(1 + MEMBER_NODES.length);
  const take = () => fresh.shift()!;

  const cn = await ensureCn(cnDir, take);
  const cnBaseUrl = `http://${HOST}:${cn.port}/cn`;
  const mns = [];
  for (const [i, m] of MEMBER_NODES.entries()) mns.push({ ...m, dir: mnDirs[i]!, ...(await ensureMn(mnDirs[i]!, m, cnBaseUrl, take)) });
  for (const [dir, port] of [[cnDir, cn.port], ...mns.map((m) => [m.dir, m.port] as const)] as const) {
    if (!(await portIsFree(port))) throw new ConfigError(`port ${port} of the node in ${dir} (server.port) is in use: is \`federation up ${dirArg}\` already running? Stop it, or change server.port there`);
  }

  const { tokenFromFolder, approveNodeInFolder, CN_DEV_ADMIN } = await import('@memberkit/cn');
  const { onStopSignals } = await import('@memberkit/core');
  const started: Started[] = [];
  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    console.error('stopping the federation...');
    await stopAll(started);
    process.exit(code);
  };
  onStopSignals(() => stop(0));

  try {
    started.push({ name: 'CN', child: await startNode('Coordinating Node', cnDir, `${cnBaseUrl}/v2/monitor/ping`), url: cnBaseUrl });
    const adminToken = await tokenFromFolder(cnDir, { subject: CN_DEV_ADMIN, ttlSeconds: 3600 });
    await verifiedContact(cnBaseUrl, adminToken, DEV_SUBJECT);
    for (const m of mns) {
      const identifier = String(readJson(join(m.dir, CONFIG_FILE_NAME)).node?.identifier ?? m.identifier);
      const subject = String(readJson(join(m.dir, CONFIG_FILE_NAME)).node?.subject ?? nodeSubject(identifier));
      writeFileSync(join(m.dir, NODE_TOKEN_FILE), (await tokenFromFolder(cnDir, { subject, ttlSeconds: NODE_TOKEN_TTL_SECONDS })) + '\n', { mode: 0o600 });
      const url = `http://${HOST}:${m.port}/mn`;
      started.push({ name: identifier, child: await startNode(`Member Node ${identifier}`, m.dir, `${url}/v2/monitor/ping`), url });
      // As the node's operator does it: `memberkit register`, or `update-node` when the CN knows it.
      await runCli([(await isRegistered(cnBaseUrl, identifier)) ? 'update-node' : 'register', m.dir]);
      await approveNodeInFolder(cnDir, identifier);
    }
  } catch (err) {
    await stopAll(started);
    throw err;
  }
  for (const s of started) {
    s.child.once('exit', (code, signal) => {
      if (stopping) return;
      console.error(`${s.name} stopped (exit ${code ?? signal}); see its ${LOG_FILE}. Stopping the others.`);
      void stop(1);
    });
  }

  const cli = cliInvocation();
  const shownDir = (d: string) => join(dirArg, d);
  console.log(
    [
      `A local federation in ${root}:`,
      `  CN  urn:node:CNLOCAL  ${cnBaseUrl}   (${shownDir(CN_FOLDER)}, log ${join(shownDir(CN_FOLDER), LOG_FILE)})`,
      ...mns.map((m, i) => `  MN  ${started[i + 1]!.name}  ${started[i + 1]!.url}   (${shownDir(m.folder)}, log ${join(shownDir(m.folder), LOG_FILE)})`),
      '',
      'Try:',
      `  curl -s ${cnBaseUrl}/v2/node                      # the node list: the CN and both Member Nodes`,
      `  export TOKEN=$(${cli.shown} cn token --subject "${DEV_SUBJECT}" ${shownDir(CN_FOLDER)})`,
      `  curl -s -H "Authorization: Bearer $TOKEN" ${cnBaseUrl}/v2/diag/subject   # who the CN says you are`,
      `  export MN=${started[1]!.url}/v2                   # a Member Node trusting the CN's tokens: the README walk-through works with this TOKEN`,
      `  curl -s -H "Authorization: Bearer $TOKEN" -F pid=hello-1 -F object=@hello.csv -F sysmeta=@sysmeta.xml $MN/object`,
      `  ${cli.shown} cn nodes ${shownDir(CN_FOLDER)}                  # registrations, approved or waiting`,
      '',
      'Ctrl-C stops all three.',
    ].join('\n'),
  );
  // The children keep the event loop alive; the signal handlers end the process.
}

export function registerFederationUpCommand(program: Command): void {
  const federation = program.commands.find((c) => c.name() === 'federation') ?? program.command('federation').description('a whole DataONE federation on this machine');
  federation
    .command('up')
    .description('create (first run) and start a Coordinating Node and two Member Nodes on loopback, registered and approved; Ctrl-C stops them')
    .argument('<dir>', 'folder of the federation (cn, mn1, mn2 inside)')
    .action(async (dir: string) => {
      await federationUp(dir);
    });
}
