import pg from 'pg';

/** Connections of a PgPreparedReader: a read finds one idle while another is still under way (see `rows`). */
export const PREPARED_READER_CONNECTIONS = 2;

interface Slot {
  client: Promise<pg.Client> | undefined;
  /** Reads sent on this connection and not yet answered. */
  inflight: number;
}

/**
 * PostgreSQL: connections of their own for the one statement run before every cached read (the
 * change feed's head, shared by the requests of a turn), as a named prepared statement: no
 * pool checkout, and PostgreSQL parses and plans it once per connection instead of at every
 * read. A read goes to the least busy connection, so under heavy load the reads of consecutive
 * turns overlap instead of queuing behind each other on one connection (node-postgres sends a
 * connection's queries one at a time); the second connection opens only when reads overlap.
 * A connection the server ended is replaced at its next read (a read in flight then fails, as
 * on a pool connection).
 */
export class PgPreparedReader {
  readonly #slots: Slot[];
  #closed = false;

  constructor(
    private readonly config: pg.ClientConfig,
    connections = PREPARED_READER_CONNECTIONS,
  ) {
    this.#slots = Array.from({ length: Math.max(1, connections) }, () => ({ client: undefined, inflight: 0 }));
  }

  /** The rows (as arrays) of the statement `text`, prepared under `name` on first use. */
  async rows(name: string, text: string): Promise<unknown[][]> {
    if (this.#closed) throw new Error('the prepared reader is closed');
    let slot = this.#slots[0]!;
    for (const s of this.#slots) if (s.inflight < slot.inflight) slot = s;
    slot.inflight++;
    try {
      const client = await this.#connection(slot);
      return (await client.query<unknown[]>({ name, text, rowMode: 'array' })).rows;
    } finally {
      slot.inflight--;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all(
      this.#slots.map(async (slot) => {
        const connecting = slot.client;
        slot.client = undefined;
        const client = await connecting?.catch(() => undefined);
        await client?.end().catch(() => undefined);
      }),
    );
  }

  #connection(slot: Slot): Promise<pg.Client> {
    if (slot.client !== undefined) return slot.client;
    const client = new pg.Client(this.config);
    const connecting = client.connect().then(() => client);
    const drop = (): void => {
      if (slot.client === connecting) slot.client = undefined;
    };
    // A failure of the idle connection (a server restart) must not crash the process: the
    // connection is dropped and the next read connects again.
    client.on('error', () => {
      drop();
      client.end().catch(() => undefined);
    });
    client.on('end', drop);
    connecting.catch(drop);
    slot.client = connecting;
    return connecting;
  }
}
