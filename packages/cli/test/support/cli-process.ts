import { spawn } from 'node:child_process';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..', '..', '..');

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** stderr's non-empty lines. */
  errorLines: string[];
}

/**
 * Run the `memberkit` binary as `npm run memberkit --` does (tsx over the sources), in `cwd`,
 * and wait for it to end (killed after `timeoutMs`).
 */
export function runCli(args: string[], options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {}): Promise<CliRun> {
  const child = spawn(process.execPath, ['--conditions=@memberkit/source', '--import', 'tsx', join(ROOT, 'packages/cli/src/bin.ts'), ...args], {
    cwd: options.cwd ?? ROOT,
    env: { ...process.env, TSX_TSCONFIG_PATH: join(ROOT, 'tsconfig.dev.json'), AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED: 'true', ...options.env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const timer = setTimeout(() => child.kill('SIGKILL'), options.timeoutMs ?? 90_000);
  return new Promise((resolve) => {
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr, errorLines: stderr.split('\n').filter((l) => l.trim() !== '') });
    });
  });
}
