import { spawn } from 'node:child_process';
import { Worker } from 'node:worker_threads';

export interface PingSample {
  /** When the ping was sent (ms since epoch). */
  at: number;
  /** Time to the answer, or to giving up (ms). */
  ms: number;
  /** HTTP status, or 0 when the request failed or timed out. */
  status: number;
  /**
   * Latency of a trivial server in another process pinged at the same moment: when it is
   * slow too, the machine (not the node) was busy.
   */
  controlMs?: number;
}

export interface PingWindow {
  worst: number;
  /** The control server's latency during the node's worst ping. */
  controlAtWorst: number | undefined;
  count: number;
  failures: PingSample[];
  slow: PingSample[];
}

// The pinger runs in a worker thread: the test's own event loop is busy generating megabytes
// of XML and driving Chromium, which must not count against the node's latency.
const WORKER = `
const { parentPort, workerData } = require('node:worker_threads');
let url = workerData.url;
let stopped = false;
parentPort.on('message', (m) => {
  if (m.type === 'url') url = m.url;
  if (m.type === 'stop') stopped = true;
});
async function loop() {
  while (!stopped) {
    const at = Date.now();
    const timed = async (u) => {
      const t0 = performance.now();
      let status = 0;
      try {
        const res = await fetch(u, { signal: AbortSignal.timeout(workerData.timeoutMs), cache: 'no-store' });
        await res.arrayBuffer();
        status = res.status;
      } catch {}
      return { ms: performance.now() - t0, status };
    };
    const [node, control] = await Promise.all([timed(url), workerData.controlUrl ? timed(workerData.controlUrl) : undefined]);
    const ms = node.ms;
    parentPort.postMessage({ at, ms, status: node.status, ...(control ? { controlMs: control.ms } : {}) });
    await new Promise((r) => setTimeout(r, Math.max(0, workerData.intervalMs - ms)));
  }
  parentPort.postMessage({ type: 'stopped' });
}
loop();
`;

/**
 * Pings `{baseUrl}/v2/monitor/ping` every `intervalMs` from a worker thread and keeps every
 * sample, so a test can ask for the worst latency since any moment.
 */
export class PingMonitor {
  readonly samples: PingSample[] = [];
  private readonly worker: Worker;
  private paused = false;

  constructor(baseUrl: string, readonly intervalMs = 100, options: { timeoutMs?: number; controlUrl?: string } = {}) {
    this.worker = new Worker(WORKER, { eval: true, workerData: { url: `${baseUrl}/v2/monitor/ping`, intervalMs, timeoutMs: options.timeoutMs ?? 30_000, controlUrl: options.controlUrl } });
    this.worker.on('message', (m: PingSample | { type: string }) => {
      if ('ms' in m && !this.paused) this.samples.push(m);
    });
    this.worker.unref();
  }

  /** Point the monitor at another node (after a restart on a new port). */
  retarget(baseUrl: string): void {
    this.worker.postMessage({ type: 'url', url: `${baseUrl}/v2/monitor/ping` });
  }

  /** Stop recording (a node being stopped on purpose is not a latency). */
  pause(): void {
    this.paused = true;
  }

  resume(): void {
    this.paused = false;
  }

  /** Wait until a ping sent at or after `since` has been answered or given up on. */
  async settle(since: number, timeoutMs = 35_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    while (!this.samples.some((s) => s.at >= since) && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  }

  /** Samples sent at or after `since` (ms since epoch). */
  window(since: number, limitMs = 1000): PingWindow {
    const w = this.samples.filter((s) => s.at >= since);
    const worst = w.reduce<PingSample | undefined>((m, s) => (!m || s.ms > m.ms ? s : m), undefined);
    return {
      worst: worst?.ms ?? 0,
      controlAtWorst: worst?.controlMs,
      count: w.length,
      failures: w.filter((s) => s.status !== 200),
      slow: w.filter((s) => s.ms > limitMs),
    };
  }

  worst(): number {
    return this.samples.reduce((m, s) => Math.max(m, s.ms), 0);
  }

  async stop(): Promise<void> {
    this.worker.postMessage({ type: 'stop' });
    await this.worker.terminate();
  }
}

/**
 * A trivial HTTP server in its own process: the monitor's control. Its latency is what the
 * machine alone costs (CPU starvation by other processes), next to the node's.
 */
export async function startControlServer(): Promise<{ url: string; stop(): void }> {
  const child = spawn(process.execPath, ['-e', "require('http').createServer((q, r) => r.end()).listen(0, '127.0.0.1', function () { console.log(this.address().port) })"], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout!.once('data', (d: Buffer) => resolve(Number(String(d).trim())));
    child.once('exit', (code) => reject(new Error(`control server exited with ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}/`, stop: () => void child.kill() };
}
