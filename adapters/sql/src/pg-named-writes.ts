import type pg from 'pg';

/** Distinct write texts one connection prepares at most; later ones run unnamed (never deallocated). */
export const MAX_NAMED_WRITES = 128;

/**
 * Longer texts run unnamed: a prepared statement holds its parse tree and plan in the server
 * session for the connection's life (a batch INSERT of hundreds of rows, one per row count,
 * would hold megabytes on every connection), and a batch parses once for many rows anyway.
 */
export const MAX_NAMED_TEXT = 8192;

/**
 * The statements of write transactions: INSERT, UPDATE, DELETE and statements whose first CTE
 * is one (a create's rows, fusedWrites); row locks (FOR UPDATE); and the listings' position
 * index, read by every write that moves it (small key lookups in mk_ranks).
 */
const WRITE = /^\s*(?:WITH\s+\w+\s+AS\s+\(\s*)?(?:INSERT|UPDATE|DELETE)\b|^\s*SELECT\b[^;]*\bFROM mk_ranks\b|\bFOR UPDATE\b/i;

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * PostgreSQL: the statements of write transactions (WRITE) that `client` runs become named
 * prepared statements, parsed and planned once per connection instead of at every call. A
 * create runs a few fixed texts (q`` statements: one text per call site and row count), and
 * PostgreSQL spent about as much CPU parsing and planning each as executing it (a 7-column
 * INSERT: 80–113 µs of backend CPU unnamed, 53–57 µs named, here). Other reads stay unnamed: a
 * generic plan could suit a listing's range scan worse than the plan made for its values. Each
 * text of at most MAX_NAMED_TEXT characters gets its name on first use on this connection, up to `max` texts. Like the change
 * feed's prepared reader, this needs a session per connection (behind PgBouncer in transaction
 * mode: 1.21 or newer with max_prepared_statements set).
 */
export function nameWrites(client: pg.ClientBase, max = MAX_NAMED_WRITES): void {
  const names = new Map<string, string>();
  const query = client.query.bind(client) as Query;
  (client as unknown as { query: Query }).query = (config, values, callback) => {
    if (typeof config === 'string' && config.length <= MAX_NAMED_TEXT && Array.isArray(values) && callback === undefined && WRITE.test(config)) {
      let name = names.get(config);
      if (name === undefined && names.size < max) names.set(config, (name = `mk_w${names.size}`));
      if (name !== undefined) return query({ name, text: config, values });
    }
    return query(config, values, callback);
  };
}
