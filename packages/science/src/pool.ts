import { createRequire } from 'node:module';
import { availableParallelism } from 'node:os';
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { budgetsOf, type DocumentBudgets } from './budgets.js';
import type { ResourceMap, ScienceMetadata, ScienceRead } from './types.js';
import type { WorkerTask } from './worker.js';

export interface SciencePoolOptions {
  /** Worker threads. Default min(2, cores). */
  threads?: number;
  /** Heap (old generation) each worker may use, in MB; a document needing more is not indexed. Default 256. */
  maxOldGenerationSizeMb?: number;
  /** Time one document may take in a worker (ms); past it the worker is terminated. Default 10 s. */
  timeBudgetMs?: number;
  /** Budgets checked before parsing (defaults: DEFAULT_BUDGETS). */
  budgets?: Partial<DocumentBudgets>;
  /** An idle worker exits after this long (ms). Default 30 s. */
  idleTimeoutMs?: number;
}

export const DEFAULT_POOL_OPTIONS = Object.freeze({ maxOldGenerationSizeMb: 256, timeBudgetMs: 10_000, idleTimeoutMs: 30_000 });

/** Allowance for starting a worker (loading the readers), on top of a document's time budget. */
const WORKER_STARTUP_MS = 30_000;

// Under compiled JS the worker is dist/worker.js. From TypeScript source (npm start runs
// `node --import tsx`, whose execArgv workers inherit; vitest runs sources in-process
// without a loader a worker could use) it is src/worker.ts, loaded through tsx.
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const WORKER_FILE = fileURLToPath(new URL(FROM_SOURCE ? './worker.ts' : './worker.js', import.meta.url));

function workerExecArgv(): string[] | undefined {
  if (!FROM_SOURCE) return undefined;
  const argv = process.execArgv;
  const hasTsx = argv.some((a, i) => (a === '--import' || a === '--loader' || a === '--require' || a === '-r') && /tsx/.test(argv[i + 1] ?? '')) || argv.some((a) => /^--(import|loader)=.*tsx/.test(a));
  if (hasTsx) return undefined;
  return [...argv, '--import', createRequire(import.meta.url).resolve('tsx')];
}

/** Why a worker failed, in words for a "not indexed" reason. */
function failureReason(err: unknown, pool: { timeBudgetMs: number; memoryMb: number }): string {
  const e = err as { name?: string; code?: string; message?: string };
  if (e?.name === 'AbortError') return `reading it took longer than ${pool.timeBudgetMs} ms`;
  if (e?.code === 'ERR_WORKER_OUT_OF_MEMORY' || /out of memory/i.test(e?.message ?? '')) return `reading it needed more than ${pool.memoryMb} MB of memory`;
  return `the reader failed: ${String(e?.message ?? err).slice(0, 200)}`;
}

/**
 * Reads untrusted science metadata and resource maps in worker threads (piscina): each
 * document pre-scanned against budgets, each worker's heap capped, each document given a
 * time budget after which its worker is terminated. Every outcome is a ScienceRead (never a
 * throw): over a budget, timed out or out of memory gives `not-indexed` with the reason.
 * Workers start on demand, exit when idle, and never keep the process alive.
 */
export class SciencePool {
  readonly budgets: DocumentBudgets;
  readonly timeBudgetMs: number;
  readonly threads: number;
  private readonly memoryMb: number;
  private readonly idleTimeoutMs: number;
  private piscina: Piscina | undefined;
  private running = 0;
  /** Workers that have loaded the reader (a new one takes seconds under tsx on a busy machine). */
  private ready = 0;
  private readonly queue: Array<() => void> = [];

  constructor(options: SciencePoolOptions = {}) {
    this.budgets = budgetsOf(options.budgets);
    this.timeBudgetMs = options.timeBudgetMs ?? DEFAULT_POOL_OPTIONS.timeBudgetMs;
    this.threads = Math.max(1, options.threads ?? Math.min(2, availableParallelism()));
    this.memoryMb = options.maxOldGenerationSizeMb ?? DEFAULT_POOL_OPTIONS.maxOldGenerationSizeMb;
    this.idleTimeoutMs = options.idleTimeoutMs ?? DEFAULT_POOL_OPTIONS.idleTimeoutMs;
  }

  private workers(): Piscina {
    if (!this.piscina) {
      const execArgv = workerExecArgv();
      this.piscina = new Piscina({
        filename: WORKER_FILE,
        minThreads: 0,
        maxThreads: this.threads,
        idleTimeout: this.idleTimeoutMs,
        resourceLimits: { maxOldGenerationSizeMb: this.memoryMb },
        ...(execArgv ? { execArgv } : {}),
      });
      this.ready = 0;
      const p = this.piscina;
      p.on('workerCreate', () => p === this.piscina && this.ready++);
      p.on('workerDestroy', () => p === this.piscina && this.ready--);
    }
    return this.piscina;
  }

  /** Science metadata of a document (`withText`: also its plain text, for full-text search). */
  metadata(formatId: string, bytes: Uint8Array | string, options: { withText?: boolean } = {}): Promise<ScienceRead<ScienceMetadata>> {
    return this.run({ kind: 'metadata', formatId, bytes, budgets: this.budgets, withText: options.withText === true }) as Promise<ScienceRead<ScienceMetadata>>;
  }

  /** The aggregation of a resource map. */
  resourceMap(bytes: Uint8Array | string): Promise<ScienceRead<ResourceMap>> {
    return this.run({ kind: 'map', bytes, budgets: this.budgets }) as Promise<ScienceRead<ResourceMap>>;
  }

  /** Let pending tasks end, then stop the workers. The pool starts again if used afterwards. */
  async close(): Promise<void> {
    const p = this.piscina;
    this.piscina = undefined;
    await p?.close({ force: true });
  }

  private async run(task: WorkerTask): Promise<ScienceRead<ScienceMetadata> | ScienceRead<ResourceMap>> {
    const b = task.bytes;
    const size = typeof b === 'string' ? Buffer.byteLength(b, 'utf8') : b.byteLength;
    // A view into a larger buffer would be copied whole to the worker: copy the view only.
    if (typeof b !== 'string' && (b.byteOffset !== 0 || b.byteLength !== b.buffer.byteLength)) task = { ...task, bytes: new Uint8Array(b) };
    // Too large: refused here, without copying the bytes to a worker.
    if (size > this.budgets.maxBytes) return { status: 'not-indexed', reason: `larger than ${this.budgets.maxBytes} bytes` };
    // At most `threads` tasks handed to piscina at once, so each one's time budget counts
    // from when a worker takes it, not from when it was queued behind others.
    if (this.running >= this.threads) await new Promise<void>((resolve) => this.queue.push(resolve));
    this.running++;
    try {
      const workers = this.workers();
      // A task that must wait for a worker to start gets the start-up time on top of its budget.
      const budget = this.ready >= this.running ? this.timeBudgetMs : this.timeBudgetMs + WORKER_STARTUP_MS;
      return await workers.run(task, { signal: AbortSignal.timeout(budget) });
    } catch (err) {
      return { status: 'not-indexed', reason: failureReason(err, { timeBudgetMs: this.timeBudgetMs, memoryMb: this.memoryMb }) };
    } finally {
      this.running--;
      this.queue.shift()?.();
    }
  }
}

let shared: SciencePool | undefined;

/** The process's shared pool (created on first use with default options). */
export function sharedSciencePool(): SciencePool {
  return (shared ??= new SciencePool());
}

/** Close the shared pool (tests, shutdown); a later use starts a new one. */
export async function closeSharedSciencePool(): Promise<void> {
  const p = shared;
  shared = undefined;
  await p?.close();
}
