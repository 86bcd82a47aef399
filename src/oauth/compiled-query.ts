// Hot-path statements built with Kysely once and then only run. Building and compiling a query costs
// more than SQLite takes to run it (10–30 µs a statement in the token endpoint's profiles, where the
// statement itself is 3–8 µs); the SQL never changes, only the values do.
import type { CompiledQuery, QueryResult } from 'kysely';
import type { Db } from '../db/database.ts';

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
    return db.executeQuery<Row>({ ...statement, parameters: order.map((name) => values[name]) });
  };
}
