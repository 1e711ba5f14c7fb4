import type { CatalogueAdapter, FeedEntry, ObjectRecord } from '@memberkit/types';
import { ChangeFollower } from '../extension.js';

/** Records kept at most (the oldest filled goes first). */
const DEFAULT_CAPACITY = 20_000;

/**
 * The records the read operations (describe, getSystemMetadata, get, getChecksum, isAuthorized)
 * look up by PID, kept in memory and checked against the catalogue's change feed before every
 * use: `lookup` first catches up with the feed (on SQLite a check in memory, on PostgreSQL and
 * MySQL one small read shared by concurrent requests) and drops every PID a change touched,
 * whichever process committed it, so a cached record is never older than the last committed
 * change at the time of the request. A catalogue without a change feed is read every time.
 * Records handed out are frozen: the same object serves every later request.
 */
export class RecordCache {
  readonly #records = new Map<string, ObjectRecord>();
  readonly #follower: ChangeFollower;
  readonly #capacity: number;
  /** Moves on every invalidation: a load that began before one must not fill the cache. */
  #generation = 0;
  #begun: Promise<unknown> | undefined;

  constructor(metadata: CatalogueAdapter, capacity = DEFAULT_CAPACITY) {
    this.#capacity = capacity;
    this.#follower = new ChangeFollower(metadata, async (entries) => this.#invalidate(entries));
  }

  get enabled(): boolean {
    return this.#follower.available && this.#capacity > 0;
  }

  /**
   * The record of `id` when it is a PID known to the cache, else `load()`'s answer, kept when
   * it is the record of PID `id` (a SID's head changes without a change to that PID's row).
   */
  async lookup(id: string, load: () => Promise<ObjectRecord>): Promise<ObjectRecord> {
    if (!this.enabled) return load();
    // The hot path (nothing committed since the last check, known from memory) awaits nothing.
    if (!this.#follower.current) {
      this.#begun ??= this.#follower.begin();
      await this.#begun;
      await this.#follower.catchUp();
    }
    const hit = this.#records.get(id);
    if (hit) return hit;
    const generation = this.#generation;
    const record = await load();
    if (record.sysmeta.identifier === id && generation === this.#generation) {
      if (this.#records.size >= this.#capacity) this.#records.delete(this.#records.keys().next().value as string);
      this.#records.set(id, deepFreeze(record));
    }
    return record;
  }

  #invalidate(entries: readonly FeedEntry[]): void {
    this.#generation++;
    const at = this.#follower.at;
    // A gap (pruned entries this process never saw): anything may have changed.
    if (at === undefined || entries[0] === undefined || entries[0].seq !== at + 1) this.#records.clear();
    else for (const e of entries) this.#records.delete(e.pid);
  }
}

function deepFreeze<T>(value: T): T {
  if (value === null || typeof value !== 'object' || Object.isFrozen(value) || ArrayBuffer.isView(value)) return value;
  for (const v of Object.values(value as object)) deepFreeze(v);
  return Object.freeze(value);
}

const derived = new WeakMap<object, Map<string, unknown>>();

/**
 * A value computed from a cached record once (its XML encoding per API version), kept as long
 * as the record is; computed every time for a record the cache does not hold (not frozen).
 */
export function derivedOnce<T>(owner: object, key: string, compute: () => T): T {
  if (!Object.isFrozen(owner)) return compute();
  let values = derived.get(owner);
  if (values === undefined) derived.set(owner, (values = new Map()));
  const known = values.get(key);
  if (known !== undefined) return known as T;
  const value = compute();
  values.set(key, value);
  return value;
}
