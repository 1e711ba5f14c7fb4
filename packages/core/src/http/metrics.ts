import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { AggregatorRegistry, collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { JobStore, CatalogueAdapter } from '@memberkit/types';
import type { RequestRecord } from './request-log.js';

/**
 * Prometheus metrics of one node: requests by DataONE operation and status, latency, bytes in
 * and out (fed by the request log), catalogue size and job queue state (read at scrape time),
 * and the wrap scanner's state (fed by whoever runs scans). Served on a port of its own, so the
 * public API never exposes them: `serveMetrics`.
 */
export interface NodeMetrics {
  registry: Registry;
  /** Give it every finished request (observeRequests(node.app, metrics.request)). */
  request(record: RequestRecord): void;
  scan: {
    started(): void;
    progress(counts: ScanCounts): void;
    finished(counts: ScanCounts & { durationMs: number }): void;
    failed(): void;
  };
}

export interface ScanCounts {
  added: number;
  changed: number;
  removed: number;
  unchanged: number;
  skipped: number;
}

/** Latency buckets (seconds): pings and metadata in milliseconds, large objects in tens of seconds. */
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 120];
const JOB_STATES = ['queued', 'running', 'failed'] as const;

export function createNodeMetrics(options: { metadata: CatalogueAdapter; jobs?: JobStore; defaultMetrics?: boolean }): NodeMetrics {
  const registry = new Registry();
  if (options.defaultMetrics !== false) collectDefaultMetrics({ register: registry });
  const labelNames = ['operation', 'status'] as const;
  const requests = new Counter({ name: 'memberkit_http_requests_total', help: 'HTTP requests answered, by DataONE operation and status', labelNames, registers: [registry] });
  const duration = new Histogram({ name: 'memberkit_http_request_duration_seconds', help: 'Time from request to last response byte, by DataONE operation', labelNames: ['operation'], buckets: LATENCY_BUCKETS, registers: [registry] });
  const bytesIn = new Counter({ name: 'memberkit_http_request_bytes_total', help: 'Request body bytes received (Content-Length), by DataONE operation', labelNames: ['operation'], registers: [registry] });
  const bytesOut = new Counter({ name: 'memberkit_http_response_bytes_total', help: 'Response body bytes sent, by DataONE operation', labelNames: ['operation'], registers: [registry] });
  new Gauge({
    name: 'memberkit_catalogue_objects',
    help: 'Objects in the catalogue (read at scrape time)',
    registers: [registry],
    // Every worker of one node reads the same shared catalogue: one answer, not their sum.
    aggregator: 'first',
    async collect() {
      this.set((await options.metadata.list({ start: 0, count: 0 })).total);
    },
  });
  if (options.jobs) {
    const jobs = options.jobs;
    new Gauge({
      name: 'memberkit_jobs',
      help: 'Durable jobs (replication...) by state (read at scrape time)',
      labelNames: ['state'],
      registers: [registry],
      aggregator: 'first',
      async collect() {
        for (const state of JOB_STATES) this.set({ state }, (await jobs.list({ state })).length);
      },
    });
  }
  const scanRunning = new Gauge({ name: 'memberkit_scan_running', help: '1 while a wrap scan runs', registers: [registry] });
  const scanFiles = new Gauge({ name: 'memberkit_scan_files', help: 'Files of the running or last wrap scan, by result', labelNames: ['result'], registers: [registry] });
  const scans = new Counter({ name: 'memberkit_scans_total', help: 'Wrap scans ended, by outcome', labelNames: ['outcome'], registers: [registry] });
  const scanDuration = new Gauge({ name: 'memberkit_scan_last_duration_seconds', help: 'Duration of the last completed wrap scan', registers: [registry] });
  const setCounts = (c: ScanCounts) => {
    for (const result of ['added', 'changed', 'removed', 'unchanged', 'skipped'] as const) scanFiles.set({ result }, c[result]);
  };
  return {
    registry,
    request(r) {
      const operation = r.op ?? 'none';
      requests.inc({ operation, status: String(r.status) });
      duration.observe({ operation }, r.durationMs / 1000);
      if (r.bytesIn) bytesIn.inc({ operation }, r.bytesIn);
      if (r.bytesOut) bytesOut.inc({ operation }, r.bytesOut);
    },
    scan: {
      started: () => scanRunning.set(1),
      progress: setCounts,
      finished(c) {
        setCounts(c);
        scanRunning.set(0);
        scanDuration.set(c.durationMs / 1000);
        scans.inc({ outcome: 'ok' });
      },
      failed() {
        scanRunning.set(0);
        scans.inc({ outcome: 'failed' });
      },
    },
  };
}

/** What one process's metrics hold at a scrape (`registry.getMetricsAsJSON()`), as sent between processes. */
export type MetricsSnapshot = Awaited<ReturnType<Registry['getMetricsAsJSON']>>;

/**
 * One scrape of several processes serving one node (`memberkit serve --workers`): counters,
 * histograms and process figures summed over the workers' snapshots; what each reads from the
 * shared catalogue (objects, jobs) taken once.
 */
export async function aggregateMetrics(snapshots: MetricsSnapshot[]): Promise<{ contentType: string; text: string }> {
  const registry = AggregatorRegistry.aggregate(snapshots);
  return { contentType: registry.contentType, text: await registry.metrics() };
}

/** Serve `GET /metrics` (Prometheus text format) on its own port. */
export function serveMetrics(metrics: NodeMetrics, options: { port: number; host: string }): Promise<{ port: number; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '/').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('metrics are at /metrics\n');
      return;
    }
    metrics.registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': metrics.registry.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${(err as Error).message}\n`),
    );
  });
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve({
        port: (server.address() as AddressInfo).port,
        close: () => new Promise<void>((done) => server.close(() => done())),
      });
    });
  });
}
