import pg from 'pg';

/**
 * PostgreSQL: a connection of its own for the one statement run before every cached read (the
 * change feed's head, shared by the requests of a turn), as a named prepared statement: no
 * pool checkout, and PostgreSQL parses and plans it once per connection instead of at every
 * read. A connection the server ended is replaced at the next read (a read in flight then fails,
 * as on a pool connection).
 */
export class PgPreparedReader {
  #client: Promise<pg.Client> | undefined;
  #closed = false;

  constructor(private readonly config: pg.ClientConfig) {}

  /** The rows (as arrays) of the statement `text`, prepared under `name` on first use. */
  async rows(name: string, text: string): Promise<unknown[][]> {
    if (this.#closed) throw new Error('the prepared reader is closed');
    const client = await this.#connection();
    return (await client.query<unknown[]>({ name, text, rowMode: 'array' })).rows;
  }

  async close(): Promise<void> {
    this.#closed = true;
    const connecting = this.#client;
    this.#client = undefined;
    const client = await connecting?.catch(() => undefined);
    await client?.end().catch(() => undefined);
  }

  #connection(): Promise<pg.Client> {
    if (this.#client !== undefined) return this.#client;
    const client = new pg.Client(this.config);
    const connecting = client.connect().then(() => client);
    const drop = (): void => {
      if (this.#client === connecting) this.#client = undefined;
    };
    // A failure of the idle connection (a server restart) must not crash the process: the
    // connection is dropped and the next read connects again.
    client.on('error', () => {
      drop();
      client.end().catch(() => undefined);
    });
    client.on('end', drop);
    connecting.catch(drop);
    this.#client = connecting;
    return connecting;
  }
}
