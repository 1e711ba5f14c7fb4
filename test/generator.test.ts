// The generator end to end (issue #7): `memberkit new adapter` produces a package that
// builds, passes the conformance suites and serves a node; `memberkit new node` produces a
// node folder whose configuration loads, whose start script serves it and whose health
// check answers. Everything is generated into templates/.generated-<random>/ (inside the
// workspace, so the root node_modules resolve every @memberkit package: the "install" of a
// workspace package is npm linking it there; outside the workspace globs, so the root test
// run never collects the generated tests) and removed afterwards, also on failure.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  buildUploadSysmeta, createParts, encodeSysmeta, multipartBody, validateXmlDocuments, describeFailures, type XmlDocument,
} from '@memberkit/testkit';
import { generateTokenKeyPair, mintToken } from '@memberkit/core';
import { runCli } from '../packages/cli/src/cli.js';
import { configSchema } from '../packages/cli/src/config-schema.js';
import { parseConfig } from '../packages/cli/src/load-config.js';
import { CATALOGUE_BACKENDS, STORAGE_BACKENDS } from '../packages/cli/src/backends/index.js';
import { startNodeProcess, testToken, writeConfig } from './support/node-process.js';

const ROOT = join(import.meta.dirname, '..');
const BIN = join(ROOT, 'node_modules', '.bin');
const WORK = join(ROOT, 'templates', `.generated-${randomBytes(4).toString('hex')}`);
const ADAPTER_DIR = join(WORK, 'gen-demo');
const NODE_DIR = join(WORK, 'node-fs');
const TOKEN_KEYS = generateTokenKeyPair();
const TOKEN = await mintToken(TOKEN_KEYS.privateKeyPem, { subject: 'CN=memberkit developer,DC=local' });
const WRITER = 'CN=memberkit developer,DC=local';

const children: ChildProcess[] = [];

/** The environment of a child process, without the parent vitest's own variables. */
function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VITEST') && k !== 'NODE_ENV' && k !== 'MEMBERKIT_TEST_REPORT') env[k] = v;
  return { ...env, ...extra };
}

function run(command: string, args: string[], cwd: string, timeoutMs = 120_000): Promise<{ code: number | null; output: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, env: childEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    children.push(child);
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`${command} ${args.join(' ')} timed out:\n${output}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** Start a long-running command and wait for its `memberkit node at http://localhost:PORT/...` line. */
function startServer(command: string, args: string[], cwd: string, env: Record<string, string>): Promise<{ child: ChildProcess; port: number; output: () => string }> {
  const child = spawn(command, args, { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  children.push(child);
  let output = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /memberkit node at http:\/\/localhost:(\d+)/.exec(output);
      if (m) resolve({ child, port: Number(m[1]), output: () => output });
    };
    // `memberkit serve` prints its banner on stderr; the adapter's dev server on stdout.
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`server exited with ${code}:\n${output}`)));
    setTimeout(() => reject(new Error(`server did not start:\n${output}`)), 30_000).unref();
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) return resolve();
    child.once('exit', () => resolve());
    // The process group: `sh -c` and the node process it started.
    try {
      process.kill(-child.pid!, 'SIGTERM');
    } catch {
      child.kill('SIGTERM');
    }
  });
}

/** Where Node finds `name` from `dir`: the first node_modules/<name> on the way up. */
function resolvesFrom(dir: string, name: string): boolean {
  for (let d = dir; ; d = dirname(d)) {
    if (existsSync(join(d, 'node_modules', ...name.split('/'), 'package.json'))) return true;
    if (dirname(d) === d) return false;
  }
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true }).filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

beforeAll(async () => {
  mkdirSync(WORK, { recursive: true });
  await runCli(['node', 'memberkit', 'new', 'adapter', 'gen-demo', '--dir', ADAPTER_DIR, '--package-name', '@example/memberkit-adapter-gen-demo', '--yes']);
  await runCli(['node', 'memberkit', 'new', 'node', NODE_DIR, '--adapter', 'fs', '--identifier', 'urn:node:GENTEST', '--yes']);
});

afterAll(async () => {
  await Promise.all(children.map(stop));
  rmSync(WORK, { recursive: true, force: true });
});

describe('memberkit new adapter', () => {
  it('writes a renamed package wired to the workspace', () => {
    const pkg = JSON.parse(readFileSync(join(ADAPTER_DIR, 'package.json'), 'utf8')) as { name: string; private?: boolean; dependencies: Record<string, string>; devDependencies: Record<string, string>; scripts: Record<string, string> };
    expect(pkg.name).toBe('@example/memberkit-adapter-gen-demo');
    expect(pkg.private).toBeUndefined();
    expect(readFileSync(join(ADAPTER_DIR, 'tsconfig.json'), 'utf8')).toContain('"../../../tsconfig.base.json"');
    expect(pkg.scripts.serve).toContain('../../../tsconfig.dev.json');
    const index = readFileSync(join(ADAPTER_DIR, 'src', 'index.ts'), 'utf8');
    expect(index).toContain('GenDemoStorageAdapter');
    expect(index).toContain('createGenDemoCatalogue');
    for (const file of filesUnder(ADAPTER_DIR)) {
      const text = readFileSync(file, 'utf8');
      expect(text, `${file} keeps no template names`).not.toMatch(/adapter-template|Template[A-Z]/);
    }
    expect(readFileSync(join(ADAPTER_DIR, 'src', 'storage.ts'), 'utf8')).toContain('YOUR BACKEND:');
    // "install": inside the workspace every dependency resolves through the root node_modules.
    for (const dep of [...Object.keys(pkg.dependencies), ...Object.keys(pkg.devDependencies)]) {
      expect(resolvesFrom(ADAPTER_DIR, dep), `${dep} resolves from the generated package`).toBe(true);
    }
  });

  it('never overwrites: a second run into the same folder fails and changes nothing', async () => {
    const before = readFileSync(join(ADAPTER_DIR, 'src', 'index.ts'), 'utf8');
    await expect(runCli(['node', 'memberkit', 'new', 'adapter', 'gen-demo', '--dir', ADAPTER_DIR, '--yes'])).rejects.toThrow(/not empty/);
    await expect(runCli(['node', 'memberkit', 'new', 'adapter', 'Bad_Name', '--dir', join(WORK, 'bad'), '--yes'])).rejects.toThrow(/not a valid adapter name/);
    expect(existsSync(join(WORK, 'bad'))).toBe(false);
    expect(readFileSync(join(ADAPTER_DIR, 'src', 'index.ts'), 'utf8')).toBe(before);
  });

  it('builds with tsc -b', async () => {
    const { code, output } = await run(join(BIN, 'tsc'), ['-b', join(ADAPTER_DIR, 'tsconfig.json')], ROOT);
    expect(code, output).toBe(0);
    expect(existsSync(join(ADAPTER_DIR, 'dist', 'index.js'))).toBe(true);
    expect(existsSync(join(ADAPTER_DIR, 'dist', 'index.d.ts'))).toBe(true);
  }, 120_000);

  it('passes its tests (the testkit conformance suites) with npm test', async () => {
    const report = join(WORK, 'adapter-report.json');
    const { code, output } = await run(join(BIN, 'vitest'), ['run', '--reporter=json', `--outputFile=${report}`], ADAPTER_DIR);
    expect(code, output).toBe(0);
    const json = JSON.parse(readFileSync(report, 'utf8')) as { numFailedTests: number; numPassedTests: number; testResults: Array<{ name: string }> };
    expect(json.numFailedTests).toBe(0);
    expect(json.numPassedTests).toBeGreaterThanOrEqual(80);
    expect(json.testResults.map((r) => r.name.slice(ADAPTER_DIR.length))).toEqual(expect.arrayContaining(['/test/conformance.test.ts']));
  }, 120_000);

  it('serves a node (npm run serve) that answers getCapabilities and listObjects', async () => {
    const pkg = JSON.parse(readFileSync(join(ADAPTER_DIR, 'package.json'), 'utf8')) as { scripts: { serve: string } };
    const server = await startServer('sh', ['-c', pkg.scripts.serve], ADAPTER_DIR, {
      PORT: '0', HOST: '127.0.0.1', MEMBERKIT_DEV_DIR: join(WORK, 'dev-node'), MEMBERKIT_DEV_PUBLIC_KEY: TOKEN_KEYS.publicKeyPem, LOG_LEVEL: 'warn',
    });
    const base = `http://127.0.0.1:${server.port}/mn/v2`;
    const docs: XmlDocument[] = [];
    try {
      const node = await fetch(`${base}/node`);
      const nodeXml = await node.text();
      expect(node.status, nodeXml).toBe(200);
      expect(nodeXml).toContain('<identifier>urn:node:gen-demo-dev</identifier>');
      expect(nodeXml).toContain('name="MNStorage"');
      docs.push({ label: 'GET /v2/node', xml: nodeXml });

      const empty = await fetch(`${base}/object?count=10`);
      const emptyXml = await empty.text();
      expect(empty.status, emptyXml).toBe(200);
      expect(emptyXml).toMatch(/total="0"/);
      docs.push({ label: 'GET /v2/object (empty)', xml: emptyXml });

      // Write through the adapter, then list it.
      const bytes = 'site,temp\nA,12.5\n';
      const sysmeta = encodeSysmeta(buildUploadSysmeta({ pid: 'gen-demo-1', bytes, rightsHolder: WRITER }));
      const body = multipartBody(createParts('gen-demo-1', bytes, sysmeta));
      const created = await fetch(`${base}/object`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': body.contentType }, body: body.body });
      expect(created.status, await created.clone().text()).toBe(200);
      docs.push({ label: 'POST /v2/object', xml: await created.text() });

      const list = await fetch(`${base}/object?count=10`);
      const listXml = await list.text();
      expect(list.status, listXml).toBe(200);
      expect(listXml).toMatch(/total="1"/);
      expect(listXml).toContain('<identifier>gen-demo-1</identifier>');
      docs.push({ label: 'GET /v2/object', xml: listXml });

      const object = await fetch(`${base}/object/gen-demo-1`);
      expect(await object.text()).toBe(bytes);
    } catch (e) {
      throw new Error(`${(e as Error).message}\nserver output:\n${server.output()}`, { cause: e });
    } finally {
      await stop(server.child);
    }
    const failures = await validateXmlDocuments(docs);
    expect(failures, describeFailures(failures)).toEqual([]);
  }, 60_000);
  it('is served by `memberkit serve` with configuration only: "adapters" names it, storage.type and catalogue.type select it', async () => {
    const dir = join(WORK, 'served-by-config');
    // A path relative to the configuration's folder: the generated package is not installed.
    writeConfig(dir, { adapters: ['../gen-demo'], storage: { type: 'gen-demo', keyPrefix: 'bytes/' }, catalogue: { type: 'gen-demo' } });
    const node = await startNodeProcess(dir);
    try {
      const ping = await fetch(`${node.baseUrl}/v2/monitor/ping`);
      expect(ping.status, await ping.text()).toBe(200);
      const bytes = 'site,temp\nB,7.5\n';
      const sysmeta = encodeSysmeta(buildUploadSysmeta({ pid: 'served-1', bytes, rightsHolder: 'CN=admin' }));
      const body = multipartBody(createParts('served-1', bytes, sysmeta));
      const created = await fetch(`${node.baseUrl}/v2/object`, { method: 'POST', headers: { authorization: `Bearer ${await testToken('CN=admin')}`, 'content-type': body.contentType }, body: body.body });
      expect(created.status, await created.text()).toBe(200);
      const read = await fetch(`${node.baseUrl}/v2/object/served-1`);
      expect(read.status).toBe(200);
      expect(await read.text()).toBe(bytes);
      // The catalogue keeps no event log: the node's embedded one recorded the create.
      expect(existsSync(join(dir, 'memberkit-events.db'))).toBe(true);
    } catch (e) {
      throw new Error(`${(e as Error).message}\nserver output:\n${node.output()}`, { cause: e });
    } finally {
      await node.stop();
    }
  }, 90_000);

  it('a package in "adapters" that cannot be loaded or offers nothing stops the node with one line naming it', async () => {
    const dir = join(WORK, 'bad-adapters');
    writeConfig(dir, { adapters: ['@example/not-installed-adapter'] });
    await expect(runCli(['node', 'memberkit', 'serve', dir])).rejects.toThrow(/adapters\[0\]: cannot load adapter package '@example\/not-installed-adapter': not installed/);
    // A package without descriptors (the CLI's own client package exports none).
    writeConfig(dir, { adapters: ['@memberkit/client'] });
    await expect(runCli(['node', 'memberkit', 'serve', dir])).rejects.toThrow(/adapters\[0\]: cannot load adapter package '@memberkit\/client': it exports no descriptors/);
    // An unknown type lists the types actually available, the loaded package's among them.
    writeConfig(dir, { adapters: ['../gen-demo'], storage: { type: 'gen-dem' } });
    await expect(runCli(['node', 'memberkit', 'serve', dir])).rejects.toThrow(/storage\.type: unknown type 'gen-dem' — did you mean gen-demo\? \(known: filesystem, tree, s3, s3-bucket, gen-demo/);
  }, 60_000);
});

describe('memberkit new node', () => {
  it('writes every deployment file with a configuration that loads', () => {
    for (const file of ['memberkit.config.json', 'CONFIGURATION.md', 'README.md', 'start.sh', 'healthcheck.sh', 'memberkit.service', 'Dockerfile', '.dockerignore']) {
      expect(existsSync(join(NODE_DIR, file)), file).toBe(true);
    }
    expect(existsSync(join(NODE_DIR, 'variants'))).toBe(false);
    const config = parseConfig(JSON.parse(readFileSync(join(NODE_DIR, 'memberkit.config.json'), 'utf8')), 'memberkit.config.json');
    expect(config.node.identifier).toBe('urn:node:GENTEST');
    expect(config.storage.type).toBe('filesystem');
    const service = readFileSync(join(NODE_DIR, 'memberkit.service'), 'utf8');
    expect(service).toMatch(/^Restart=on-failure$/m);
    expect(service).toMatch(/^NoNewPrivileges=yes$/m);
    const dockerfile = readFileSync(join(NODE_DIR, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(/^FROM node:20-slim$/m);
    expect(dockerfile).toMatch(/^USER node$/m);
    expect(dockerfile).toMatch(/^HEALTHCHECK /m);
  });

  it('the s3 and sql configurations are valid memberkit configurations', () => {
    for (const adapter of ['s3', 'sql'] as const) {
      const file = join(ROOT, 'templates', 'node', 'variants', `${adapter}.memberkit.config.json`);
      const raw = JSON.parse(readFileSync(file, 'utf8')) as unknown;
      const section = adapter === 's3' ? 'storage' : 'catalogue';
      const config = configSchema.parse(raw);
      expect(config[section].type).toBe(adapter);
      // Once the CLI offers the backend, its options schema checks the section too.
      const registered = (section === 'storage' ? STORAGE_BACKENDS : CATALOGUE_BACKENDS).some((b) => b.type === adapter);
      if (registered) expect(() => parseConfig(raw, file)).not.toThrow();
    }
  });

  it('CONFIGURATION.md documents every option of config-schema.ts and the built-in backends', () => {
    const doc = readFileSync(join(ROOT, 'templates', 'node', 'CONFIGURATION.md'), 'utf8');
    const missing: string[] = [];
    for (const [section, schema] of Object.entries(configSchema.shape)) {
      for (const key of Object.keys(objectShape(schema))) if (!doc.includes(`\`${section}.${key}\``)) missing.push(`${section}.${key}`);
    }
    const builtIn = ['filesystem', 'tree', 'sqlite'];
    for (const [section, backends] of [['storage', STORAGE_BACKENDS], ['catalogue', CATALOGUE_BACKENDS]] as const) {
      for (const backend of backends) {
        for (const key of Object.keys(objectShape(backend.options))) {
          if (doc.includes(`\`${section}.${key}\``)) continue;
          if (builtIn.includes(backend.type)) missing.push(`${section}.${key} (${backend.type})`);
          else console.warn(`templates/node/CONFIGURATION.md: document ${section}.${key} of the ${backend.type} backend`);
        }
      }
    }
    expect(missing, 'add these to templates/node/CONFIGURATION.md').toEqual([]);
  });

  it('start.sh serves the node and healthcheck.sh sees it', async () => {
    const server = await startServer(join(NODE_DIR, 'start.sh'), ['--port', '0', '--host', '127.0.0.1'], NODE_DIR, { MEMBERKIT_LOG_LEVEL: 'warn' });
    try {
      const node = await fetch(`http://127.0.0.1:${server.port}/mn/v2/node`);
      expect(await node.text()).toContain('<identifier>urn:node:GENTEST</identifier>');
      const list = await fetch(`http://127.0.0.1:${server.port}/mn/v2/object?count=5`);
      expect(list.status).toBe(200);
      const check = await new Promise<number | null>((resolve) => {
        const child = spawn(join(NODE_DIR, 'healthcheck.sh'), [], { env: childEnv({ MEMBERKIT_HEALTH_URL: `http://127.0.0.1:${server.port}/mn/v2/monitor/ping` }), stdio: 'ignore' });
        child.once('exit', resolve);
      });
      expect(check).toBe(0);
      expect(existsSync(join(NODE_DIR, 'data', 'memberkit.db')), 'state lives in data/').toBe(true);
    } catch (e) {
      throw new Error(`${(e as Error).message}\nserver output:\n${server.output()}`, { cause: e });
    } finally {
      await stop(server.child);
    }
  }, 60_000);
});

/** The shape of a zod object schema, through default/prefault/optional wrappers ({} for anything else). */
function objectShape(schema: unknown): Record<string, unknown> {
  let s = schema as { _zod: { def: { type: string; innerType?: unknown; shape?: Record<string, unknown> } } };
  while (['default', 'prefault', 'optional', 'nullable'].includes(s._zod.def.type)) s = s._zod.def.innerType as typeof s;
  return s._zod.def.type === 'object' ? (s._zod.def.shape ?? {}) : {};
}
