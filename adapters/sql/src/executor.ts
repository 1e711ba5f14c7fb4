import type Database from 'better-sqlite3';
import { CompiledQuery, MysqlAdapter, PostgresAdapter, sql, type Kysely, type RawBuilder } from 'kysely';
import type { DialectSql, SqlDialectName } from './dialect.js';
import type { SqlStep } from './position-index.js';
import { ARRAY_ROWS } from './pg-row-collector.js';

/**
 * The store's operations are written once, as generators of SQL statements (a `Routine`), and
 * run by one of two executors of the same SQL text:
 * - `runAsync`: through kysely on any dialect (PostgreSQL, MySQL/MariaDB, and SQLite inside
 *   transactions other parts of the package opened with kysely);
 * - `SqliteSync.run`: on SQLite, directly on cached better-sqlite3 prepared statements, the
 *   whole routine synchronously (no promise per statement, nothing can interleave).
 * Statements are kysely `sql` templates (compiled by the executor for its dialect), `q`
 * templates (compiled by kysely once per call site, shape and dialect: see `q`) or the position
 * index's `?` steps (position-index.ts). A failing statement is thrown into the routine, so a
 * routine may catch it (a unique violation reported as 'already-exists').
 */

/** A kysely-built statement and what the routine wants back from it. */
export interface Statement {
  readonly query: RawBuilder<unknown> | Bound;
  /** 'rows' (default): the rows; 'changes': rows affected; 'insertId': { changes, insertId } of an INSERT. */
  readonly result?: 'rows' | 'changes' | 'insertId';
}

/** A routine of statements returning T. */
export type Routine<T> = Generator<Statement | SqlStep, T, any>;

/**
 * A statement of the hot paths whose SQL text depends only on its call site, the dialect and
 * the shape of its `rows`/`dialectText` values, never on the values themselves: kysely
 * compiles it once per call site, shape and dialect (the text is cached with its parameter
 * order), and each call only binds the values. Every other interpolated value is a parameter;
 * a value that would change the text (a kysely builder) is refused on first use.
 */
export function q(strings: TemplateStringsArray, ...values: unknown[]): Bound {
  return new Bound(strings, values);
}

/** A `q` statement: its call site and the values of this call. */
export class Bound {
  constructor(
    readonly strings: TemplateStringsArray,
    readonly values: readonly unknown[],
  ) {}
}

/** Inside `q`: SQL text that depends only on the dialect (`FOR UPDATE`, an upsert clause). */
export class DialectText {
  constructor(readonly text: (dialect: SqlDialectName) => string) {}
}

/** Inside `q`: `(a, b), (c, d), ...` of equally long rows of values (at least one row). */
export class Rows {
  constructor(readonly rows: ReadonlyArray<readonly unknown[]>) {
    if (rows.length === 0) throw new Error('Rows: no rows');
  }
}

/** `FOR UPDATE` where rows can be locked (SQLite's BEGIN IMMEDIATE holds the whole database). */
export const FOR_UPDATE = new DialectText((d) => (d === 'sqlite' ? '' : 'FOR UPDATE'));

/** Compiled `q` texts by call site, then by dialect and shape (a few per site: multi-row counts). */
const compiled = new WeakMap<TemplateStringsArray, Map<string, string>>();
const MAX_SHAPES_PER_SITE = 64;

/** The SQL text of `bound` for `dialect` (compiled by `compiler` on first use) and its parameters. */
export function compileBound(bound: Bound, dialect: SqlDialectName, compiler: Kysely<any>): { sql: string; parameters: readonly unknown[] } {
  const { strings, values } = bound;
  let shape: string = dialect;
  let plain = true;
  for (const v of values) {
    if (v instanceof Rows) (shape += `|${v.rows.length}x${v.rows[0]!.length}`), (plain = false);
    else if (v instanceof DialectText) plain = false;
  }
  const parameters = plain ? values : flattened(values);
  let texts = compiled.get(strings);
  if (texts === undefined) compiled.set(strings, (texts = new Map()));
  const text = texts.get(shape);
  if (text !== undefined) return { sql: text, parameters };
  const built = sql(
    strings,
    ...values.map((v) =>
      v instanceof Rows ? sql.join(v.rows.map((row) => sql`(${sql.join(row)})`)) : v instanceof DialectText ? sql.raw(v.text(dialect)) : v,
    ),
  ).compile(compiler);
  const same = built.parameters.length === parameters.length && built.parameters.every((p, i) => Object.is(p, parameters[i]));
  if (!same) throw new Error(`q\`\`: a value changes the SQL text of ${built.sql}; use the sql tag there`);
  if (texts.size < MAX_SHAPES_PER_SITE) texts.set(shape, built.sql);
  return { sql: built.sql, parameters };
}

/**
 * The parameters of a `q` with Rows or DialectText values, in order. A plain loop: the
 * flatMap/flat it replaces took ~0.3 µs a value (V8's generic flattening), 2 s of a
 * 100,000-file wrap scan's multi-row inserts.
 */
function flattened(values: readonly unknown[]): unknown[] {
  const out: unknown[] = [];
  for (const v of values) {
    if (v instanceof Rows) {
      for (const row of v.rows) for (let i = 0; i < row.length; i++) out.push(row[i]);
    } else if (!(v instanceof DialectText)) out.push(v);
  }
  return out;
}

/** The dialect a kysely instance (or transaction) compiles for. */
function dialectOf(db: Kysely<any>): SqlDialectName {
  const adapter = db.getExecutor().adapter;
  return adapter instanceof PostgresAdapter ? 'postgres' : adapter instanceof MysqlAdapter ? 'mysql' : 'sqlite';
}

/** The rows of `query`. */
export function* rowsOf<R = Record<string, unknown>>(query: RawBuilder<unknown> | Bound): Generator<Statement, R[], any> {
  return yield { query };
}

/** The first row of `query`, if any. */
export function* rowOf<R = Record<string, unknown>>(query: RawBuilder<unknown> | Bound): Generator<Statement, R | undefined, any> {
  const rows: R[] = yield { query };
  return rows[0];
}

/** Runs `query`; returns the number of rows it changed. */
export function* changesOf(query: RawBuilder<unknown> | Bound): Generator<Statement, number, any> {
  return yield { query, result: 'changes' };
}

/** Runs an INSERT; returns the rows changed and the first generated key (MySQL has no RETURNING). */
export function* insertOf(query: RawBuilder<unknown> | Bound): Generator<Statement, { changes: number; insertId: number }, any> {
  return yield { query, result: 'insertId' };
}

/**
 * The statements a result-free routine (one that ignores what its statements return) would run,
 * without running them: each is answered 0 rows / 0 changes. For `fusedWrites`.
 */
export function statementsOf(routine: Routine<unknown>): Statement[] {
  const out: Statement[] = [];
  let step = routine.next();
  while (!step.done) {
    if (!isStatement(step.value)) throw new Error('statementsOf: a position-index step is not result-free');
    out.push(step.value);
    step = routine.next(step.value.result === 'rows' || step.value.result === undefined ? [] : step.value.result === 'changes' ? 0 : { changes: 0, insertId: 0 });
  }
  return out;
}

/**
 * PostgreSQL: data-modifying statements whose results nobody reads, as ONE statement (all but
 * the last as data-modifying CTEs): one round trip instead of one each. They run on one
 * snapshot and must not change the same row twice (give them different tables).
 */
export function fusedWrites(statements: readonly Statement[], compiler: Kysely<any>): SqlStep {
  const texts: string[] = [];
  const params: unknown[] = [];
  for (const { query } of statements) {
    const c = query instanceof Bound ? compileBound(query, 'postgres', compiler) : query.compile(compiler);
    // kysely numbers PostgreSQL parameters $1..$n in order of appearance; as `?` they are
    // numbered again across the whole statement (`numbered`)
    texts.push(c.sql.replace(/\$\d+/g, '?'));
    params.push(...c.parameters);
  }
  const last = texts.pop()!;
  return { sql: texts.length === 0 ? last : `WITH ${texts.map((t, i) => `w${i} AS (${t})`).join(', ')} ${last}`, params };
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
    const asArrays = step.arrays === true && d.name === 'postgres';
    const { rows } = await db.executeQuery<Record<string, unknown>>(CompiledQuery.raw(asArrays ? ARRAY_ROWS + numbered(d, step) : numbered(d, step), step.params));
    return step.arrays && !asArrays ? rows.map((row) => Object.values(row)) : rows;
  }
  const { query } = step;
  const result =
    query instanceof Bound
      ? await db.executeQuery(((c) => CompiledQuery.raw(c.sql, c.parameters as unknown[]))(compileBound(query, d?.name ?? dialectOf(db), db)))
      : await query.execute(db);
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

  /** True while the connection is in a transaction (some errors end it themselves). */
  get inTransaction(): boolean {
    return this.statements.database.inTransaction;
  }

  /**
   * SQLite's `PRAGMA data_version`: moves when another connection (another process) commits to
   * the database, not on this connection's own commits.
   */
  dataVersion(fresh = false): number {
    // Read once per event-loop turn: the requests parsed in one turn were sent before it began,
    // so a commit racing them is one they could not have seen either. The statement takes the
    // file's shared lock and costs tens of microseconds, per request on the cached read path.
    // That holds for a value read while the turn's requests are handled: a reader outside them
    // (a catch-up run at the check phase, a timer) asks `fresh`, which neither uses nor keeps
    // the turn's value (kept, it would outlive the check phase into the next turn's requests).
    if (fresh) return this.statements.prepare('PRAGMA data_version').pluck().get() as number;
    if (this.#dataVersion === undefined) {
      this.#dataVersion = this.statements.prepare('PRAGMA data_version').pluck().get() as number;
      setImmediate(() => (this.#dataVersion = undefined));
    }
    return this.#dataVersion;
  }

  #dataVersion: number | undefined;

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
    const { query } = step;
    const { sql: text, parameters } = query instanceof Bound ? compileBound(query, 'sqlite', this.compiler) : query.compile(this.compiler);
    const statement = this.statements.prepare(text);
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
