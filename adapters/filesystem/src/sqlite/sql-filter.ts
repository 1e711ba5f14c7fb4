
/** WHERE conditions (joined with AND) and their positional parameters. */
export interface SqlFilter {
  conditions: string[];
  params: unknown[];
}

/** The SQL placeholder of the readableBy condition, replaced per statement by readableByForm. */
export const READABLE_BY = '<<readableBy>>';

/**
 * The readableBy condition: the object named by `pidColumn` has an access row for one of the
 * subjects bound as a JSON array parameter (one statement shape for any number of subjects;
 * an empty array matches nothing). Two equivalent forms with different plans:
 * - 'exists' probes the access table per row while walking the listing index in order:
 *   best for shallow pages (stops after start + count matches);
 * - 'in' collects the readable PIDs once (access_subject index) and looks each up: best for
 *   totals and deep offsets (measured on 1M objects: count 0.14 s vs 0.69 s).
 */
export function readableByClause(pidColumn: string, form: 'exists' | 'in'): string {
  const subjects = 'SELECT value FROM json_each(?)';
  return form === 'exists'
    ? `EXISTS (SELECT 1 FROM access a WHERE a.pid = ${pidColumn} AND a.subject IN (${subjects}))`
    : `${pidColumn} IN (SELECT a.pid FROM access a WHERE a.subject IN (${subjects}))`;
}

/** Pages starting below this offset use the 'exists' form of readableBy, deeper ones 'in'. */
export const SHALLOW_OFFSET = 10_000;

/** `where` with the readableBy placeholder (if any) expanded for `pidColumn` in `form`. */
export function expandWhere(where: string, pidColumn: string, form: 'exists' | 'in'): string {
  return where.replace(READABLE_BY, () => readableByClause(pidColumn, form));
}
