import { AdapterError, applyRankDeltas, checkSlice, epochMs, prefixUpperBound, rankedPage, wellFormed, eventSlice, type EventLogStore, type EventQuery, type EventRecord, type RankDelta, type StoredEvent } from '@memberkit/types';
import { EVENT_RANKS } from './migrations.js';
import { READABLE_BY, type SqlFilter } from './sql-filter.js';
import { PageCache, pagedQuery, type PagedTable } from './page-cache.js';
import type { SqliteStore } from './sqlite-store.js';

interface EventRow {
  entry_id: number;
  identifier: string;
  ip_address: string;
  user_agent: string;
  subject: string;
  event: string;
  date_logged: number;
  node_identifier: string;
}

const INSERT_EVENT = `INSERT INTO events (identifier, ip_address, user_agent, subject, event, date_logged, node_identifier)
  VALUES (@identifier, @ip_address, @user_agent, @subject, @event, @date_logged, @node_identifier)`;

const EVENTS_PAGING: PagedTable = {
  table: 'events', alias: 'e', orderColumn: 'date_logged', idColumn: 'entry_id', pidColumn: 'e.identifier',
  select: 'r.*', what: 'query events',
};

/**
 * The event log on SQLite (EventLogStore). Obtain it from `openSqliteStore(...).eventLog`;
 * its open/close open and close the shared store.
 *
 * - entryId is the AUTOINCREMENT row id as a decimal string: unique and increasing, never
 *   reused, also across processes sharing the file.
 * - `readableBy` joins the catalogue's access table on the entry's identifier: entries whose
 *   object is no longer in the catalogue (removed) are hidden from a filtered query; only an
 *   unfiltered query (readableBy undefined) returns them.
 * - `idPrefix` is a case-sensitive code point prefix match ('' matches everything).
 */
export class SqliteEventLog implements EventLogStore {
  readonly #pages = new PageCache();

  constructor(readonly store: SqliteStore) {}

  async open(): Promise<void> {
    await this.store.open();
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  /** Appends all of `events` in one transaction (all or none). 'invalid' on a bad dateLogged. */
  async append(events: readonly EventRecord[]): Promise<void> {
    if (events.length === 0) return;
    const rows = events.map((e) => ({
      identifier: e.identifier,
      ip_address: e.ipAddress,
      user_agent: e.userAgent,
      subject: e.subject,
      event: e.event,
      date_logged: epochMs(e.dateLogged, 'dateLogged'),
      node_identifier: e.nodeIdentifier,
    }));
    this.store.transaction('immediate', 'append events', () => {
      const insert = this.store.statement(INSERT_EVENT);
      const ranks: RankDelta[] = rows.map((row) => ({ date: row.date_logged, key: EVENT_RANKS.keyText(insert.run(row).lastInsertRowid), n: 1, pub: 0 }));
      this.store.steps(applyRankDeltas('sqlite', EVENT_RANKS, ranks, this.store.rankBucketRows));
    });
  }

  /**
   * Entries in order dateLogged then entryId, with the exact total of the filtered log. While
   * the database is unchanged, totals are remembered and the page after the previous one
   * continues from its last entry (see PageCache).
   */
  async query(query: EventQuery): Promise<{ total: number; entries: StoredEvent[] }> {
    checkSlice(query.start, query.count);
    const filter = eventFilter(query);
    if (filter === undefined) return { total: 0, entries: [] };
    // Every entry or a date range: any page from the position index.
    const slice = eventSlice(query);
    if (slice !== undefined) {
      const page = this.store.transaction('deferred', 'query events', () =>
        this.store.steps(rankedPage<EventValues>('sqlite', EVENT_RANKS, slice, { start: query.start, count: query.count, columns: EVENT_COLUMNS, arrays: true })));
      if (page !== undefined) return { total: page.total, entries: page.rows.map(fromValues) };
    }
    const { total, rows } = pagedQuery<EventRow>(this.store, this.#pages, EVENTS_PAGING, filter, query.start, query.count);
    return { total, entries: rows.map(toStoredEvent) };
  }

}

const EVENT_COLUMNS = 'r.entry_id, r.identifier, r.ip_address, r.user_agent, r.subject, r.event, r.date_logged, r.node_identifier';

/** An entry as values, in EVENT_COLUMNS order (large pages: arrays cost less than objects). */
type EventValues = [number, string, string, string, string, string, number, string];

function fromValues([entryId, identifier, ipAddress, userAgent, subject, event, dateLogged, nodeIdentifier]: EventValues): StoredEvent {
  return { entryId: String(entryId), identifier, ipAddress, userAgent, subject, event, dateLogged: new Date(dateLogged), nodeIdentifier };
}

function toStoredEvent(row: EventRow): StoredEvent {
  return {
    entryId: String(row.entry_id),
    identifier: row.identifier,
    ipAddress: row.ip_address,
    userAgent: row.user_agent,
    subject: row.subject,
    event: row.event,
    dateLogged: new Date(row.date_logged),
    nodeIdentifier: row.node_identifier,
  };
}

/** The WHERE of a query, or undefined when it can match nothing (empty `events`). */
function eventFilter(query: EventQuery): SqlFilter | undefined {
  const conditions: string[] = [];
  const params: unknown[] = [];
  if (query.fromDate !== undefined) {
    conditions.push('e.date_logged >= ?');
    params.push(epochMs(query.fromDate, 'fromDate'));
  }
  if (query.toDate !== undefined) {
    conditions.push('e.date_logged < ?');
    params.push(epochMs(query.toDate, 'toDate'));
  }
  if (query.events !== undefined) {
    if (query.events.length === 0) return undefined;
    conditions.push('e.event IN (SELECT value FROM json_each(?))');
    params.push(JSON.stringify(query.events));
  }
  if (query.idPrefix !== undefined && query.idPrefix !== '') {
    if (typeof query.idPrefix !== 'string') throw new AdapterError('invalid', 'idPrefix must be a string');
    conditions.push('e.identifier >= ?');
    params.push(wellFormed(query.idPrefix));
    const upper = prefixUpperBound(query.idPrefix);
    if (upper !== undefined) {
      conditions.push('e.identifier < ?');
      params.push(upper);
    }
  }
  if (query.readableBy !== undefined) {
    conditions.push(READABLE_BY);
    params.push(JSON.stringify(query.readableBy));
  }
  return { conditions, params };
}
