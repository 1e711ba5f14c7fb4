import type { MetricsSnapshot } from '@memberkit/core';

/**
 * What passes between the primary of `memberkit serve --workers N` and its workers (node:cluster
 * IPC). A worker learns what it serves from WORKER_ENV, set by the primary: the configuration
 * was validated and the port chosen there, so every worker listens where the banner says.
 */
export const WORKER_ENV = 'MEMBERKIT_CLUSTER_WORKER';

export interface WorkerSettings {
  /** 0: the first worker, which also runs the folder's background work. */
  slot: number;
  dir: string;
  configFile?: string;
  port: number;
  host: string;
  baseUrl?: string;
}

export type WorkerMessage =
  /** Listening, background work started. */
  | { mk: 'ready'; slot: number }
  /** Could not start: the one line to print (a configuration or database problem, a port in use). */
  | { mk: 'failed'; slot: number; message: string; portInUse?: true }
  /** A follower before a query: bring the shared index up to date (id: the follower's). */
  | { mk: 'index-catch-up'; id: number }
  /** The first worker: done (id: the primary's). */
  | { mk: 'index-caught-up'; id: number; error?: string }
  | { mk: 'metrics'; id: number; snapshot: MetricsSnapshot };

export type PrimaryMessage =
  /** To the first worker (id: the primary's). */
  | { mk: 'index-catch-up'; id: number }
  /** To the follower that asked (id: its own). */
  | { mk: 'index-caught-up'; id: number; error?: string }
  | { mk: 'metrics'; id: number };

export function isMessage<T extends { mk: string }>(m: unknown): m is T {
  return typeof m === 'object' && m !== null && typeof (m as { mk?: unknown }).mk === 'string';
}
