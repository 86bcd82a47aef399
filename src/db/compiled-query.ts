// Hot-path statements built with Kysely once and then only run. Building and compiling a query costs
// more than SQLite takes to run it (10–30 µs a statement in the token endpoint's profiles, where the
// statement itself is 3–8 µs); the SQL never changes, only the values do.
//
// And on SQLite they run on the prepared statement at once (executeCompiled), not through Kysely's
// executor — its connection queue, a connection wrapper and four promises per statement cost more than
// the statement (issue 44: `executeQuery` and its callers were ~15 % of a userinfo request) — whenever
// that is what the queue would have done: outside any transaction, or inside the caller's own.
// Any store may use both; they live here, below the domains.
import { CompiledQuery, type QueryResult } from 'kysely';
import { sqliteConnectionOf, type Db } from './database.ts';

/**
 * Runs a compiled statement: on SQLite at once on the connection when no other request's transaction
 * is open (TrackedSqlite.runNow; a write's commit made durable before this returns, as through
 * Kysely), else — and on PostgreSQL — through Kysely, which waits its turn.
 */
export async function executeCompiled<Row>(db: Db, query: CompiledQuery<Row>): Promise<QueryResult<Row>> {
  return (await runNow<Row>(db, query.sql, query.parameters)) ?? db.executeQuery<Row>(query);
}

/** executeCompiled for SQL written out (one text per dialect), its parameters in order. */
export async function executeSql<Row>(db: Db, sqlText: string, parameters: readonly unknown[]): Promise<QueryResult<Row>> {
  return (await runNow<Row>(db, sqlText, parameters)) ?? db.executeQuery<Row>(CompiledQuery.raw(sqlText, [...parameters]) as CompiledQuery<Row>);
}

async function runNow<Row>(db: Db, sqlText: string, parameters: readonly unknown[]): Promise<QueryResult<Row> | undefined> {
  const sqlite = sqliteConnectionOf(db);
  if (sqlite === undefined) return undefined;
  const done = sqlite.runNow<Row>(sqlText, parameters, db.isTransaction);
  if (done === undefined) return undefined;
  if (done.commit !== undefined) await sqlite.commits?.syncThrough(done.commit);
  return done.result;
}

/** A stand-in value for a named parameter while building: each appears in the compiled parameters as itself. */
function placeholder(name: string): string {
  return `\u0000signet-parameter:${name}`;
}

/**
 * A statement compiled once per dialect (per adapter: a database handle and its transactions share
 * one) and run with the values named in `names`. `build` receives one placeholder per name, typed
 * `never` so it fits any column; every parameter of the compiled statement must be one of them, so a
 * value Kysely would have inlined or reordered fails at the first run, not silently.
 */
export function compiledOnce<Name extends string, Row>(
  names: readonly Name[],
  build: (db: Db, values: Record<Name, never>) => { compile(): CompiledQuery<Row> },
): (db: Db, values: Record<Name, unknown>) => Promise<QueryResult<Row>> {
  const placeholders = Object.fromEntries(names.map((name) => [name, placeholder(name)])) as Record<Name, never>;
  const byName = new Map<unknown, Name>(names.map((name) => [placeholder(name), name]));
  const compiled = new WeakMap<object, { statement: CompiledQuery<Row>; order: Name[] }>();
  return (db, values) => {
    const adapter = db.getExecutor().adapter;
    let entry = compiled.get(adapter);
    if (entry === undefined) {
      const statement = build(db, placeholders).compile();
      const order = statement.parameters.map((parameter) => {
        const name = byName.get(parameter);
        if (name === undefined) throw new Error(`compiledOnce: a parameter of "${statement.sql}" is not a named placeholder`);
        return name;
      });
      entry = { statement, order };
      compiled.set(adapter, entry);
    }
    const { statement, order } = entry;
    return executeCompiled<Row>(db, { ...statement, parameters: order.map((name) => values[name]) });
  };
}
