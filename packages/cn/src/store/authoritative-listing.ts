import { sql, type RawBuilder } from 'kysely';
import { inList, num, text, type SqlStore } from '@memberkit/adapter-sql';

export interface AuthoritativeQuery {
  nodeId: string;
  fromDate?: Date;
  toDate?: Date;
  formatId?: string;
  identifier?: string;
  readableBy?: readonly string[];
  start: number;
  count: number;
}

/**
 * listObjects' `nodeId` ("v2: filter on authoritative Member Node"), which the catalogue port
 * does not filter on: the PIDs of the CN's objects whose authoritativeMemberNode is `nodeId`,
 * in listing order (dateSysMetadataModified, then PID), read from the native SQL catalogue's
 * tables in the same database (mk_objects, its access rows in mk_access). Dates: fromDate
 * inclusive, toDate exclusive, as ObjectQuery.
 */
export async function authoritativeObjects(store: SqlStore, q: AuthoritativeQuery): Promise<{ total: number; pids: string[] }> {
  const d = store.dialect;
  const conditions: RawBuilder<unknown>[] = [sql`${sql.raw(d.jsonText('o.sysmeta', '$.authoritativeMemberNode'))} = ${q.nodeId}`];
  if (q.fromDate) conditions.push(sql`o.date_modified >= ${q.fromDate.getTime()}`);
  if (q.toDate) conditions.push(sql`o.date_modified < ${q.toDate.getTime()}`);
  if (q.formatId) conditions.push(sql`o.format_id = ${q.formatId}`);
  if (q.identifier) conditions.push(sql`(o.pid = ${q.identifier} OR o.series_id = ${q.identifier})`);
  if (q.readableBy) conditions.push(sql`EXISTS (SELECT 1 FROM mk_access a WHERE a.pid = o.pid AND ${inList(sql.ref('a.subject'), q.readableBy)})`);
  const where = sql.join(conditions, sql` AND `);
  return store.read('list objects by authoritative node', async (db) => {
    const total = num((await sql<{ n: unknown }>`SELECT count(*) AS n FROM mk_objects o WHERE ${where}`.execute(db)).rows[0]?.n ?? 0);
    if (q.count === 0 || q.start >= total) return { total, pids: [] };
    const rows = await sql<{ pid: unknown }>`SELECT o.pid FROM mk_objects o WHERE ${where} ORDER BY o.date_modified, o.pid LIMIT ${q.count} OFFSET ${q.start}`.execute(db);
    return { total, pids: rows.rows.map((r) => text(r.pid)) };
  });
}
