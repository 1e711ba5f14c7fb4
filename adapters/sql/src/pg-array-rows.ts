import type pg from 'pg';

/**
 * Marks a statement whose rows the caller wants as arrays of values (listing pages): kysely
 * passes a text and its values to the driver, and no option, so the mark travels in the text.
 */
export const ARRAY_ROWS = '/*mk:array-rows*/';

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/**
 * PostgreSQL: a statement `client` runs whose text starts with ARRAY_ROWS is sent without the
 * mark and its rows come back as arrays (node-pg's rowMode 'array'): a listing page of 1,000
 * rows then builds no object with named properties per row, and its rows, alive across the
 * socket reads that bring them, give the scavenger less to copy.
 */
export function arrayRowsOnMark(client: pg.ClientBase): void {
  const query = client.query.bind(client) as Query;
  (client as unknown as { query: Query }).query = (config, values, callback) => {
    if (typeof config === 'string' && config.startsWith(ARRAY_ROWS) && callback === undefined) {
      return query({ text: config.slice(ARRAY_ROWS.length), values, rowMode: 'array' });
    }
    return query(config, values, callback);
  };
}
