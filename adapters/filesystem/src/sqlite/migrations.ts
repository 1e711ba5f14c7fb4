import type Database from 'better-sqlite3';
import { AdapterError, eventRanks, hasRanks, objectRanks, rebuildRanks, type SqlSteps } from '@memberkit/types';

/**
 * The schema, as an ordered list of migrations. Migration `i` (zero-based) takes the database
 * from `PRAGMA user_version` `i` to `i + 1`. Append new entries; never edit a released one.
 */
export const SQLITE_MIGRATIONS: readonly string[] = [
  // 1: catalogue (objects, identifiers, access) and event log.
  `
  -- One row per object: the columns the catalogue filters and sorts on, and the complete
  -- StoredSystemMetadata as JSON (Dates as ISO strings), which is what get() returns.
  CREATE TABLE objects (
    pid                TEXT    NOT NULL PRIMARY KEY,
    series_id          TEXT,
    format_id          TEXT    NOT NULL,
    size               INTEGER NOT NULL,
    checksum_algorithm TEXT    NOT NULL,
    checksum_value     TEXT    NOT NULL,
    date_modified      INTEGER NOT NULL, -- dateSysMetadataModified, epoch ms
    date_uploaded      INTEGER NOT NULL, -- epoch ms
    serial_version     INTEGER NOT NULL,
    archived           INTEGER NOT NULL CHECK (archived IN (0, 1)),
    obsoletes          TEXT,
    obsoleted_by       TEXT,
    is_replica         INTEGER NOT NULL CHECK (is_replica IN (0, 1)),
    storage_key        TEXT    NOT NULL,
    rights_holder      TEXT    NOT NULL,
    sysmeta            TEXT    NOT NULL
  );
  -- Listing order, covering the cheap filters so that OFFSET walks only the index.
  CREATE INDEX objects_list ON objects (date_modified, pid, is_replica, format_id);
  CREATE INDEX objects_format ON objects (format_id, date_modified, pid, is_replica);
  CREATE INDEX objects_replica ON objects (is_replica, date_modified, pid);
  CREATE INDEX objects_series ON objects (series_id) WHERE series_id IS NOT NULL;

  -- Every identifier in use, as a PID or as a SID (refs: how many objects carry the SID).
  -- The primary key is the unique constraint that keeps PIDs and SIDs apart, also under
  -- concurrent writers; the triggers below keep it in step with objects.
  CREATE TABLE identifiers (
    id   TEXT    NOT NULL PRIMARY KEY,
    kind TEXT    NOT NULL CHECK (kind IN ('pid', 'sid')),
    refs INTEGER NOT NULL DEFAULT 1
  ) WITHOUT ROWID;

  CREATE TRIGGER objects_pid_immutable BEFORE UPDATE OF pid ON objects
  WHEN OLD.pid IS NOT NEW.pid BEGIN
    SELECT RAISE(ABORT, 'memberkit: a PID cannot change');
  END;

  CREATE TRIGGER objects_identifiers_insert AFTER INSERT ON objects BEGIN
    INSERT INTO identifiers (id, kind) VALUES (NEW.pid, 'pid');
    SELECT RAISE(ABORT, 'memberkit: identifier collision: seriesId is in use as a PID')
      FROM identifiers WHERE NEW.series_id IS NOT NULL AND id = NEW.series_id AND kind = 'pid';
    INSERT INTO identifiers (id, kind) SELECT NEW.series_id, 'sid' WHERE NEW.series_id IS NOT NULL
      ON CONFLICT (id) DO UPDATE SET refs = refs + 1;
  END;

  CREATE TRIGGER objects_identifiers_series AFTER UPDATE OF series_id ON objects
  WHEN OLD.series_id IS NOT NEW.series_id BEGIN
    UPDATE identifiers SET refs = refs - 1 WHERE OLD.series_id IS NOT NULL AND id = OLD.series_id AND kind = 'sid';
    DELETE FROM identifiers WHERE OLD.series_id IS NOT NULL AND id = OLD.series_id AND kind = 'sid' AND refs <= 0;
    SELECT RAISE(ABORT, 'memberkit: identifier collision: seriesId is in use as a PID')
      FROM identifiers WHERE NEW.series_id IS NOT NULL AND id = NEW.series_id AND kind = 'pid';
    INSERT INTO identifiers (id, kind) SELECT NEW.series_id, 'sid' WHERE NEW.series_id IS NOT NULL
      ON CONFLICT (id) DO UPDATE SET refs = refs + 1;
  END;

  CREATE TRIGGER objects_identifiers_delete AFTER DELETE ON objects BEGIN
    DELETE FROM identifiers WHERE id = OLD.pid AND kind = 'pid';
    UPDATE identifiers SET refs = refs - 1 WHERE OLD.series_id IS NOT NULL AND id = OLD.series_id AND kind = 'sid';
    DELETE FROM identifiers WHERE OLD.series_id IS NOT NULL AND id = OLD.series_id AND kind = 'sid' AND refs <= 0;
  END;

  -- Subjects that may read each object: the rightsHolder and every subject granted any
  -- permission (the literal subject 'public' for public grants).
  CREATE TABLE access (
    pid     TEXT NOT NULL REFERENCES objects (pid) ON DELETE CASCADE,
    subject TEXT NOT NULL,
    PRIMARY KEY (pid, subject)
  ) WITHOUT ROWID;
  CREATE INDEX access_subject ON access (subject, pid);

  -- The node's event log.
  CREATE TABLE events (
    entry_id        INTEGER PRIMARY KEY AUTOINCREMENT,
    identifier      TEXT    NOT NULL,
    ip_address      TEXT    NOT NULL,
    user_agent      TEXT    NOT NULL,
    subject         TEXT    NOT NULL,
    event           TEXT    NOT NULL,
    date_logged     INTEGER NOT NULL, -- epoch ms
    node_identifier TEXT    NOT NULL
  );
  CREATE INDEX events_order ON events (date_logged, entry_id);
  CREATE INDEX events_identifier ON events (identifier);
  CREATE INDEX events_event ON events (event, date_logged);
  `,
  // 2: durable jobs (replication, system metadata refresh, notifications).
  `
  CREATE TABLE jobs (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    kind         TEXT    NOT NULL,
    payload      TEXT    NOT NULL,
    state        TEXT    NOT NULL CHECK (state IN ('queued', 'running', 'done', 'failed')),
    attempts     INTEGER NOT NULL DEFAULT 0,
    run_after    INTEGER NOT NULL, -- epoch ms
    locked_by    TEXT,
    locked_until INTEGER,          -- epoch ms
    last_error   TEXT,
    dedupe_key   TEXT,
    created      INTEGER NOT NULL
  );
  CREATE INDEX jobs_due ON jobs (state, run_after);
  -- One live (queued or running) job per dedupe key.
  CREATE UNIQUE INDEX jobs_dedupe ON jobs (dedupe_key) WHERE dedupe_key IS NOT NULL AND state IN ('queued', 'running');
  `,
  `
  -- The position index of the listings (rank-index.ts of @memberkit/types): per bucket of the
  -- listing order, its first key and how many rows (and public rows) it holds.
  CREATE TABLE ranks (
    list     TEXT    NOT NULL,
    lo_date  INTEGER NOT NULL,
    lo_key   TEXT    NOT NULL,
    n        INTEGER NOT NULL,
    n_public INTEGER NOT NULL,
    PRIMARY KEY (list, lo_date, lo_key)
  ) WITHOUT ROWID;
  -- 1 when 'public' may read the object: anonymous listings become an index range.
  ALTER TABLE objects ADD COLUMN is_public INTEGER NOT NULL DEFAULT 0;
  UPDATE objects SET is_public = 1 WHERE pid IN (SELECT pid FROM access WHERE subject = 'public');
  CREATE INDEX objects_public ON objects (is_public, date_modified, pid);
  `,
];

/** The listings of the embedded store in the shared position index. */
export const OBJECT_RANKS = objectRanks({ objects: 'objects', ranks: 'ranks', publicIndex: 'objects_public' });
export const EVENT_RANKS = eventRanks({ events: 'events', ranks: 'ranks' });

/** Runs a routine of SQL steps synchronously on `db` (statements from `prepare`, cached by the caller). */
export function runStepsSync<T>(prepare: (sql: string) => Database.Statement, steps: SqlSteps<T>): T {
  let step = steps.next();
  while (!step.done) {
    const statement = prepare(step.value.sql);
    let rows: Array<Record<string, unknown>> = [];
    if (statement.reader) rows = statement.raw(step.value.arrays === true).all(...step.value.params) as Array<Record<string, unknown>>;
    else statement.run(...step.value.params);
    step = steps.next(rows);
  }
  return step.value;
}

/**
 * Brings the database to the newest schema version, in one `BEGIN IMMEDIATE` transaction so
 * that several processes opening a fresh file at once migrate it exactly once.
 * Throws kind 'internal' when the file's schema is newer than this code knows.
 */
export function migrateSqlite(db: Database.Database, migrations: readonly string[] = SQLITE_MIGRATIONS): void {
  const target = migrations.length;
  const version = (): number => db.pragma('user_version', { simple: true }) as number;
  const tooNew = (v: number): AdapterError =>
    new AdapterError('internal', `SQLite schema version ${v} is newer than this memberkit supports (${target})`);
  const seen = version();
  if (seen === target) return;
  if (seen > target) throw tooNew(seen);
  db.transaction(() => {
    const current = version();
    if (current > target) throw tooNew(current);
    for (let v = current; v < target; v++) {
      db.exec(migrations[v] as string);
      db.pragma(`user_version = ${v + 1}`);
    }
    if (migrations === SQLITE_MIGRATIONS) {
      const prepare = (sql: string) => db.prepare(sql);
      for (const t of [OBJECT_RANKS, EVENT_RANKS]) if (!runStepsSync(prepare, hasRanks(t))) runStepsSync(prepare, rebuildRanks(t));
    }
  }).immediate();
}
