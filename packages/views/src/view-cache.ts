/**
 * A bounded least-recently-used cache whose entries name the objects they were computed from,
 * so a change to any of them drops the entry: this process's change notifications, and every
 * other process's and scanner's changes from the catalogue's change feed (ScienceServices.catchUp,
 * run before each request). Entries also expire after `ttlMs` (a catalogue without a feed).
 * Bounded by entry count and by the sum of entry sizes.
 */
export interface ViewCacheOptions {
  maxEntries: number;
  maxBytes: number;
  ttlMs: number;
}

interface Entry<T> {
  value: T;
  bytes: number;
  at: number;
  dependsOn: (pid: string) => boolean;
  /** The objects the entry is a view of (their pages change when a new map aggregates them). */
  subjects: readonly string[];
}

export class ViewCache<T> {
  private readonly entries = new Map<string, Entry<T>>();
  private bytes = 0;

  constructor(private readonly options: ViewCacheOptions) {}

  get size(): number {
    return this.entries.size;
  }

  get(key: string): T | undefined {
    const e = this.entries.get(key);
    if (!e) return undefined;
    this.entries.delete(key);
    if (Date.now() - e.at > this.options.ttlMs) {
      this.bytes -= e.bytes;
      return undefined;
    }
    this.entries.set(key, e);
    return e.value;
  }

  set(key: string, value: T, dependsOn: (pid: string) => boolean, bytes = 1, subjects: readonly string[] = []): void {
    if (bytes > this.options.maxBytes) return;
    this.delete(key);
    this.entries.set(key, { value, bytes, at: Date.now(), dependsOn, subjects });
    this.bytes += bytes;
    for (const [k, e] of this.entries) {
      if (this.entries.size <= this.options.maxEntries && this.bytes <= this.options.maxBytes) break;
      this.entries.delete(k);
      this.bytes -= e.bytes;
    }
  }

  delete(key: string): void {
    const e = this.entries.get(key);
    if (!e) return;
    this.entries.delete(key);
    this.bytes -= e.bytes;
  }

  /** Drop every entry computed from `pid` (O(entries); the cache is small). */
  invalidate(pid: string): void {
    for (const [k, e] of [...this.entries]) if (e.dependsOn(pid)) this.delete(k);
  }

  /** Drop every entry that is a view of one of `ids`. */
  invalidateSubjects(ids: ReadonlySet<string>): void {
    for (const [k, e] of [...this.entries]) if (e.subjects.some((s) => ids.has(s))) this.delete(k);
  }

  clear(): void {
    this.entries.clear();
    this.bytes = 0;
  }
}
