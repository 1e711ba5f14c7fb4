import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generateTokenKeyPair, mintToken } from '@memberkit/core';

const ROOT = join(import.meta.dirname, '..', '..');

export interface NodeProcess {
  child: ChildProcess;
  baseUrl: string;
  port: number;
  /** Everything the process wrote to stdout and stderr so far. */
  output(): string;
  /** Peak and current RSS of the server process, read from /proc (bytes). */
  rss(): { current: number; peak: number };
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** The key nodes configured by writeConfig trust for bearer JWTs (generated per test run). */
const TEST_KEYS = generateTokenKeyPair();
export const TEST_PUBLIC_KEY_FILE = 'test-jwt-key.pub.pem';

/** A bearer JWT for `subject` that nodes configured by writeConfig accept. */
export function testToken(subject: string, ttlSeconds = 24 * 3600): Promise<string> {
  return mintToken(TEST_KEYS.privateKeyPem, { subject, ttlSeconds });
}

/** Write a memberkit.config.json into `dir` (merged over a managed-node default that trusts testToken's tokens; CN=admin administers). */
export function writeConfig(dir: string, overrides: Record<string, unknown> = {}): void {
  mkdirSync(dir, { recursive: true });
  const config = {
    node: { identifier: 'urn:node:TEST' },
    server: { port: 0, basePath: '/mn', host: '127.0.0.1' },
    access: { administrators: ['CN=admin'] },
    auth: { jwt: { keys: [TEST_PUBLIC_KEY_FILE] } },
    log: { level: 'warn' },
    // Optional APIs off unless a test or benchmark asks: the query index's catch-up would
    // compete with what is being measured.
    extensions: { views: false, packages: false, query: { enabled: false } },
    ...overrides,
  };
  writeFileSync(join(dir, TEST_PUBLIC_KEY_FILE), TEST_KEYS.publicKeyPem);
  writeFileSync(join(dir, 'memberkit.config.json'), JSON.stringify(config, null, 2));
}

export interface StartOptions {
  /**
   * `--workers`: processes behind the port (`memberkit serve --workers N`; the child is then the
   * cluster's primary). Default 1, one process, whatever `server.workers` says; a checkout
   * without the option (an older --compare ref) is started without it.
   */
  workers?: number | 'auto';
}

/** Whether the CLI of `root` has `serve --workers`. */
function knowsWorkers(root: string): boolean {
  try {
    return readFileSync(join(root, 'packages/cli/src/cli.ts'), 'utf8').includes("'--workers <n>'");
  } catch {
    return false;
  }
}

/**
 * Start `memberkit serve dir` in a separate process, the way `npm start` does, and wait
 * until it prints its URL. `root`: the checkout whose CLI runs (another commit's worktree for
 * the benchmark's --compare; default this one).
 */
export async function startNodeProcess(dir: string, extraArgs: string[] = [], root = ROOT, options: StartOptions = {}): Promise<NodeProcess> {
  const workers = options.workers !== undefined || knowsWorkers(root) ? ['--workers', String(options.workers ?? 1)] : [];
  const child = spawn(
    process.execPath,
    [...(process.env.MEMBERKIT_NODE_FLAGS?.split(' ').filter(Boolean) ?? []), '--conditions=@memberkit/source', '--import', 'tsx', join(root, 'packages/cli/src/bin.ts'), 'serve', dir, '--port', '0', '--host', '127.0.0.1', ...workers, ...extraArgs],
    { cwd: root, env: { ...process.env, TSX_TSCONFIG_PATH: join(root, 'tsconfig.dev.json') }, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => {
      // Not left running behind a failed start.
      child.kill('SIGKILL');
      reject(new Error(`node did not start: ${output}`));
      // Workers start one after the other (the first alone).
    }, options.workers === undefined || options.workers === 1 ? 30_000 : 90_000).unref();
    const onData = (d: Buffer) => {
      output += d.toString();
      const m = /memberkit node at http:\/\/localhost:(\d+)/.exec(output);
      if (m) {
        clearTimeout(timer);
        resolve(Number(m[1]));
      }
    };
    // The banner is on stderr (stdout carries the JSON log lines).
    child.stdout!.on('data', onData);
    child.stderr!.on('data', onData);
    child.once('exit', (code) => reject(new Error(`node exited with ${code}: ${output}`)));
  });
  const readStatus = (field: string): number => {
    try {
      const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
      return m ? Number(m[1]) * 1024 : 0;
    } catch {
      return 0;
    }
  };
  return {
    child,
    port,
    baseUrl: `http://127.0.0.1:${port}/mn`,
    output: () => output,
    rss: () => ({ current: readStatus('VmRSS'), peak: readStatus('VmHWM') }),
    stop: (signal = 'SIGTERM') =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill(signal);
      }),
  };
}
