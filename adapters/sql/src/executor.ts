import type Database from 'better-sqlite3';
import { CompiledQuery, type Kysely, type RawBuilder } from 'kysely';
import type { DialectSql } from './dialect.js';
import type { SqlStep } from './rank-index.js';

/**
 * The store's operations are written once, as generators of SQL statements (a `Routine`), and
 * run by one of two executors of the same SQL text:
 * - `runAsync`: through kysely on any dialect (PostgreSQL, MySQL/MariaDB, and SQLite inside
 *   transactions other parts of the package opened with kysely);
 * - `SqliteSync.run`: on SQLite, directly on cached better-sqlite3 prepared statements, the
 *   whole routine synchronously (no promise per statement, nothing can interleave).
 * Statements are kysely `sql` templates (compiled by the executor for its dialect) or the
 * position index's `?` steps (rank-index.ts). A failing statement is thrown into the routine,
 * so a routine may catch it (a unique violation reported as 'already-exists').
 */

/** A kysely-built statement and what the routine wants back from it. */
export interface Statement {
  readonly query: RawBuilder<unknown>;
  /** 'rows' (default): the rows; 'changes': rows affected; 'insertId': { changes, insertId } of an INSERT. */
  readonly result?: 'rows' | 'changes' | 'insertId';
}

/** A routine of statements returning T. */
export type Routine<T> = Generator<Statement | SqlStep, T, any>;

/** The rows of `query`. */
export function* rowsOf<R = Record<string, unknown>>(query: RawBuilder<unknown>): Generator<Statement, R[], any> {
  return yield { query };
}

/** The first row of `query`, if any. */
export function* rowOf<R = Record<string, unknown>>(query: RawBuilder<unknown>): Generator<Statement, R | undefined, any> {
  const rows: R[] = yield { query };
  return rows[0];
}

/** Runs `query`; returns the number of rows it changed. */
export function* changesOf(query: RawBuilder<unknown>): Generator<Statement, number, any> {
  return yield { query, result: 'changes' };
}

/** Runs an INSERT; returns the rows changed and the first generated key (MySQL has no RETURNING). */
export function* insertOf(query: RawBuilder<unknown>): Generator<Statement, { changes: number; insertId: number }, any> {
  return yield { query, result: 'insertId' };
}

function isStatement(step: Statement | SqlStep): step is Statement {
  return (step as Statement).query !== undefined;
}

/** A `?` step as PostgreSQL's numbered placeholders. */
function numbered(d: DialectSql, step: SqlStep): string {
  if (d.name !== 'postgres') return step.sql;
  let n = 0;
  return step.sql.replace(/\?/g, () => `$${++n}`);
}

/**
 * Runs `routine` through kysely on `db` (a transaction, a connection or the pool). `d` is
 * needed only by routines with position-index steps (their `?` placeholders).
 */
export async function runAsync<T>(db: Kysely<any>, d: DialectSql | undefined, routine: Routine<T>): Promise<T> {
  let step = routine.next();
  while (!step.done) {
    let reply: unknown;
    try {
      reply = await executeAsync(db, d, step.value);
    } catch (e) {
      step = routine.throw(e);
      continue;
    }
    step = routine.next(reply);
  }
  return step.value;
}

async function executeAsync(db: Kysely<any>, d: DialectSql | undefined, step: Statement | SqlStep): Promise<unknown> {
  if (!isStatement(step)) {
    if (d === undefined) throw new Error('runAsync: a position-index step needs the dialect');
    const { rows } = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(numbered(d, step), step.params));
    return step.arrays ? rows.map((row) => Object.values(row)) : rows;
  }
  const result = await step.query.execute(db);
  if (step.result === 'changes') return Number(result.numAffectedRows ?? 0n);
  if (step.result === 'insertId') return { changes: Number(result.numAffectedRows ?? 0n), insertId: Number(result.insertId ?? 0n) };
  return result.rows;
}

/** Prepared statements by SQL text, bounded (texts built from a variable number of values are many). */
export class StatementCache {
  readonly #statements = new Map<string, Database.Statement>();

  constructor(readonly database: Database.Database) {}

  prepare(text: string): Database.Statement {
    let statement = this.#statements.get(text);
    if (statement === undefined) {
      statement = this.database.prepare(text);
      if (this.#statements.size >= 500) this.#statements.delete(this.#statements.keys().next().value as string);
      this.#statements.set(text, statement);
    }
    return statement;
  }
}

/**
 * The synchronous executor of one better-sqlite3 connection. `compiler` compiles kysely
 * templates to SQLite's SQL text (no query is run through it).
 */
export class SqliteSync {
  constructor(
    private readonly statements: StatementCache,
    private readonly compiler: Kysely<any>,
  ) {}

  /** Runs `routine` to its end on the connection, in the caller's transaction (or none). */
  run<T>(routine: Routine<T>): T {
    let step = routine.next();
    while (!step.done) {
      let reply: unknown;
      try {
        reply = this.#execute(step.value);
      } catch (e) {
        step = routine.throw(e);
        continue;
      }
      step = routine.next(reply);
    }
    return step.value;
  }

  /** Runs one statement text without parameters (BEGIN, COMMIT, ROLLBACK). */
  exec(text: string): void {
    this.statements.prepare(text).run();
  }

  #execute(step: Statement | SqlStep): unknown {
    if (!isStatement(step)) {
      const statement = this.statements.prepare(step.sql);
      if (!statement.reader) return (statement.run(step.params), []);
      if (!step.arrays) return statement.all(step.params);
      // raw mode is a property of the cached statement: always turned off again
      try {
        return statement.raw(true).all(step.params);
      } finally {
        statement.raw(false);
      }
    }
    const { sql, parameters } = step.query.compile(this.compiler);
    const statement = this.statements.prepare(sql);
    if (statement.reader) {
      const rows = statement.all(parameters);
      return step.result === undefined || step.result === 'rows' ? rows : step.result === 'changes' ? rows.length : { changes: rows.length, insertId: 0 };
    }
    const { changes, lastInsertRowid } = statement.run(parameters);
    if (step.result === 'changes') return changes;
    if (step.result === 'insertId') return { changes, insertId: Number(lastInsertRowid) };
    return [];
  }
}
