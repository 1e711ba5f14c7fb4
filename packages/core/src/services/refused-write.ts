import type { CatalogueAdapter, StorageAdapter, StorageKey } from '@memberkit/types';
import type { Logger } from '../logger.js';

/** What became of the bytes of a failed write: removed, or kept because its change committed or because nobody can tell. */
export type RefusedWriteBytes = 'removed' | 'committed' | 'unknown';

/**
 * Removes the bytes of a write whose catalogue change failed with `cause`, unless the catalogue
 * references them after all. A failed change is not proof that nothing committed: the SQLite
 * catalogue fails a write whose write-ahead log could not be flushed after its COMMIT, and a
 * PostgreSQL connection can drop during one. Removing the bytes then would leave an object whose
 * record is served and whose bytes are gone. When the record cannot be read the bytes stay: if
 * nothing committed, the write's intent is still recorded and the sweep removes them later.
 */
export async function removeUnreferencedBytes(
  deps: { metadata: Pick<CatalogueAdapter, 'get'>; storage: StorageAdapter; logger: Logger },
  pid: string,
  key: StorageKey,
  cause: unknown,
): Promise<RefusedWriteBytes> {
  const { metadata, storage, logger } = deps;
  let referenced: boolean;
  try {
    referenced = (await metadata.get(pid))?.storageKey === key;
  } catch (err) {
    logger.warn({ err, cause, pid, key }, 'a write failed and its record cannot be read: its bytes stay (the sweep removes them if nothing committed)');
    return 'unknown';
  }
  if (referenced) {
    logger.error({ err: cause, pid, key }, 'a write failed after its catalogue change committed: the object and its bytes stay, their durability is unconfirmed');
    return 'committed';
  }
  await storage.delete?.(key).catch((err: unknown) => logger.error({ err, pid, key }, 'could not remove the bytes of a refused write'));
  return 'removed';
}
