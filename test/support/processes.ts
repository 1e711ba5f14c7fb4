// Commands run the way a user runs them (a shell command line in a folder), for the tests
// that check the README's and the release's commands end to end.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/** The environment of a child process, without the parent vitest's own variables. */
export function childEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('VITEST') && k !== 'NODE_ENV' && k !== 'MEMBERKIT_TEST_REPORT') env[k] = v;
  return { ...env, ...extra };
}

export interface Finished {
  code: number | null;
  output: string;
  ms: number;
}

/** Run `command` (a shell command line) in `cwd` to its end; the output is stdout and stderr. */
export function sh(command: string, cwd: string, env: Record<string, string> = {}, timeoutMs = 150_000): Promise<Finished> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn('sh', ['-c', command], { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => {
      killGroup(child, 'SIGKILL');
      reject(new Error(`${command} (in ${cwd}) timed out after ${timeoutMs} ms:\n${output}`));
    }, timeoutMs);
    child.once('error', reject);
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve({ code, output, ms: Date.now() - started });
    });
  });
}

export interface Server {
  child: ChildProcess;
  port: number;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Start a long-running shell command line and wait for its `memberkit node at
 * http://localhost:PORT/...` line (stdout or stderr).
 */
export function startServer(command: string, cwd: string, env: Record<string, string> = {}, timeoutMs = 60_000): Promise<Server> {
  const child = spawn('sh', ['-c', command], { cwd, env: childEnv(env), stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const stop = (): Promise<void> =>
    new Promise((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      killGroup(child, 'SIGTERM');
      setTimeout(() => killGroup(child, 'SIGKILL'), 10_000).unref();
    });
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer): void => {
      output += d.toString();
      const m = /memberkit node at https?:\/\/localhost:(\d+)/.exec(output);
      if (m) resolve({ child, port: Number(m[1]), output: () => output, stop });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    child.once('exit', (code) => reject(new Error(`${command} exited with ${code}:\n${output}`)));
    setTimeout(() => {
      killGroup(child, 'SIGKILL');
      reject(new Error(`${command} did not print its URL within ${timeoutMs} ms:\n${output}`));
    }, timeoutMs).unref();
  });
}

/** The process group: `sh -c`, npm, and the node process they started. */
function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-child.pid!, signal);
  } catch {
    child.kill(signal);
  }
}

/** Processes whose command line names `dir` (a node serving a data folder, and anything it started). */
export function processesOf(dir: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(dir)) found.push(Number(entry));
    } catch {
      // ended meanwhile
    }
  }
  return found;
}
