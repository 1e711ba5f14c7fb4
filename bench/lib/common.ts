// Shared pieces of the benchmark runner: result rows, options, child processes.
import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

export const ROOT = join(import.meta.dirname, '..', '..');
export const MiB = 1024 * 1024;

/**
 * Who is measured: this checkout's memberkit, the memberkit of the `--compare` ref (built in a
 * temporary worktree) and the bare baseline. Every measure runs for each of them in every round.
 */
export type Subject = 'memberkit' | 'ref' | 'baseline';

/** Median and range of per-round ratios. */
export interface Spread {
  median: number;
  min: number;
  max: number;
}

/** One metric of a scenario: medians of interleaved samples and the ratios between them. */
export interface ResultRow {
  scenario: string;
  metric: string;
  unit: string;
  /** Storage backend of the node under test, e.g. 'files+sqlite'. */
  backend: string;
  /** Median of memberkit's samples (this checkout). */
  memberkit: number | null;
  /** Median of the baseline's samples. */
  baseline: number | null;
  /** What the baseline is (bare Hono route, bare node:http pipe, sha1sum, ...). */
  baselineName: string;
  /**
   * memberkit's speed relative to the baseline, the median of the per-round ratios: 1.0 = as
   * fast, below 1 = slower. For throughputs memberkit/baseline, for durations and latencies
   * baseline/memberkit. null when a sample was zero.
   */
  ratio: number | null;
  /** Smallest and largest per-round ratio. */
  ratioMin: number | null;
  ratioMax: number | null;
  /** Half the ratio's min–max range relative to its median: the row's noise (0.05 = ±5 %). */
  noise: number | null;
  higherIsBetter: boolean;
  note?: string;
  /** With --compare: the ref's median, its ratios to the baseline and the change from ref to memberkit. */
  ref?: {
    value: number | null;
    ratio: Spread | null;
    noise: number | null;
    /** memberkit vs ref in percent (+ = this checkout faster), per-round median and range. */
    change: Spread | null;
    /** Set when the change is larger than the noise of both rows (memberkit's and the ref's). */
    flag: 'faster' | 'slower' | null;
  };
  /** Every sample, one per round, in round order (the order within a round is in the result's `rounds`). */
  samples: Partial<Record<Subject, number[]>>;
}

export interface BenchOptions {
  quick: boolean;
  /** Seconds per load run. */
  duration: number;
  /** Rounds: every subject measures every measure this many times, interleaved. */
  repeat: number;
  /** Bytes of the large object (upload and download). */
  largeBytes: number;
  /** Objects in the listing catalogue (and events in the log). */
  listObjects: number;
  /** Files in the wrapped tree. */
  wrapFiles: number;
  backend: string;
}

export function round(n: number): number {
  if (Math.abs(n) >= 100) return Math.round(n * 10) / 10;
  return Math.round(n * 1000) / 1000;
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Node arguments that run a TypeScript file of this checkout (the way `npm start` does). */
export function tsNodeArgs(file: string): string[] {
  return ['--conditions=@memberkit/source', '--import', 'tsx', file];
}

/** The environment tsx needs to run the TypeScript sources of the checkout at `root`. */
export function tsEnv(root = ROOT): NodeJS.ProcessEnv {
  return { ...process.env, TSX_TSCONFIG_PATH: join(root, 'tsconfig.dev.json') };
}

/** A baseline server in its own process; it prints `LISTENING <port>` when ready. */
export interface ServerProcess {
  child: ChildProcess;
  port: number;
  rss(): { current: number; peak: number };
  stop(): Promise<void>;
}

export async function startServerProcess(script: string, args: string[]): Promise<ServerProcess> {
  const child = spawn(process.execPath, [...tsNodeArgs(join(ROOT, 'bench', script)), ...args], { cwd: ROOT, env: tsEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.on('data', (d: Buffer) => {
      output += d.toString();
      const m = /LISTENING (\d+)/.exec(output);
      if (m) resolve(Number(m[1]));
    });
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    child.once('exit', (code) => reject(new Error(`${script} exited with ${code}: ${output}`)));
    setTimeout(() => reject(new Error(`${script} did not start: ${output}`)), 30_000).unref();
  });
  return {
    child,
    port,
    rss: () => procRss(child.pid),
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null || child.signalCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.kill('SIGTERM');
      }),
  };
}

/** Clock ticks per second of /proc's CPU times (USER_HZ: 100 on every Linux build). */
const TICKS_PER_SECOND = 100;

/** A /proc/<pid>/stat line's parent, name and CPU ticks: its own, and its reaped children's. */
function procStat(stat: string): { ppid: number; comm: string; own: number; reaped: number } {
  const close = stat.lastIndexOf(')');
  // fields after the name: state ppid ... utime stime cutime cstime (14th to 17th of the
  // line); the last two hold the children it has reaped, whose own entries are gone
  const f = stat.slice(close + 2).split(' ');
  return { ppid: Number(f[1]), comm: stat.slice(stat.indexOf('(') + 1, close), own: Number(f[11]) + Number(f[12]), reaped: Number(f[13]) + Number(f[14]) };
}

/**
 * CPU time (user + system, ms) of this process's children that have ended and been waited
 * for: the difference around a synchronous child run (execFileSync) is that run's whole
 * process tree (a shell, xargs and what it starts), whatever else shared the cores.
 */
export function reapedChildrenCpuMs(): number {
  return (procStat(readFileSync('/proc/self/stat', 'utf8')).reaped * 1000) / TICKS_PER_SECOND;
}

/**
 * CPU time (user + system, ms) used so far by `pids` with all their living descendants (a
 * node's cluster workers, its helper processes), plus every process named one of `names` (a
 * database server's backends), with the children each of them has reaped (a process that
 * ended between two readings still counts). Read from /proc; 0 where there is none. A
 * difference of two readings around a load run is the work the servers did for it, whatever
 * else shared the cores.
 */
export function cpuMs(pids: ReadonlyArray<number | undefined>, names: readonly string[] = []): number {
  const procs = new Map<number, { ppid: number; comm: string; ticks: number }>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const p = procStat(readFileSync(`/proc/${entry}/stat`, 'utf8'));
      procs.set(Number(entry), { ppid: p.ppid, comm: p.comm, ticks: p.own + p.reaped });
    } catch {
      // the process ended meanwhile
    }
  }
  const children = new Map<number, number[]>();
  for (const [pid, p] of procs) children.set(p.ppid, [...(children.get(p.ppid) ?? []), pid]);
  const chosen = new Set<number>();
  const pending = pids.filter((pid): pid is number => pid !== undefined && procs.has(pid));
  for (let pid = pending.pop(); pid !== undefined; pid = pending.pop()) {
    chosen.add(pid);
    pending.push(...(children.get(pid) ?? []));
  }
  for (const [pid, p] of procs) if (names.includes(p.comm)) chosen.add(pid);
  let ticks = 0;
  for (const pid of chosen) ticks += procs.get(pid)!.ticks;
  return (ticks * 1000) / TICKS_PER_SECOND;
}

export function procRss(pid: number | undefined): { current: number; peak: number } {
  const read = (field: string): number => {
    try {
      const status = readFileSync(`/proc/${pid}/status`, 'utf8');
      const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(status);
      return m ? Number(m[1]) * 1024 : 0;
    } catch {
      return 0;
    }
  };
  return { current: read('VmRSS'), peak: read('VmHWM') };
}

/**
 * Runs the load generator (bench/load-worker.ts) in its own process with one job and
 * returns what it printed as JSON on its last stdout line.
 */
export function runLoad<T>(job: Record<string, unknown>): Promise<T> {
  return runJsonScript<T>(ROOT, join(ROOT, 'bench', 'load-worker.ts'), [JSON.stringify(job)], `load worker (${String(job.kind)})`);
}

/** Runs a TypeScript file with tsx in the checkout at `root` (cwd and tsconfig there); returns its last stdout line as JSON. */
export async function runJsonScript<T>(root: string, file: string, args: string[], label: string): Promise<T> {
  const child = spawn(process.execPath, [...tsNodeArgs(file), ...args], { cwd: root, env: tsEnv(root), stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (err += d.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`${label} failed with ${code}: ${err}${out}`);
  const last = out.trim().split('\n').pop() ?? '';
  return JSON.parse(last) as T;
}

export interface AutocannonSummary {
  rps: number;
  p50: number;
  p99: number;
  requests: number;
  non2xx: number;
  errors: number;
  timeouts: number;
}

export function log(message: string): void {
  process.stderr.write(`[bench] ${message}\n`);
}
