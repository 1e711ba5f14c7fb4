import pg from 'pg';

/**
 * Marks a statement whose rows the caller wants as arrays of values (listing pages): kysely
 * passes a text and its values to the driver, and no option, so the mark travels in the text.
 */
export const ARRAY_ROWS = '/*mk:array-rows*/';

type Query = (config: unknown, values?: unknown, callback?: unknown) => unknown;

/** What kysely reads of a node-pg result. */
interface CollectedResult {
  command: string;
  rowCount: number | null;
  rows: unknown[];
}

/** A statement config node-pg's Query takes (text, values, and a name from nameWrites). */
interface StatementConfig {
  text: string;
  values?: unknown[];
  name?: string;
  rowMode?: 'array';
}

/**
 * PostgreSQL: the rows of the statements kysely sends through `client` are collected here, from
 * node-pg's 'row' events, instead of kept by node-pg's Query; a statement whose text starts
 * with ARRAY_ROWS is sent without the mark and its rows come back as arrays (rowMode 'array':
 * a listing page of 1,000 rows builds no object with named properties per row).
 *
 * Rows held by their Query outlived it: every scavenge of the node's young generation copied
 * a third of what was allocated since the one before (4–5 MB with the default 16 MB
 * semi-space, 8–20 ms a pause every six listing pages of 1,000 rows) and promoted it at the
 * next; with the rows outside the Query a scavenge copies kilobytes (a bare node-pg loop of
 * such pages: 2.2 instead of 3.9 ms a page). The Query refers only to this client's collector,
 * whose array is swapped at the end of each statement.
 *
 * Taken: statements on the extended protocol (with values, or named by nameWrites, which must
 * be installed after this), one statement each by that protocol, with no callback (kysely's
 * calls). Anything else, and a statement sent while another is collected on this client, takes
 * node-pg's own path.
 */
export function collectRows(client: pg.ClientBase): void {
  const query = client.query.bind(client) as Query;
  const collector: { rows: unknown[]; busy: boolean } = { rows: [], busy: false };
  const onRow = (row: unknown): void => {
    collector.rows.push(row);
  };
  (client as unknown as { query: Query }).query = (config, values, callback) => {
    const statement = callback === undefined ? statementOf(config, values) : undefined;
    if (statement === undefined) return query(config, values, callback);
    if (collector.busy) return query(statement);
    collector.busy = true;
    return new Promise<CollectedResult>((resolve, reject) => {
      const settle = (): unknown[] => {
        const rows = collector.rows;
        collector.rows = [];
        collector.busy = false;
        return rows;
      };
      // No callback and a 'row' listener: node-pg emits the rows and keeps none.
      // (@types/pg leaves rowMode out of the Query constructor's config; node-pg reads it.)
      const submitted = new pg.Query(statement as pg.QueryConfig);
      submitted.on('row', onRow);
      submitted.once('error', (err: Error) => {
        settle();
        reject(err);
      });
      submitted.once('end', (result: pg.QueryResult) => resolve({ command: result.command, rowCount: result.rowCount, rows: settle() }));
      query(submitted);
    });
  };
}

/** The options of a StatementConfig: a config with any other keeps node-pg's path. */
const STATEMENT_KEYS: ReadonlySet<string> = new Set(['text', 'values', 'name', 'rowMode']);

/** The statement a call describes, when it is one this collector takes (see collectRows). */
function statementOf(config: unknown, values: unknown): StatementConfig | undefined {
  if (typeof config === 'string') {
    if (!Array.isArray(values)) return undefined;
    if (config.startsWith(ARRAY_ROWS)) return { text: config.slice(ARRAY_ROWS.length), values, rowMode: 'array' };
    // Without values node-pg sends a simple query, which may hold several statements.
    return values.length > 0 ? { text: config, values } : undefined;
  }
  if (values !== undefined || typeof config !== 'object' || config === null) return undefined;
  const c = config as Partial<StatementConfig> & { submit?: unknown; callback?: unknown };
  if (typeof c.submit === 'function' || c.callback !== undefined || typeof c.text !== 'string') return undefined;
  const named = typeof c.name === 'string' && c.name !== '';
  if (!named && !(Array.isArray(c.values) && c.values.length > 0)) return undefined;
  // A config with other options (types, portal, rows...) keeps node-pg's path.
  if (Object.keys(c).some((k) => !STATEMENT_KEYS.has(k))) return undefined;
  return { ...(c as StatementConfig) };
}
