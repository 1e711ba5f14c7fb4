/**
 * The worker side of SciencePool: reads one untrusted document per task, in a thread with
 * its own heap limit, so a hostile document can exhaust only that thread (see pool.ts).
 */
import type { DocumentBudgets } from './budgets.js';
import { readScienceMetadataResult } from './metadata.js';
import { readResourceMapResult } from './ore.js';
import type { ResourceMap, ScienceMetadata, ScienceRead } from './types.js';

export type WorkerTask =
  | { kind: 'metadata'; formatId: string; bytes: Uint8Array | string; budgets: DocumentBudgets; withText: boolean }
  | { kind: 'map'; bytes: Uint8Array | string; budgets: DocumentBudgets };

export default async function run(task: WorkerTask): Promise<ScienceRead<ScienceMetadata> | ScienceRead<ResourceMap>> {
  if (task.kind === 'metadata') return readScienceMetadataResult(task.formatId, task.bytes, { budgets: task.budgets, withText: task.withText });
  return readResourceMapResult(task.bytes, { budgets: task.budgets });
}
