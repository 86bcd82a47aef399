// One Kysely instance per dialect: SQLite (better-sqlite3, WAL, the embedded default) or PostgreSQL (pg) —
// set up here with the migrations; SQLite's transactions and durable commits are in sqlite-transactions.ts,
// its waits for another process's write lock in sqlite-locks.ts.
import { chmodSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { createRequire } from 'node:module';
import type pg from 'pg';
import {
  Kysely,
  Migrator,
  PostgresAdapter,
  PostgresDialect,
  SqliteAdapter,
  sql,
  type Migration,
  type MigrationProvider,
  type PostgresCursor,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
} from 'kysely';
import type { Settings } from '../config/settings.ts';
import { isDatabaseUnavailable } from './errors.ts';
import { DurableSqliteDialect, GroupCommit, TrackedSqlite, WAL_AUTOCHECKPOINT_PAGES } from './sqlite-transactions.ts';
import type { Database } from './schema.ts';
import * as m0001 from './migrations/0001_initial.ts';
import * as m0002 from './migrations/0002_tasks_notifications.ts';
import * as m0003 from './migrations/0003_notification_preferences.ts';
import * as m0004 from './migrations/0004_admin_audit.ts';
import * as m0005 from './migrations/0005_account_self_service.ts';
import * as m0006 from './migrations/0006_task_notes.ts';
import * as m0007 from './migrations/0007_second_factors.ts';
import * as m0008 from './migrations/0008_passkeys.ts';
import * as m0009 from './migrations/0009_task_glossary.ts';
import * as m0010 from './migrations/0010_token_chains.ts';
import * as m0011 from './migrations/0011_oidc.ts';
import * as m0012 from './migrations/0012_operator_role.ts';
import * as m0013 from './migrations/0013_upstream_providers.ts';
import * as m0014 from './migrations/0014_foreign_password_hashes.ts';
import * as m0015 from './migrations/0015_worker_heartbeats.ts';
import * as m0016 from './migrations/0016_agents_oauth.ts';
import * as m0018 from './migrations/0018_services_and_devices.ts';

export type Db = Kysely<Database>;
export type Dialect = 'sqlite' | 'postgres';

export type DatabaseHandle = {
  db: Db;
  dialect: Dialect;
  /**
   * PostgreSQL: how many statements this handle has sent so far, each one round trip to the server
   * (BEGIN and COMMIT included). Tests hold the hot paths to their count with it (issue 20).
   */
  roundTrips?: () => number;
  close(): Promise<void>;
};

/** The SQLite connection of each handle, by its adapter (which its transactions share). */
const sqliteConnections = new WeakMap<object, TrackedSqlite>();

/** The connection of a handle (or a transaction on it) on SQLite, for statements run at once (compiled-query.ts); undefined on PostgreSQL. */
export function sqliteConnectionOf(db: Db): TrackedSqlite | undefined {
  return sqliteConnections.get(db.getExecutor().adapter);
}

/** Whether a handle (or a transaction on it) talks to PostgreSQL: some statements are written for it alone. */
export function isPostgres(db: Db): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

/** Migrations, in order. A new one is one line here. */
const MIGRATIONS: Record<string, Migration> = {
  '0001_initial': m0001,
  '0002_tasks_notifications': m0002,
  '0003_notification_preferences': m0003,
  '0004_admin_audit': m0004,
  '0005_account_self_service': m0005,
  '0006_task_notes': m0006,
  '0007_second_factors': m0007,
  '0008_passkeys': m0008,
  '0009_task_glossary': m0009,
  '0010_token_chains': m0010,
  '0011_oidc': m0011,
  '0012_operator_role': m0012,
  '0013_upstream_providers': m0013,
  '0014_foreign_password_hashes': m0014,
  '0015_worker_heartbeats': m0015,
  '0016_agents_oauth': m0016,
  '0018_services_and_devices': m0018,
};

const provider: MigrationProvider = { getMigrations: async () => MIGRATIONS };

/**
 * The PostgreSQL driver, loaded the first time something needs it: a server on SQLite never does, and
 * is ~1.5 MB of heap smaller for it (issue 20, memory). pg is CommonJS, so it loads synchronously.
 */
export function loadPg(): typeof pg {
  return (loadedPg ??= createRequire(import.meta.url)('pg') as typeof pg);
}
let loadedPg: typeof pg | undefined;

// PostgreSQL returns bigint (int8) as a string; our bigints are epoch milliseconds, safe as numbers.
const pgTypes = {
  getTypeParser(oid: number, format?: 'text' | 'binary') {
    if (oid === 20) return (value: string) => Number(value);
    return loadPg().types.getTypeParser(oid, format);
  },
};

/** Without SIGNET_DATABASE_TIMEOUT_SECONDS (tests, benchmarks), SQLite still gives up on a lock after this long. */
const DEFAULT_SQLITE_LOCK_WAIT_MS = 5000;
/** The client-side limit on a statement exceeds the server's statement_timeout by this much, so a live server cancels first. */
const CLIENT_TIMEOUT_GRACE_MS = 1000;
/** A transaction left open this long by a client that went away is ended by PostgreSQL (its locks with it). */
const IDLE_IN_TRANSACTION_MS = 60_000;

export function openDatabase(database: Settings['database']): DatabaseHandle {
  if (database.kind === 'postgres') {
    const { timeoutMs } = database;
    const pool = new (loadPg().Pool)({
      connectionString: database.url,
      max: database.poolSize,
      types: pgTypes as pg.CustomTypesConfig,
      keepAlive: true,
      idle_in_transaction_session_timeout: IDLE_IN_TRANSACTION_MS,
      // A server that refuses, is down or does not answer (paused, cut off) costs a request at most
      // timeoutMs to connect (waiting for a free pooled connection included) and timeoutMs per statement.
      ...(timeoutMs ? { connectionTimeoutMillis: timeoutMs, statement_timeout: timeoutMs } : {}),
    });
    // An idle client that loses its connection must not crash the process; the next query reconnects.
    pool.on('error', () => {});
    // A connection lost while a request holds it (a reset, a terminated backend) fails that request's
    // query; the client would also emit 'error', and with no listener while checked out that crashes
    // the process. The pool drops the broken client when it is released.
    pool.on('connect', (client) => client.on('error', () => {}));
    const counter = { sent: 0 };
    const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool: preparingPool(pool, timeoutMs ? timeoutMs + CLIENT_TIMEOUT_GRACE_MS : undefined, counter) }) });
    return { db, dialect: 'postgres', roundTrips: () => counter.sent, close: () => db.destroy() };
  }
  mkdirSync(path.dirname(database.file), { recursive: true, mode: 0o700 });
  const sqlite = new SQLite(database.file);
  // Only the service's user may read the database; set before the WAL exists, which SQLite then creates alike.
  if (database.file !== ':memory:') chmodSync(database.file, 0o600);
  const wal = sqlite.pragma('journal_mode = WAL', { simple: true }) === 'wal';
  // Every acknowledged commit survives power loss. In WAL mode the driver below fsyncs the WAL itself,
  // off the event loop and once for every commit made meanwhile (group commit), before a write returns;
  // SQLite then need not fsync inside COMMIT (NORMAL). Without WAL, SQLite's own FULL does it.
  sqlite.pragma(wal ? 'synchronous = NORMAL' : 'synchronous = FULL');
  sqlite.pragma('foreign_keys = ON');
  // A checkpoint runs inside the COMMIT that crosses this many WAL pages, on the event loop, with two
  // fsyncs. 4,000 pages (16 MB) instead of SQLite's 1,000 halves the time commits spend there: fewer
  // stalls, and a page written by many transactions is copied to the database once per checkpoint.
  if (wal) sqlite.pragma(`wal_autocheckpoint = ${WAL_AUTOCHECKPOINT_PAGES}`);
  // SQLite's busy handler waits for another process's lock by sleeping on the calling thread — the
  // event loop, where nothing else (not even /healthz) could run. It is off: the driver waits between
  // attempts with timers instead (see PatientSqliteConnection).
  sqlite.pragma('busy_timeout = 0');
  const tracked = new TrackedSqlite(sqlite, wal ? new GroupCommit(`${database.file}-wal`, path.dirname(database.file)) : undefined);
  const db = new Kysely<Database>({ dialect: new DurableSqliteDialect(tracked, database.timeoutMs ?? DEFAULT_SQLITE_LOCK_WAIT_MS) });
  sqliteConnections.set(db.getExecutor().adapter, tracked);
  return { db, dialect: 'sqlite', close: () => db.destroy() };
}

/** How often a migration that found the database unavailable (another process holding the migration lock past the statement timeout, say) is tried again. */
const MIGRATION_ATTEMPTS = 5;

/**
 * Brings the schema up to date. Safe to run from several processes at once: on PostgreSQL Kysely
 * takes an advisory lock; on SQLite, where it takes none, every migration runs inside one transaction
 * holding the write lock (BEGIN IMMEDIATE), so a second process waits and then finds them done —
 * without it, two processes starting on a new file both created the tables and one failed.
 */
export async function migrate(db: Db): Promise<string[]> {
  const sqlite = db.getExecutor().adapter instanceof SqliteAdapter;
  for (let attempt = 1; ; attempt++) {
    try {
      // SQLite: another process migrating holds the write lock, perhaps longer than the lock wait on a
      // busy machine; BEGIN IMMEDIATE then finds the database unavailable and the attempt is made again.
      return sqlite ? await migrateSqlite(db) : await migrateToLatest(db);
    } catch (error) {
      // Migrations run in one transaction: an unavailable database left nothing half-applied.
      if (attempt < MIGRATION_ATTEMPTS && isDatabaseUnavailable(error)) continue;
      throw error;
    }
  }
}

/** Every migration inside one transaction holding SQLite's write lock. */
function migrateSqlite(db: Db): Promise<string[]> {
  return db.connection().execute(async (connection) => {
    await sql`begin immediate`.execute(connection);
    try {
      const applied = await migrateToLatest(connection);
      await sql`commit`.execute(connection);
      return applied;
    } catch (error) {
      await sql`rollback`.execute(connection).catch(() => {}); // SQLite may have rolled back already
      throw error;
    }
  });
}

/** Kysely's migrator, once: the names of the migrations it applied. */
async function migrateToLatest(db: Db): Promise<string[]> {
  // Numbers 0007 and 0008 were reserved while 0009 shipped first: a database that ran 0009 still gets
  // them (each migration runs once; their order against 0009 does not matter, they touch other tables).
  const { error, results } = await new Migrator({ db, provider, allowUnorderedMigrations: true }).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** Whether every known migration has been applied. */
export async function isMigrated(db: Db): Promise<boolean> {
  const migrations = await new Migrator({ db, provider, allowUnorderedMigrations: true }).getMigrations();
  return migrations.every((m) => m.executedAt !== undefined);
}

/** A cheap round trip, for readiness checks. */
export async function ping(db: Db): Promise<void> {
  await sql`select 1`.execute(db);
}

// ---------------------------------------------------------------------------------------------------
// PostgreSQL: each statement parsed and planned once per connection.

/** At most this many distinct SQL texts are prepared by name (on every pooled connection); the rest run unnamed. */
const PG_NAMED_STATEMENTS = 300;
/** "cached plan must not change result type" (feature_not_supported): a migration changed a table under a prepared `select *`. */
function isStalePlan(error: unknown): boolean {
  const { code, message } = error as { code?: unknown; message?: unknown };
  return code === '0A000' && typeof message === 'string' && message.includes('cached plan must not change result type');
}

/** A statement that got no answer within the client-side limit: the server is paused, cut off or overloaded. */
export class DatabaseTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(timeoutMs: number) {
    super(`the database did not answer within ${timeoutMs} ms`);
    this.name = 'DatabaseTimeoutError';
  }
}

/**
 * The pool as Kysely sees it, sending each query with parameters as a named prepared statement: Kysely
 * sends every query unnamed, so PostgreSQL parses and plans it anew each time; with a name (the same
 * one for the same SQL text on every connection) each connection parses it once and then only binds
 * and executes. If a migration run by another process changes a table's columns, a prepared
 * `select *` on an older connection fails once with 0A000; that text then runs unnamed from there on.
 *
 * With `queryTimeoutMs`, a statement that gets no answer in that time fails with DatabaseTimeoutError
 * (the server's own statement_timeout, a little shorter, cancels a slow statement on a live server;
 * this one covers a server that answers nothing at all). The connection is then out of step with its
 * server: every further query on it fails at once, and it is destroyed when released, not pooled.
 */
function preparingPool(pool: pg.Pool, queryTimeoutMs: number | undefined, counter: { sent: number }): PostgresPool {
  const names = new Map<string, string | null>();
  const wrapped = new WeakMap<pg.PoolClient, PostgresPoolClient>();
  const nameOf = (text: string): string | null => {
    const known = names.get(text);
    if (known !== undefined) return known;
    if (names.size >= PG_NAMED_STATEMENTS) return null;
    const name = `signet_${names.size}`;
    names.set(text, name);
    return name;
  };
  const wrap = (client: pg.PoolClient): PostgresPoolClient => {
    let broken: DatabaseTimeoutError | undefined;
    const send = async (text: string, values: unknown[]): Promise<pg.QueryResult> => {
      // Statements without parameters (BEGIN, COMMIT, DDL, a migration's several statements) keep the
      // simple protocol: nothing to bind, and a prepared statement holds one command only.
      const name = values.length === 0 ? null : nameOf(text);
      if (name === null) return client.query(text, values);
      try {
        return await client.query({ name, text, values });
      } catch (error) {
        if (!isStalePlan(error)) throw error;
        names.set(text, null);
        return client.query(text, values);
      }
    };
    const run = async (text: string, values: unknown[]): Promise<pg.QueryResult> => {
      if (broken) throw broken;
      counter.sent++;
      if (!queryTimeoutMs) return send(text, values);
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject((broken = new DatabaseTimeoutError(queryTimeoutMs))), queryTimeoutMs);
      });
      const answer = send(text, values);
      answer.catch(() => {}); // if the timeout wins, the late failure of the abandoned query is nobody's
      try {
        return await Promise.race([answer, timeout]);
      } finally {
        clearTimeout(timer);
      }
    };
    function query<R>(sql: string, parameters: ReadonlyArray<unknown>): Promise<PostgresQueryResult<R>>;
    function query<R>(cursor: PostgresCursor<R>): PostgresCursor<R>;
    function query<R>(sqlOrCursor: string | PostgresCursor<R>, parameters: ReadonlyArray<unknown> = []): Promise<PostgresQueryResult<R>> | PostgresCursor<R> {
      // A cursor (Kysely's streaming) goes through as it is.
      if (typeof sqlOrCursor !== 'string') return client.query(sqlOrCursor as unknown as pg.Submittable) as unknown as PostgresCursor<R>;
      return run(sqlOrCursor, [...parameters]) as unknown as Promise<PostgresQueryResult<R>>;
    }
    // A connection that timed out is destroyed (release with an error), never handed out again.
    return { query, release: () => client.release(broken) };
  };
  return {
    async connect() {
      const client = await pool.connect();
      let wrapper = wrapped.get(client);
      if (!wrapper) wrapped.set(client, (wrapper = wrap(client)));
      return wrapper;
    },
    end: () => pool.end(),
  };
}
