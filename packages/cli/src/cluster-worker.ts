import { onStopSignals, serveNode, type MetricsSnapshot } from '@memberkit/core';
import { buildNode, tlsOptions, type FollowerRole } from './build-node.js';
import { isMessage, type PrimaryMessage, type WorkerMessage, type WorkerSettings } from './cluster-messages.js';
import { loadConfig } from './load-config.js';
import { listenError } from './startup-errors.js';

/** How long a follower's query waits for the first worker to bring the index up to date (it may be restarting). */
const CATCH_UP_TIMEOUT_MS = 60_000;

function send(message: WorkerMessage): Promise<void> {
  return new Promise((resolve) => {
    if (!process.send || !process.connected) return resolve();
    process.send(message, undefined, {}, () => resolve());
  });
}

/** A follower's way to the first worker's indexer, through the primary. */
function remoteIndexer(): FollowerRole & { answer(id: number, error?: string): void } {
  let next = 0;
  const waiting = new Map<number, { resolve(): void; reject(err: Error): void; timer: NodeJS.Timeout }>();
  return {
    indexCatchUp() {
      const id = next++;
      return new Promise<void>((resolve, reject) => {
        const timer = setTimeout(() => {
          waiting.delete(id);
          reject(new Error(`the query index was not brought up to date within ${CATCH_UP_TIMEOUT_MS / 1000} s (the first worker, which indexes, did not answer)`));
        }, CATCH_UP_TIMEOUT_MS);
        waiting.set(id, { resolve, reject, timer });
        void send({ mk: 'index-catch-up', id });
      });
    },
    answer(id, error) {
      const w = waiting.get(id);
      if (!w) return;
      waiting.delete(id);
      clearTimeout(w.timer);
      if (error === undefined) w.resolve();
      else w.reject(new Error(`query index catch-up failed in the first worker: ${error}`));
    },
  };
}

/**
 * One worker of `memberkit serve --workers N`: builds the node of the folder the primary
 * validated and listens on the port it chose (node:cluster shares it). The first worker (slot
 * 0) runs the background work; the others are followers. A failure to start is reported to
 * the primary as one line (it prints it and exits), never printed here.
 */
export async function runClusterWorker(settings: WorkerSettings): Promise<void> {
  const leader = settings.slot === 0;
  const follower = leader ? undefined : remoteIndexer();
  let built: Awaited<ReturnType<typeof buildNode>> | undefined;
  let portInUse = false;
  try {
    const loaded = await loadConfig({ dataDir: settings.dir, ...(settings.configFile ? { configFile: settings.configFile } : {}) });
    if (settings.baseUrl) loaded.config.node.baseURL = settings.baseUrl;
    built = await buildNode(loaded, { port: settings.port, ...(follower ? { follower } : {}) });
    const node = built;
    const tls = tlsOptions(loaded);
    let running: Awaited<ReturnType<typeof serveNode>>;
    try {
      running = await serveNode({ app: node.node.app, close: () => node.close() }, { port: settings.port, hostname: settings.host, ...(tls ? { tls } : {}) });
    } catch (err) {
      portInUse = (err as { code?: unknown }).code === 'EADDRINUSE';
      throw listenError(err, settings.port, settings.host, loaded.file) ?? err;
    }
    process.on('message', (m: unknown) => {
      if (!isMessage<PrimaryMessage>(m)) return;
      if (m.mk === 'index-catch-up') {
        // Only the first worker is asked; without MNQuery there is nothing to bring up to date.
        const work = node.indexCatchUp?.() ?? Promise.resolve();
        work.then(
          () => void send({ mk: 'index-caught-up', id: m.id }),
          (err: unknown) => void send({ mk: 'index-caught-up', id: m.id, error: err instanceof Error ? err.message : String(err) }),
        );
      } else if (m.mk === 'index-caught-up') follower?.answer(m.id, m.error);
      else if (m.mk === 'metrics') {
        const snapshot: Promise<MetricsSnapshot> = node.metrics ? node.metrics.registry.getMetricsAsJSON() : Promise.resolve([]);
        snapshot.then(
          (s) => void send({ mk: 'metrics', id: m.id, snapshot: s }),
          () => void send({ mk: 'metrics', id: m.id, snapshot: [] }),
        );
      }
    });
    let stopping = false;
    const stop = async () => {
      if (stopping) return;
      stopping = true;
      node.logger.info({ slot: settings.slot }, 'shutting down');
      await running.close();
      process.exit(0);
    };
    // The primary sends SIGTERM to each worker; a terminal's Ctrl-C or systemd reach every process of the group at once.
    // Every repeat is ignored: the primary's SIGTERM may come later than a terminal's SIGINT, the
    // primary ends a worker whose stop takes too long (SIGKILL after its deadline), and a worker
    // ends with its primary (node:cluster exits a worker whose primary disconnected): a second
    // Ctrl-C, which exits the primary at once, ends them too.
    onStopSignals(stop, { exitOnRepeat: false });
    node.logger.info({ slot: settings.slot, role: leader ? 'first worker: serves requests and runs the background work' : 'serves requests' }, 'worker ready');
    await send({ mk: 'ready', slot: settings.slot });
  } catch (err) {
    await built?.close().catch(() => undefined);
    await send({ mk: 'failed', slot: settings.slot, message: err instanceof Error ? err.message : String(err), ...(portInUse ? { portInUse: true as const } : {}) });
    process.exit(1);
  }
}
