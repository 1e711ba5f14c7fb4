/**
 * Items that arrive while a batch is being handled go into the next batch (at most `max`
 * each); the first batch starts on the next turn of the event loop, so the items of one turn
 * travel together. `handle` settles its items itself and must not reject (an item it leaves
 * unsettled would wait forever).
 */
export class BatchQueue<T> {
  readonly #queued: T[] = [];
  #draining = false;

  constructor(
    private readonly max: number,
    private readonly handle: (batch: T[]) => Promise<void>,
  ) {}

  push(item: T): void {
    this.#queued.push(item);
    if (this.#draining) return;
    this.#draining = true;
    setImmediate(() => void this.#drain());
  }

  async #drain(): Promise<void> {
    try {
      while (this.#queued.length > 0) await this.handle(this.#queued.splice(0, this.max));
    } finally {
      this.#draining = false;
    }
  }
}
