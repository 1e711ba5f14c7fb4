// An operator's first mistakes, made the way an operator makes them: the `memberkit` process,
// started on a configuration with the mistake. Each must end the process (non-zero exit) with
// one line on stderr that names the cause and the setting to change; no stack trace.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { startS3rver, type S3rverProcess } from '../../../adapters/s3/test/support/s3rver.js';
import { startNodeProcess, writeConfig } from '../../../test/support/node-process.js';
import { NODE_IDENTIFIER_RULE, configSchema } from '../src/config-schema.js';
import { ROOT, runCli, type CliRun } from './support/cli-process.js';

// Each case is a process start (about a second of CPU under tsx); the cases are independent
// are kept few.
vi.setConfig({ testTimeout: 120_000 });

let work: string;
beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'memberkit-operator-'));
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

/** A node folder holding `config` (raw text or an object). */
function nodeDir(name: string, config: string | object): string {
  const dir = join(work, name);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'memberkit.config.json'), typeof config === 'string' ? config : JSON.stringify(config, null, 2));
  return dir;
}

/** The run failed with exactly one line on stderr, which matches every pattern. */
function expectOneLine(run: CliRun, ...patterns: RegExp[]): void {
  expect(run.code, run.stderr).not.toBe(0);
  expect(run.errorLines, run.stderr).toHaveLength(1);
  for (const p of patterns) expect(run.errorLines[0]).toMatch(p);
  expect(run.stderr).not.toMatch(/^\s+at /m);
}

const noExtensions = { extensions: { views: false, packages: false, query: { enabled: false } } };

describe('configuration mistakes', () => {
  it('an unknown key names its path and the nearest valid key, one line per key', async () => {
    const dir = nodeDir('typo', { acess: { administrators: ['CN=me'] } });
    expectOneLine(await runCli(['serve', dir]), /unknown key acess — did you mean access\?/, /memberkit\.config\.json/);
    const nested = nodeDir('typo2', { acess: {}, storage: { type: 'tree', root: '.' }, wrap: { rightsHolder: 'CN=me', rescanIntervalSecond: 60 } });
    const run = await runCli(['scan', nested]);
    expect(run.code).not.toBe(0);
    expect(run.errorLines).toEqual([
      expect.stringContaining('unknown key wrap.rescanIntervalSecond — did you mean wrap.rescanIntervalSeconds?'),
      expect.stringContaining('unknown key acess — did you mean access?'),
    ]);
  });

  it("an unknown key of a backend's options is named with its section", async () => {
    const dir = nodeDir('typo3', { storage: { type: 'tree', root: '.', includehidden: true }, wrap: { rightsHolder: 'CN=me' } });
    expectOneLine(await runCli(['serve', dir]), /unknown key storage\.includehidden — did you mean storage\.includeHidden\?/);
  });

  it('invalid JSON gives the line and column', async () => {
    const dir = nodeDir('json', '{\n  "node": {\n    "identifier": "urn:node:X",\n  }\n}\n');
    expectOneLine(await runCli(['serve', dir]), /invalid JSON in .*memberkit\.config\.json: line 4, column 3/);
  });

  it('serve and scan of a folder that does not exist fail and create nothing', async () => {
    const missing = join(work, 'mistyped');
    const empty = join(work, 'empty');
    mkdirSync(empty);
    const [serve, scan, serveEmpty] = await Promise.all([runCli(['serve', missing]), runCli(['scan', missing]), runCli(['serve', empty])]);
    expectOneLine(serve, /folder .*mistyped does not exist/, /memberkit init/);
    expectOneLine(scan, /folder .*mistyped does not exist/);
    expect(existsSync(missing)).toBe(false);
    expectOneLine(serveEmpty, /no memberkit\.config\.json in .*empty/);
  });

  it('init creates a node once; serve --init creates one when missing', async () => {
    const dir = join(work, 'fresh');
    const [first, node] = await Promise.all([runCli(['init', dir]), startNodeProcess(join(work, 'fresh-serve'), ['--init'])]);
    expect(first.code, first.stderr).toBe(0);
    const config = JSON.parse(readFileSync(join(dir, 'memberkit.config.json'), 'utf8')) as { node: { identifier: string } };
    expect(config.node.identifier).toMatch(NODE_IDENTIFIER_RULE);
    try {
      expectOneLine(await runCli(['init', dir]), /already exists/);
      expect(node.output()).toContain('wrote a first-run configuration');
    } finally {
      await node.stop();
    }
  });
});

it('`npm start` (serve with no folder named) creates ./data on first run and serves it', async () => {
  const cwd = join(work, 'fresh-clone');
  mkdirSync(cwd);
  // Run from a folder outside the checkout, so tsx is named by its path.
  const child = spawn(process.execPath, ['--conditions=@memberkit/source', '--import', join(ROOT, 'node_modules/tsx/dist/loader.mjs'), join(ROOT, 'packages/cli/src/bin.ts'), 'serve', '--port', '0', '--host', '127.0.0.1'], {
    cwd,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.dev.json') },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  try {
    const port = await new Promise<number>((resolve, reject) => {
      const onData = (d: Buffer) => {
        output += d.toString();
        const m = /memberkit node at http:\/\/localhost:(\d+)/.exec(output);
        if (m) resolve(Number(m[1]));
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('exit', (code) => reject(new Error(`exited with ${code}: ${output}`)));
    });
    expect(existsSync(join(cwd, 'data', 'memberkit.config.json'))).toBe(true);
    expect((await fetch(`http://127.0.0.1:${port}/mn/v2/monitor/ping`)).status).toBe(200);
  } finally {
    child.kill();
  }
});

describe('what the configuration points at', () => {
  it('a database that refuses the role: the driver says why, catalogue.connection is named', async () => {
    const dir = nodeDir('pg', { ...noExtensions, catalogue: { type: 'sql', dialect: 'postgres', connection: 'postgres://nosuchrole@127.0.0.1:5432/test' } });
    expectOneLine(await runCli(['serve', dir, '--port', '0']), /role "nosuchrole" does not exist/, /catalogue\.connection/);
  });

  describe('S3', () => {
    let s3: S3rverProcess;
    beforeAll(async () => {
      s3 = await startS3rver(['bucket']);
    });
    afterAll(() => s3?.stop());

    it('a bucket that does not exist names storage.bucket', async () => {
      const dir = nodeDir('s3-nobucket', { ...noExtensions, storage: { type: 's3', bucket: 'no-such-bucket', ...s3.connection } });
      expectOneLine(await runCli(['serve', dir, '--port', '0']), /no-such-bucket does not exist/, /storage\.bucket/);
    });

    it('an endpoint nobody answers names storage.endpoint', async () => {
      const port = await closedPort();
      const dir = nodeDir('s3-noendpoint', { ...noExtensions, storage: { type: 's3', bucket: 'bucket', ...s3.connection, endpoint: `http://127.0.0.1:${port}` } });
      expectOneLine(await runCli(['serve', dir, '--port', '0']), /ECONNREFUSED/, /storage\.endpoint/);
    });
  });

  it('a port in use names server.port and --port', async () => {
    const blocker = await listen();
    try {
      const port = (blocker.address() as { port: number }).port;
      const dir = nodeDir('port', { ...noExtensions, server: { host: '127.0.0.1', port } });
      expectOneLine(await runCli(['serve', dir]), new RegExp(`port ${port} is already in use`), /server\.port/, /--port/);
    } finally {
      blocker.close();
    }
  });
});

describe('--port and the derived baseURL', () => {
  it('--port N publishes http://localhost:N/mn; port 0 publishes the port actually chosen', async () => {
    const port = await closedPort();
    await Promise.all([['--port', String(port)], []].map(async (extra) => {
      const dir = join(work, `baseurl-${extra.length}`);
      writeConfig(dir, { server: { port: 8080, basePath: '/mn', host: '127.0.0.1' } });
      const node = await startNodeProcess(dir, extra);
      try {
        if (extra.length) expect(node.port).toBe(port);
        const doc = await (await fetch(`${node.baseUrl}/v2/node`)).text();
        expect(doc).toContain(`<baseURL>http://localhost:${node.port}/mn</baseURL>`);
      } finally {
        await node.stop();
      }
    }));
  });
});

describe('node identifier (the production CN accepts ^urn:node:\\w{2,16}$)', () => {
  it('the default is valid', () => {
    const config = configSchema.parse({});
    expect(config.node.identifier).toMatch(NODE_IDENTIFIER_RULE);
    expect(config.node.subject).toContain(config.node.identifier);
  });

  it('serve warns about an invalid one; register refuses it before calling the CN', async () => {
    const dir = join(work, 'badid');
    writeConfig(dir, { node: { identifier: 'urn:node:memberkit-local' } });
    const [node, register] = await Promise.all([startNodeProcess(dir), runCli(['register', dir, '--cn', `http://127.0.0.1:${await closedPort()}/cn`])]);
    try {
      // The log line (stdout) may arrive after the banner (stderr).
      let warning: string | undefined;
      for (let i = 0; i < 100 && !warning; i++) {
        warning = node.output().split('\n').find((l) => l.includes('does not match'));
        if (!warning) await new Promise((r) => setTimeout(r, 100));
      }
      expect(warning, node.output()).toBeDefined();
      expect(JSON.parse(warning!)).toMatchObject({ level: 40, identifier: 'urn:node:memberkit-local' });
    } finally {
      await node.stop();
    }
    expectOneLine(register, /cannot register: node\.identifier "urn:node:memberkit-local" does not match/);
  });
});

describe('the binary', () => {
  it('--version prints the package version', async () => {
    const run = await runCli(['--version']);
    expect(run.code).toBe(0);
    const { version } = JSON.parse(readFileSync(join(import.meta.dirname, '..', 'package.json'), 'utf8')) as { version: string };
    expect(run.stdout.trim()).toBe(version);
  });
});

function listen(): Promise<Server> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => resolve(server));
  });
}

/** A port nothing listens on (it was free a moment ago). */
async function closedPort(): Promise<number> {
  const server = await listen();
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}
