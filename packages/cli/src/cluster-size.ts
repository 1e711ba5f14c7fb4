import { availableParallelism } from 'node:os';
import type { MemberkitConfig } from './config-schema.js';

/** `server.workers` or `--workers`: a number of processes, or "auto". */
export type WorkersSetting = number | 'auto';

export interface WorkerCount {
  count: number;
  /** Why this many, for the start banner. */
  reason: string;
}

/** The catalogue's database, as far as several writers are concerned. */
function catalogueDatabase(config: MemberkitConfig): 'server' | 'sqlite' | 'other' {
  const { type, dialect } = config.catalogue as { type: string; dialect?: unknown };
  if (type === 'sqlite') return 'sqlite';
  if (type === 'sql') return dialect === 'sqlite' ? 'sqlite' : 'server';
  return 'other';
}

/**
 * How many processes `memberkit serve` runs. "auto": one per core where several processes gain
 * (a PostgreSQL or MySQL/MariaDB catalogue takes writers at once; an SQLite catalogue under a
 * read-only node is written by the first worker's scans only), else one: a writable SQLite
 * node has one writer at a time, and a catalogue type of another package may not support
 * several processes at all (set `server.workers` when it does).
 */
export function workerCount(config: MemberkitConfig, requested: WorkersSetting = config.server.workers, cores = availableParallelism()): WorkerCount {
  if (requested !== 'auto') return { count: requested, reason: 'as configured' };
  const database = catalogueDatabase(config);
  const mapped = (config.catalogue as { mapping?: unknown }).mapping !== undefined;
  const readOnly = config.wrap !== undefined || mapped;
  if (database === 'server') return { count: cores, reason: `auto: one per core, the catalogue is a database server` };
  if (database === 'sqlite' && readOnly) return { count: cores, reason: `auto: one per core, a read-only node on SQLite` };
  if (database === 'sqlite') return { count: 1, reason: 'auto: a writable SQLite catalogue has one writer at a time' };
  return { count: 1, reason: `auto: catalogue type '${config.catalogue.type}' (set server.workers if it supports several processes)` };
}
