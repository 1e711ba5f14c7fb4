import cluster, { type Worker } from 'node:cluster';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { aggregateMetrics, createLogger, onStopSignals, type Logger, type MetricsSnapshot } from '@memberkit/core';
import { isMessage, WORKER_ENV, type PrimaryMessage, type WorkerMessage, type WorkerSettings } from './cluster-messages.js';
import type { LoadedConfig } from './load-config.js';
import { listenError, OperatorError } from './startup-errors.js';

export interface ClusterOptions {
  loaded: LoadedConfig;
  count: number;
  /** Logged once by the primary (not by every worker). */
  warnings?: ReadonlyArray<{ fields: Record<string, unknown>; message: string }>;
  /** What every worker serves (the slot is added per worker). */
  settings: Omit<WorkerSettings, 'slot'>;
  /** Print the start banner (once, when every worker listens): the port served, the metrics port when served. */
  banner(port: number, metricsPort: number | undefined): void;
  /**
   * The port was chosen by the system (port 0): another may be chosen when a process took it
   * before the first worker listened on it.
   */
  choosePort?: () => Promise<number>;
}

/** A worker that dies is started again after this (doubling per death in a row, at most MAX). */
const RESTART_DELAY_MS = 500;
const RESTART_DELAY_MAX_MS = 30_000;
/** A worker that served this long before dying is restarted at once (its death is not a crash loop). */
const STABLE_AFTER_MS = 30_000;
/** Workers still running this long after SIGTERM are killed. */
const STOP_TIMEOUT_MS = 30_000;
const METRICS_TIMEOUT_MS = 5_000;

interface Slot {
  worker?: Worker;
  ready: boolean;
  /** Deaths in a row without serving STABLE_AFTER_MS. */
  deaths: number;
  readyAt: number;
  restart?: NodeJS.Timeout;
}

/** Why a worker did not start, from its report or its exit. */
type StartOutcome = { ok: true } | { ok: false; message: string; portInUse?: true };

/**
 * The primary of `memberkit serve --workers N`: N worker processes behind one port (node:cluster
 * hands each connection to one of them). It starts the first worker alone (it creates the
 * catalogue's tables and indexes and runs the background work), then the others; prints the
 * banner once; restarts a worker that dies with backoff; relays the followers' query-index
 * catch-ups to the first worker; answers /metrics with every worker's metrics aggregated; on
 * SIGINT or SIGTERM stops every worker gracefully and exits 0. A worker that fails at start
 * stops everything: the error is thrown with the worker's one line.
 */
export async function runClusterPrimary(options: ClusterOptions): Promise<void> {
  const { loaded, count } = options;
  const logger = createLogger({ ...(loaded.config.log.level ? { level: loaded.config.log.level } : {}) });
  for (const w of options.warnings ?? []) logger.warn(w.fields, w.message);
  const slots: Slot[] = Array.from({ length: count }, () => ({ ready: false, deaths: 0, readyAt: 0 }));
  const starting = new Map<Worker, (outcome: StartOutcome) => void>();
  let stopping = false;
  /** Set once every worker started: from then on a worker that dies is started again. */
  let supervising = false;
  /** A worker that was ready and died while the others started: the start fails with it. */
  let diedDuringStart: string | undefined;

  // Followers' index catch-ups, relayed to the first worker; re-sent when it is replaced.
  let nextRelay = 0;
  const relays = new Map<number, { from: Worker; id: number; sent: boolean }>();
  const leader = (): Worker | undefined => (slots[0]!.ready ? slots[0]!.worker : undefined);
  const flushRelays = (): void => {
    const to = leader();
    if (!to) return;
    for (const [id, r] of relays) {
      if (r.sent) continue;
      r.sent = true;
      to.send({ mk: 'index-catch-up', id } satisfies PrimaryMessage);
    }
  };

  const metricsAnswers = new Map<number, (snapshot: MetricsSnapshot) => void>();
  let nextMetrics = 0;

  const onMessage = (worker: Worker, slot: number, m: unknown): void => {
    if (!isMessage<WorkerMessage>(m)) return;
    switch (m.mk) {
      case 'ready':
        starting.get(worker)?.({ ok: true });
        return;
      case 'failed':
        starting.get(worker)?.({ ok: false, message: m.message, ...(m.portInUse ? { portInUse: true as const } : {}) });
        return;
      case 'index-catch-up':
        relays.set(nextRelay++, { from: worker, id: m.id, sent: false });
        flushRelays();
        return;
      case 'index-caught-up': {
        if (slot !== 0) return;
        const r = relays.get(m.id);
        if (!r) return;
        relays.delete(m.id);
        if (r.from.isConnected()) r.from.send({ mk: 'index-caught-up', id: r.id, ...(m.error !== undefined ? { error: m.error } : {}) } satisfies PrimaryMessage);
        return;
      }
      case 'metrics':
        metricsAnswers.get(m.id)?.(m.snapshot);
        return;
    }
  };

  /** Fork the worker of `slot`; resolves when it listens or failed to start. */
  const fork = (slot: number): Promise<StartOutcome> => {
    const settings: WorkerSettings = { ...options.settings, slot };
    const worker = cluster.fork({ [WORKER_ENV]: JSON.stringify(settings) });
    const s = slots[slot]!;
    s.worker = worker;
    s.ready = false;
    worker.on('message', (m: unknown) => onMessage(worker, slot, m));
    const outcome = new Promise<StartOutcome>((resolve) => {
      starting.set(worker, (o) => {
        starting.delete(worker);
        if (o.ok) {
          s.ready = true;
          s.readyAt = Date.now();
          if (slot === 0) flushRelays();
        }
        resolve(o);
      });
    });
    worker.once('exit', (code, signal) => {
      starting.get(worker)?.({ ok: false, message: `worker ${slot} exited before it was ready (${signal ?? `code ${code}`})` });
      if (s.worker !== worker) return;
      s.worker = undefined;
      s.ready = false;
      if (slot === 0) for (const r of relays.values()) r.sent = false;
      if (!supervising && !stopping && s.readyAt > 0) diedDuringStart ??= `worker ${slot} exited while the others started (${signal ?? `code ${code}`})`;
      if (stopping || !supervising) return;
      const ranLong = s.readyAt > 0 && Date.now() - s.readyAt >= STABLE_AFTER_MS;
      s.deaths = ranLong ? 0 : s.deaths + 1;
      schedule(slot, { pid: worker.process.pid, code, signal });
    });
    return outcome;
  };

  /** Start `slot` again after its backoff; a failure to start is logged and retried later. */
  const schedule = (slot: number, death: Record<string, unknown>): void => {
    const s = slots[slot]!;
    const delay = s.deaths === 0 ? 0 : Math.min(RESTART_DELAY_MAX_MS, RESTART_DELAY_MS * 2 ** (s.deaths - 1));
    logger.error({ slot, ...death, restartInMs: delay }, `worker ${slot} died; starting it again`);
    s.restart = setTimeout(() => {
      s.restart = undefined;
      if (stopping) return;
      void fork(slot).then((o) => {
        if (o.ok) logger.info({ slot, pid: s.worker?.process.pid }, `worker ${slot} started again`);
        else if (s.worker) {
          // It reported a failure and is exiting: its exit schedules the next attempt.
          logger.error({ slot, reason: o.message }, `worker ${slot} could not start`);
        }
      });
    }, delay);
  };

  const stopAll = async (): Promise<void> => {
    stopping = true;
    for (const s of slots) if (s.restart) clearTimeout(s.restart);
    const alive = slots.map((s) => s.worker).filter((w): w is Worker => w !== undefined && w.process.exitCode === null && w.process.signalCode === null);
    const exits = alive.map((w) => new Promise<void>((resolve) => w.once('exit', () => resolve())));
    for (const w of alive) w.process.kill('SIGTERM');
    const timer = setTimeout(() => {
      logger.warn({}, `workers still running ${STOP_TIMEOUT_MS / 1000} s after SIGTERM: killing them`);
      for (const w of alive) w.process.kill('SIGKILL');
    }, STOP_TIMEOUT_MS).unref();
    await Promise.all(exits);
    clearTimeout(timer);
  };

  const metricsServer = loaded.config.metrics.enabled ? await serveClusterMetrics() : undefined;

  /** /metrics of every running worker, aggregated (answers from workers that do not reply in time are left out). */
  async function scrape(): Promise<{ contentType: string; text: string }> {
    const workers = slots.filter((s) => s.ready && s.worker?.isConnected()).map((s) => s.worker!);
    const snapshots = await Promise.all(
      workers.map(
        (w) =>
          new Promise<MetricsSnapshot | undefined>((resolve) => {
            const id = nextMetrics++;
            const timer = setTimeout(() => {
              metricsAnswers.delete(id);
              resolve(undefined);
            }, METRICS_TIMEOUT_MS);
            metricsAnswers.set(id, (snapshot) => {
              clearTimeout(timer);
              metricsAnswers.delete(id);
              resolve(snapshot);
            });
            w.send({ mk: 'metrics', id } satisfies PrimaryMessage);
          }),
      ),
    );
    return aggregateMetrics(snapshots.filter((s): s is MetricsSnapshot => s !== undefined));
  }

  async function serveClusterMetrics(): Promise<{ server: Server; port: number }> {
    const m = loaded.config.metrics;
    const server = createServer((req, res) => {
      if (req.method !== 'GET' || (req.url ?? '/').split('?')[0] !== '/metrics') {
        res.writeHead(404, { 'content-type': 'text/plain' }).end('metrics are at /metrics\n');
        return;
      }
      scrape().then(
        (r) => res.writeHead(200, { 'content-type': r.contentType }).end(r.text),
        (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics failed: ${(err as Error).message}\n`),
      );
    });
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(m.port, m.host, () => {
          server.off('error', reject);
          resolve();
        });
      });
    } catch (err) {
      throw listenError(err, m.port, m.host, loaded.file, { port: 'metrics.port', portFlag: '', host: 'metrics.host', hostFlag: '' }) ?? err;
    }
    return { server, port: (server.address() as AddressInfo).port };
  }

  const fail = async (message: string): Promise<never> => {
    // A signal is stopping everything already (a worker it stopped is no failure): shutdown exits.
    if (stopping) return new Promise<never>(() => undefined);
    await stopAll();
    metricsServer?.server.close();
    throw new OperatorError(message);
  };

  // Stopping is possible from the first fork on (a signal while the workers start included).
  const shutdown = async (signal: string): Promise<void> => {
    if (stopping) return;
    logger.info({ signal }, 'shutting down every worker');
    await stopAll();
    metricsServer?.server.close();
    process.exit(0);
  };
  onStopSignals(shutdown);

  // The first worker alone: it creates or migrates the catalogue's tables and the query index
  // (SQLite's switch to WAL wants no company), then the others start together.
  let first = await fork(0);
  // A port chosen for us and taken by another process before the first worker listened: another.
  for (let retry = 0; !first.ok && first.portInUse && options.choosePort && retry < 3; retry++) {
    options.settings.port = await options.choosePort();
    first = await fork(0);
  }
  if (!first.ok) await fail(first.message);
  const rest = await Promise.all(slots.slice(1).map((_, i) => fork(i + 1)));
  const failed = rest.find((o): o is { ok: false; message: string } => !o.ok);
  if (failed) await fail(failed.message);
  if (diedDuringStart) await fail(diedDuringStart);

  supervising = true;
  options.banner(options.settings.port, metricsServer?.port);
  logger.info({ workers: slots.map((s, slot) => ({ slot, pid: s.worker?.process.pid })) }, `serving with ${count} worker processes`);
}
