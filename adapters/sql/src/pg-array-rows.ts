import pg from 'pg';

/**
 * Marks a statement whose rows the caller wants as arrays of values (listing pages): kysely
 * passes a text and its values to the driver, and no option, so the mark travels in the text.
 */
export const ARRAY_ROWS = '/*mk:array-rows*/';

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/** What kysely reads of a node-pg result. */
interface ArrayResult {
  command: string;
  rowCount: number | null;
  rows: unknown[][];
}

/**
 * PostgreSQL: a statement `client` runs whose text starts with ARRAY_ROWS is sent without the
 * mark and its rows come back as arrays (node-pg's rowMode 'array'): a listing page of 1,000
 * rows then builds no object with named properties per row.
 *
 * The rows are collected here, not by node-pg's Query: a page's rows held by its Query object
 * outlived it. Every scavenge of the node's young generation copied a third of what was
 * allocated since the one before (4–5 MB with the default 16 MB semi-space, 8–20 ms a pause
 * every six pages of 1,000 rows) and promoted it at the next; with the rows kept outside the
 * Query, a scavenge copies kilobytes (a bare node-pg loop of such pages: 2.2 instead of 3.9 ms a
 * page). The Query refers only to this client's collector, whose array is swapped at the end of
 * each statement. One such statement at a time per client (a second one meanwhile takes
 * node-pg's own path).
 */
export function arrayRowsOnMark(client: pg.ClientBase): void {
  const query = client.query.bind(client) as Query;
  const page: { rows: unknown[][]; busy: boolean } = { rows: [], busy: false };
  const onRow = (row: unknown[]): void => {
    page.rows.push(row);
  };
  (client as unknown as { query: Query }).query = (config, values, callback) => {
    if (typeof config === 'string' && config.startsWith(ARRAY_ROWS) && callback === undefined) {
      const text = config.slice(ARRAY_ROWS.length);
      if (page.busy) return query({ text, values, rowMode: 'array' });
      page.busy = true;
      return new Promise<ArrayResult>((resolve, reject) => {
        const settle = (): unknown[][] => {
          const rows = page.rows;
          page.rows = [];
          page.busy = false;
          return rows;
        };
        // No callback and a 'row' listener: node-pg emits the rows and keeps none.
        // (@types/pg leaves rowMode out of the Query constructor's config; node-pg reads it.)
        const statement = new pg.Query({ text, values, rowMode: 'array' } as pg.QueryConfig);
        statement.on('row', onRow);
        statement.once('error', (err: Error) => {
          settle();
          reject(err);
        });
        statement.once('end', (result: pg.QueryResult) => resolve({ command: result.command, rowCount: result.rowCount, rows: settle() }));
        query(statement);
      });
    }
    return query(config, values, callback);
  };
}
