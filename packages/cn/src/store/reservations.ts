import { sql } from 'kysely';
import { num, text, type SqlStore } from '@memberkit/adapter-sql';

/** An identifier reserved by a subject until `expires`. */
export interface Reservation {
  identifier: string;
  subject: string;
  created: Date;
  expires: Date;
}

/** What `reserve` did: reserved now (or renewed for the same subject), or found another owner. */
export type ReserveOutcome = { reserved: true; reservation: Reservation } | { reserved: false; owner: Reservation };

/**
 * Identifier reservations (mk_cn_reservations). A reservation holds until it expires
 * (cn.reservationTtlSeconds); an expired one is as good as none. The table's primary key
 * decides races: of concurrent reservations of one identifier, in any number of processes,
 * exactly one wins.
 */
export class ReservationStore {
  constructor(private readonly store: SqlStore) {}

  /**
   * Reserve `identifier` for `subject` until now + ttlMs. The same subject reserving again
   * renews its reservation; another subject's unexpired reservation wins (reserved: false).
   */
  async reserve(identifier: string, subject: string, now: Date, ttlMs: number): Promise<ReserveOutcome> {
    const at = now.getTime();
    const expires = at + ttlMs;
    return this.store.write('reserve identifier', async (db) => {
      await sql`DELETE FROM mk_cn_reservations WHERE identifier = ${identifier} AND expires <= ${at}`.execute(db);
      const insert =
        this.store.dialect.name === 'mysql'
          ? sql`INSERT IGNORE INTO mk_cn_reservations (identifier, subject, created, expires) VALUES (${identifier}, ${subject}, ${at}, ${expires})`
          : sql`INSERT INTO mk_cn_reservations (identifier, subject, created, expires) VALUES (${identifier}, ${subject}, ${at}, ${expires}) ON CONFLICT (identifier) DO NOTHING`;
      await insert.execute(db);
      const owner = (await sql<Row>`SELECT identifier, subject, created, expires FROM mk_cn_reservations WHERE identifier = ${identifier}`.execute(db)).rows[0];
      if (!owner) throw new Error(`the reservation of '${identifier}' vanished`);
      const found = toReservation(owner);
      if (found.subject !== subject) return { reserved: false, owner: found };
      if (found.created.getTime() !== at) {
        await sql`UPDATE mk_cn_reservations SET expires = ${expires} WHERE identifier = ${identifier} AND subject = ${subject}`.execute(db);
        return { reserved: true, reservation: { ...found, expires: new Date(expires) } };
      }
      return { reserved: true, reservation: found };
    });
  }

  /** The unexpired reservation of `identifier`, if any. */
  async get(identifier: string, now: Date): Promise<Reservation | undefined> {
    const rows = await this.store.read('read reservation', (db) => sql<Row>`SELECT identifier, subject, created, expires FROM mk_cn_reservations WHERE identifier = ${identifier} AND expires > ${now.getTime()}`.execute(db));
    const row = rows.rows[0];
    return row ? toReservation(row) : undefined;
  }

  /** Forget the reservation of `identifier` (once the identifier is in use). */
  async release(identifier: string): Promise<void> {
    await this.store.write('release reservation', (db) => sql`DELETE FROM mk_cn_reservations WHERE identifier = ${identifier}`.execute(db));
  }
}

interface Row {
  identifier: unknown;
  subject: unknown;
  created: unknown;
  expires: unknown;
}

function toReservation(r: Row): Reservation {
  return { identifier: text(r.identifier), subject: text(r.subject), created: new Date(num(r.created)), expires: new Date(num(r.expires)) };
}
