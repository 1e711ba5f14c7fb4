import type { CatalogueAdapter, StorageAdapter } from '@memberkit/types';
import type { Logger } from '../logger.js';

export interface SweepOptions {
  /** An intent younger than this may belong to a write still in progress (default 10 min). */
  graceMs?: number;
  /** How often the sweep runs after the first pass at start (default 10 min; 0: at start only). */
  intervalMs?: number;
  /** Bytes committed within this much of an intent's creation are its write's candidates (default 60 s). */
  slackMs?: number;
  /** Change-feed entries older than this are pruned (default 7 days); a reader that fell further behind reconciles in full. */
  feedRetentionMs?: number;
  /** The feed keeps at most this many newest entries, whatever their age (default 1,000,000). */
  feedMaxEntries?: number;
}

export const DEFAULT_FEED_RETENTION_MS = 7 * 24 * 3600_000;
export const DEFAULT_FEED_MAX_ENTRIES = 1_000_000;

/**
 * Removes stranded bytes: bytes committed to managed storage whose catalogue commit never
 * happened (the process was killed between the two, or the change was refused and the undo
 * failed). Every write records an intent in the catalogue before committing its bytes, and the
 * catalogue change that references the bytes settles it in its own transaction
 * (CatalogueWriter). An intent older than the grace period was never settled: the bytes its
 * write committed (keys whose modification time is within `slackMs` of the intent) that no
 * catalogue row references are removed, then the intent is dropped. Runs only on storage that
 * the node writes (write, delete and list), never on a wrapped archive. Each pass also prunes
 * the catalogue's change feed to its retention (any storage), so it does not grow forever.
 */
export class StrandedBytesSweep {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<number> | undefined;

  constructor(
    private readonly deps: { metadata: CatalogueAdapter; storage: StorageAdapter; logger: Logger },
    private readonly options: SweepOptions = {},
  ) {}

  /** True when there is something to sweep: stranded bytes, or a change feed to prune. */
  get applicable(): boolean {
    return this.sweepsBytes || !!this.deps.metadata.pruneChanges;
  }

  /** Both sides support the byte sweep: catalogue intents and a listable, deletable managed store. */
  private get sweepsBytes(): boolean {
    const { metadata: m, storage: s } = this.deps;
    return !!(m.staleIntents && m.dropIntents && m.referencesKey && s.capabilities.write && s.capabilities.delete && s.capabilities.list && s.list && s.delete);
  }

  /** One pass (bytes, then the feed); the number of keys removed. Concurrent calls share the pass. */
  sweep(now = Date.now()): Promise<number> {
    this.running ??= this.pass(now).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(now: number): Promise<number> {
    const removed = this.sweepsBytes ? await this.sweepBytes(now) : 0;
    await this.pruneFeed(now);
    return removed;
  }

  private async pruneFeed(now: number): Promise<void> {
    const { metadata, logger } = this.deps;
    if (!metadata.pruneChanges) return;
    const before = new Date(now - (this.options.feedRetentionMs ?? DEFAULT_FEED_RETENTION_MS));
    const pruned = await metadata.pruneChanges(before, this.options.feedMaxEntries ?? DEFAULT_FEED_MAX_ENTRIES);
    if (pruned > 0) logger.info({ pruned, before }, 'sweep: pruned change-feed entries past their retention');
  }

  private async sweepBytes(now: number): Promise<number> {
    const { metadata, storage, logger } = this.deps;
    const grace = this.options.graceMs ?? 600_000;
    const slack = this.options.slackMs ?? 60_000;
    let removed = 0;
    for (;;) {
      const stale = await metadata.staleIntents!(new Date(now - grace), 1000);
      if (stale.length === 0) return removed;
      const windows = stale.map((i) => [i.created.getTime() - slack, i.created.getTime() + slack] as const);
      const within = (t: number) => ([from, to]: readonly [number, number]) => t >= from && t <= to;
      // Candidates still within the grace period may be a write in progress: not judged now,
      // and the intents whose window holds one are kept for a later pass (not dropped unjudged).
      const young: number[] = [];
      for await (const entry of storage.list!()) {
        const t = entry.modified.getTime();
        if (!windows.some(within(t))) continue;
        if (t >= now - grace) {
          young.push(t);
          continue;
        }
        if (await metadata.referencesKey!(entry.key)) continue;
        await storage.delete!(entry.key);
        removed++;
        logger.warn({ key: entry.key, modified: entry.modified }, 'sweep: removed bytes whose catalogue commit never happened');
      }
      const judged = stale.filter((_, k) => !young.some((t) => within(t)(windows[k]!)));
      await metadata.dropIntents!(judged.map((i) => i.id));
      if (judged.length < stale.length || stale.length < 1000) return removed;
    }
  }

  /** Sweep now and then every intervalMs; failures are logged. */
  start(): void {
    const guard = () => void this.sweep().catch((err: unknown) => this.deps.logger.error({ err }, 'sweep of stranded bytes failed'));
    guard();
    const every = this.options.intervalMs ?? 600_000;
    if (every > 0) this.timer = setInterval(guard, every).unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.running?.catch(() => undefined);
  }
}
