import { Worker } from 'node:worker_threads';

export interface PingSample {
  /** When the ping was sent (ms since epoch). */
  at: number;
  /** Time to the answer, or to giving up (ms). */
  ms: number;
  /** HTTP status, or 0 when the request failed or timed out. */
  status: number;
}

export interface PingWindow {
  worst: number;
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
    const t0 = performance.now();
    let status = 0;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(workerData.timeoutMs), cache: 'no-store' });
      await res.arrayBuffer();
      status = res.status;
    } catch {}
    const ms = performance.now() - t0;
    parentPort.postMessage({ at, ms, status });
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

  constructor(baseUrl: string, readonly intervalMs = 100, timeoutMs = 30_000) {
    this.worker = new Worker(WORKER, { eval: true, workerData: { url: `${baseUrl}/v2/monitor/ping`, intervalMs, timeoutMs } });
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
    return {
      worst: w.reduce((m, s) => Math.max(m, s.ms), 0),
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
