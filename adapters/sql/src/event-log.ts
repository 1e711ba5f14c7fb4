import { AdapterError, type EventLogStore, type EventQuery, type EventRecord, type StoredEvent } from '@memberkit/types';
import { sql, type RawBuilder } from 'kysely';
import { inList, num, text } from './dialect.js';
import { readableBy } from './native-catalogue.js';
import { orderedPage } from './paging.js';
import { EVENT_POSITIONS, eventSlice, positionedPage, type PositionDelta } from './position-index.js';
import { DialectText, insertOf, q, rowOf, rowsOf, Rows, type Routine } from './executor.js';
import type { SqlStore } from './sql-store.js';
import type { WriteGroup } from './write-group.js';
import { checkSlice, epochMs, prefixUpperBound, wellFormed } from '@memberkit/types';

interface EventRow {
  entry_id: unknown;
  identifier: unknown;
  ip_address: unknown;
  user_agent: unknown;
  subject: unknown;
  event: unknown;
  date_logged: unknown;
  node_identifier: unknown;
}

/**
 * Where the event log's `readableBy` filter finds who may read an object: the native
 * catalogue's access table, a condition builder (a mapped catalogue's), or nowhere.
 */
export type EventAccessSource =
  | 'native'
  | 'none'
  | ((identifierColumn: RawBuilder<unknown>, subjects: readonly string[], form: 'exists' | 'in') => RawBuilder<unknown>);

/**
 * The event log (EventLogStore) on PostgreSQL, MySQL/MariaDB or SQLite. Obtain it from
 * `createSqlCatalogue(...).eventLog`.
 *
 * - entryId is the auto-increment key as a decimal string: unique, never reused, increasing
 *   with insertion (across processes too).
 * - Order dateLogged then entryId; totals exact (a counter kept in the appending
 *   transaction answers unfiltered totals without counting).
 * - `readableBy` joins the native catalogue's access table on the entry's identifier (entries
 *   of removed objects are then hidden). A log beside a mapped catalogue cannot evaluate it
 *   and refuses it with 'unsupported'.
 * - `idPrefix` is a case-sensitive code point prefix ('' matches everything).
 */
export class SqlEventLog implements EventLogStore {
  constructor(
    readonly store: SqlStore,
    readonly access: EventAccessSource = 'native',
  ) {}

  async open(): Promise<void> {
    await this.store.open();
  }

  async close(): Promise<void> {
    await this.store.close();
  }

  /** Appends all of `events` in one transaction (all or none). 'invalid' on a bad dateLogged. */
  async append(events: readonly EventRecord[]): Promise<void> {
    if (events.length === 0) return;
    await this.store.writing('append events', (group) => appendEvents(this.store, events, group));
  }

  /** Entries in order dateLogged then entryId, with the exact total of the filtered log. */
  async query(query: EventQuery): Promise<{ total: number; entries: StoredEvent[] }> {
    checkSlice(query.start, query.count);
    const base = eventConditions(query);
    if (base === undefined) return { total: 0, entries: [] };
    if (query.readableBy !== undefined) {
      if (this.access === 'none') throw new AdapterError('unsupported', 'this event log cannot evaluate readableBy');
      if (query.readableBy.length === 0) return { total: 0, entries: [] };
    }
    const access = this.access;
    const readable = (subjects: readonly string[], form: 'exists' | 'in') =>
      typeof access === 'function' ? access(sql.ref('o.identifier'), subjects, form) : readableBy(sql.ref('o.identifier'), subjects, form);
    const slice = eventSlice(query);
    const store = this.store;
    return store.reading('query events', function* () {
      // Every entry or a date range: any page from the position index (position-index.ts), as listObjects.
      if (slice !== undefined) {
        const page = yield* positionedPage<unknown[]>(store.dialect.name, EVENT_POSITIONS, slice, { start: query.start, count: query.count, columns: EVENT_COLUMNS, arrays: true });
        if (page !== undefined) return { total: page.total, entries: page.rows.map(fromValues) };
      }
      const { total, rows } = yield* orderedPage<EventRow>({
        dialect: store.dialect.name,
        table: 'mk_events',
        order: ['date_logged', 'entry_id'],
        where: (form) => (query.readableBy === undefined ? base : [...base, readable(query.readableBy, form)]),
        ...(base.length === 0 && query.readableBy === undefined ? { total: () => store.counter('events') } : {}),
        columns: 'r.*',
        start: query.start,
        count: query.count,
      });
      return { total, entries: rows.map(toStoredEvent) };
    });
  }
}

/**
 * Appends `events` inside the caller's write transaction (the event log's own appends, and a
 * catalogue change whose events commit with it: the log and the catalogue share `store`):
 * the rows of every routine of the group are inserted together at its end (WriteGroup.defer),
 * with their positions and the events counter.
 */
export function* appendEvents(store: SqlStore, events: readonly EventRecord[], group: WriteGroup): Routine<void> {
  if (events.length === 0) return;
  const rows = events.map((e) => [e.identifier, e.ipAddress, e.userAgent, e.subject, e.event, epochMs(e.dateLogged, 'dateLogged'), e.nodeIdentifier]);
  group.defer('events', rows, (all) => insertEventRows(store, all, group));
}

/** Inserts event rows (as appendEvents builds them) and adds their positions and count to `group`. */
function* insertEventRows(store: SqlStore, rows: unknown[][], group: WriteGroup): Routine<void> {
  const ranks: PositionDelta[] = [];
  for (let i = 0; i < rows.length; i += 500) {
    const chunk = rows.slice(i, i + 500);
    const ids = yield* insertEvents(store, chunk);
    chunk.forEach((row, j) => ranks.push({ date: row[5] as number, key: EVENT_POSITIONS.keyText(ids[j]), n: 1, pub: 0 }));
  }
  group.add({ positions: [[EVENT_POSITIONS, ranks]], events: rows.length });
}

/** The new entries' ids, where INSERT can return them. */
const RETURNING_ENTRY_ID = new DialectText((d) => (d === 'mysql' ? '' : 'RETURNING entry_id'));

/** auto_increment_increment of each MySQL store, read once. */
const idSteps = new WeakMap<SqlStore, number>();

/** Inserts `rows` and returns their entry ids in order. */
function* insertEvents(store: SqlStore, rows: unknown[][]): Routine<Array<number | string>> {
  const insert = q`INSERT INTO mk_events (identifier, ip_address, user_agent, subject, event, date_logged, node_identifier)
    VALUES ${new Rows(rows)} ${RETURNING_ENTRY_ID}`;
  if (store.dialect.name !== 'mysql') {
    const ids = yield* rowsOf<{ entry_id: number | string }>(insert);
    return ids.map((r) => r.entry_id).sort((a, b) => Number(a) - Number(b));
  }
  // MySQL has no RETURNING: one multi-row INSERT takes consecutive ids (a step of
  // auto_increment_increment apart) from the first, which insertId reports.
  const { insertId: first } = yield* insertOf(insert);
  let step = idSteps.get(store);
  if (step === undefined) {
    step = num((yield* rowOf<{ s: unknown }>(sql`SELECT @@auto_increment_increment AS s`))?.s ?? 1);
    idSteps.set(store, step);
  }
  return rows.map((_, j) => first + j * step);
}

/** The columns of an entry, in the order `fromValues` reads them (large pages: arrays cost less than objects). */
const EVENT_COLUMNS = 'r.entry_id, r.identifier, r.ip_address, r.user_agent, r.subject, r.event, r.date_logged, r.node_identifier';

function fromValues([entryId, identifier, ipAddress, userAgent, subject, event, dateLogged, nodeIdentifier]: unknown[]): StoredEvent {
  return toStoredEvent({
    entry_id: entryId,
    identifier,
    ip_address: ipAddress,
    user_agent: userAgent,
    subject,
    event,
    date_logged: dateLogged,
    node_identifier: nodeIdentifier,
  });
}

function toStoredEvent(row: EventRow): StoredEvent {
  return {
    entryId: String(row.entry_id),
    identifier: text(row.identifier),
    ipAddress: text(row.ip_address),
    userAgent: text(row.user_agent),
    subject: text(row.subject),
    event: text(row.event),
    dateLogged: new Date(num(row.date_logged)),
    nodeIdentifier: text(row.node_identifier),
  };
}

/** The conditions of a query, or undefined when it can match nothing (empty `events`). */
function eventConditions(query: EventQuery): RawBuilder<unknown>[] | undefined {
  const conditions: RawBuilder<unknown>[] = [];
  if (query.fromDate !== undefined) conditions.push(sql`o.date_logged >= ${epochMs(query.fromDate, 'fromDate')}`);
  if (query.toDate !== undefined) conditions.push(sql`o.date_logged < ${epochMs(query.toDate, 'toDate')}`);
  if (query.events !== undefined) {
    if (query.events.length === 0) return undefined;
    conditions.push(inList(sql.ref('o.event'), query.events));
  }
  if (query.idPrefix !== undefined && query.idPrefix !== '') {
    if (typeof query.idPrefix !== 'string') throw new AdapterError('invalid', 'idPrefix must be a string');
    conditions.push(sql`o.identifier >= ${wellFormed(query.idPrefix)}`);
    const upper = prefixUpperBound(query.idPrefix);
    if (upper !== undefined) conditions.push(sql`o.identifier < ${upper}`);
  }
  return conditions;
}
