import { sql } from 'kysely';
import { AdapterError, type FormatRecord } from '@memberkit/types';
import { text, type SqlStore } from '@memberkit/adapter-sql';

/**
 * The CN's object format vocabulary (mk_cn_formats): the federation's list as vendored,
 * plus the formats an administrator added (`memberkit cn add-format`), in list order.
 */
export class FormatStore {
  constructor(private readonly store: SqlStore) {}

  async list(): Promise<FormatRecord[]> {
    const rows = await this.store.read('list formats', (db) => sql<Row>`SELECT format_id, format_name, format_type, media_type, extension FROM mk_cn_formats ORDER BY position`.execute(db));
    return rows.rows.map(toRecord);
  }

  async get(formatId: string): Promise<FormatRecord | undefined> {
    const rows = await this.store.read('get format', (db) => sql<Row>`SELECT format_id, format_name, format_type, media_type, extension FROM mk_cn_formats WHERE format_id = ${formatId}`.execute(db));
    const row = rows.rows[0];
    return row ? toRecord(row) : undefined;
  }

  /** Adds a format at the end of the list. Throws kind 'already-exists' when its formatId is known. */
  async add(format: FormatRecord): Promise<void> {
    await this.store.write('add format', async (db) => {
      const existing = await sql`SELECT 1 AS x FROM mk_cn_formats WHERE format_id = ${format.formatId}`.execute(db);
      if (existing.rows.length > 0) throw new AdapterError('already-exists', `the format '${format.formatId}' is already in the list`);
      const max = await sql<{ m: unknown }>`SELECT max(position) AS m FROM mk_cn_formats`.execute(db);
      const position = Number(max.rows[0]?.m ?? 0) + 1;
      await sql`INSERT INTO mk_cn_formats (format_id, position, format_name, format_type, media_type, extension)
        VALUES (${format.formatId}, ${position}, ${format.formatName}, ${format.formatType}, ${format.mediaType}, ${format.extension})`.execute(db);
    });
  }
}

interface Row {
  format_id: unknown;
  format_name: unknown;
  format_type: unknown;
  media_type: unknown;
  extension: unknown;
}

function toRecord(r: Row): FormatRecord {
  return { formatId: text(r.format_id), formatName: text(r.format_name), formatType: text(r.format_type), mediaType: text(r.media_type), extension: text(r.extension) };
}
