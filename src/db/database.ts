// One Kysely instance per dialect: SQLite (better-sqlite3, WAL, the embedded default) or PostgreSQL (pg).
import { chmodSync, mkdirSync } from 'node:fs';
import { open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import SQLite from 'better-sqlite3';
import { createRequire } from 'node:module';
import type pg from 'pg';
import {
  CompiledQuery,
  Kysely,
  Migrator,
  PostgresAdapter,
  PostgresDialect,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  sql,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  type Migration,
  type MigrationProvider,
  type PostgresCursor,
  type PostgresPool,
  type PostgresPoolClient,
  type PostgresQueryResult,
  type SqliteDatabase,
  type SqliteStatement,
} from 'kysely';
import type { Settings } from '../config/settings.ts';
import { isDatabaseUnavailable, isSqliteBusy } from './errors.ts';
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
// SQLite: prepared statements kept by SQL text, and durable commits without blocking the event loop.

/** WAL size, in pages, at which a commit checkpoints (see openDatabase). */
const WAL_AUTOCHECKPOINT_PAGES = 4000;

/** How many prepared statements one connection keeps (least recently used goes first). */
const STATEMENT_CACHE_SIZE = 200;

/**
 * Makes commits durable with one fsync for many of them, on libuv's thread pool.
 *
 * With synchronous=FULL, SQLite fsyncs the WAL inside every COMMIT, on the event loop: the whole
 * process stops for each fsync (milliseconds on a networked disk) and every commit pays for its own.
 * Instead SQLite runs with synchronous=NORMAL (a COMMIT appends the transaction's frames to the WAL and
 * returns), and the driver fsyncs the WAL before the work that wrote may return: a transaction's
 * `execute()` resolves, and a single write statement returns, only once its commit is on disk. Commits
 * made while an fsync is in flight share the next one. Why this is as durable as FULL for everything
 * acknowledged:
 * - recovery after power loss replays the WAL up to its last valid commit frame; the fsync has put
 *   every frame of every acknowledged commit on disk;
 * - SQLite still syncs the WAL header when it restarts the WAL, and the WAL and the database file at
 *   every checkpoint (NORMAL keeps those syncs);
 * - the directory entry of the WAL file is fsynced once, before the first commit is acknowledged.
 * The difference: a request may *read* a commit whose fsync is still in flight, before its writer has
 * been answered. Power loss at that moment loses the commit, which nobody was told had happened; what
 * the reader did with it was read-only (a write of its own waits for an fsync that covers both).
 * After a failed fsync every later write fails: the kernel may have dropped the pages it could not write.
 */
class GroupCommit {
  /** commits that wrote something, counted in order */
  committed = 0;
  /** how many of them are known to be on disk */
  private durable = 0;
  private inFlight: Promise<void> | undefined;
  private failure: Error | undefined;
  private wal: FileHandle | undefined;
  private directorySynced = false;
  private readonly walFile: string;
  private readonly directory: string;

  constructor(walFile: string, directory: string) {
    this.walFile = walFile;
    this.directory = directory;
  }

  /** Resolves once commit number `target` (and every one before it) is on disk. */
  async syncThrough(target: number): Promise<void> {
    while (this.durable < target) {
      if (this.failure) throw this.failure;
      if (!this.inFlight) {
        const upTo = this.committed;
        this.inFlight = this.sync()
          .then(
            () => {
              this.durable = Math.max(this.durable, upTo);
            },
            (error: unknown) => {
              this.failure = new Error(`fsync of ${this.walFile} failed; writes are refused until the process restarts`, { cause: error });
            },
          )
          .finally(() => {
            this.inFlight = undefined;
          });
      }
      await this.inFlight;
    }
  }

  private async sync(): Promise<void> {
    // SQLite keeps the WAL file while any connection is open, so one handle stays valid until close().
    this.wal ??= await open(this.walFile, 'r');
    await this.wal.datasync();
    if (!this.directorySynced) {
      const directory = await open(this.directory, 'r');
      try {
        await directory.sync();
      } finally {
        await directory.close();
      }
      this.directorySynced = true;
    }
  }

  async close(): Promise<void> {
    await this.inFlight;
    await this.wal?.close();
    this.wal = undefined;
  }
}

type TrackedStatement = SqliteStatement & { used: boolean };

/**
 * The better-sqlite3 connection as Kysely's driver sees it: `prepare` answers from a bounded cache,
 * and every statement reports whether it ended a transaction (or an autocommit statement) that wrote.
 */
class TrackedSqlite implements SqliteDatabase {
  /** set when a commit that wrote happened since the connection was last acquired */
  wroteSinceAcquire = false;
  /** another process holding the write lock, as this process's requests have found it */
  readonly contention = new LockContention();
  readonly commits: GroupCommit | undefined;
  private readonly sqlite: SQLite.Database;
  private readonly statements = new Map<string, TrackedStatement>();
  private pendingWrite = false;

  constructor(sqlite: SQLite.Database, commits: GroupCommit | undefined) {
    this.sqlite = sqlite;
    this.commits = commits;
  }

  prepare(sqlText: string): SqliteStatement {
    const cached = this.statements.get(sqlText);
    if (cached) {
      // One lookup per hit (Kysely hands over a new string each time, so every lookup hashes it anew);
      // recency is a flag, read at eviction.
      cached.used = true;
      return cached;
    }
    const statement = this.track(this.sqlite.prepare(sqlText), sqlText);
    this.statements.set(sqlText, statement);
    if (this.statements.size > STATEMENT_CACHE_SIZE) this.evict();
    return statement;
  }

  /** Least recently used, approximately (second chance): the oldest entry not used since it was last passed over. */
  private evict(): void {
    for (const [sqlText, statement] of this.statements) {
      this.statements.delete(sqlText);
      if (!statement.used) return;
      statement.used = false;
      this.statements.set(sqlText, statement);
    }
  }

  /** Whether the connection is inside a transaction (SQLite may have ended one itself after an error). */
  get inTransaction(): boolean {
    return this.sqlite.inTransaction;
  }

  close(): void {
    this.statements.clear();
    this.sqlite.close();
  }

  private track(statement: SQLite.Statement<unknown[]>, sqlText: string): TrackedStatement {
    // Transaction control (BEGIN, COMMIT, SAVEPOINT …) is read-only to SQLite; writes are not.
    const mayWrite = !statement.readonly;
    const isDml = /^\s*(insert|update|delete|replace)\b/i.test(sqlText);
    const isRollback = /^\s*rollback\s*;?\s*$/i.test(sqlText);
    const ended = (wrote: boolean, failed: boolean) => this.afterStatement(wrote, failed || isRollback);
    return {
      used: false,
      reader: statement.reader,
      all: (parameters) => {
        let rows: unknown[];
        try {
          rows = statement.all(parameters);
        } catch (error) {
          ended(false, true);
          throw error;
        }
        // … RETURNING: a row back is a row written.
        ended(mayWrite && rows.length > 0, false);
        return rows;
      },
      run: (parameters) => {
        let result: SQLite.RunResult;
        try {
          result = statement.run(parameters);
        } catch (error) {
          ended(false, true);
          throw error;
        }
        // DML that matched no row wrote nothing; anything else that may write (DDL) is taken as a write.
        ended(mayWrite && (!isDml || Number(result.changes) > 0), false);
        return result;
      },
      iterate: (parameters) => statement.iterate(parameters),
    };
  }

  /** Counts a commit when the connection has left its transaction (or autocommit statement) with writes in it. */
  private afterStatement(wrote: boolean, endedWithoutCommit: boolean): void {
    if (wrote) this.pendingWrite = true;
    if (this.sqlite.inTransaction) return;
    if (this.pendingWrite && !endedWithoutCommit && this.commits) {
      this.commits.committed++;
      this.wroteSinceAcquire = true;
    }
    this.pendingWrite = false;
  }
}

/** Waits between attempts at a lock another process holds: short at first, never longer than this. */
const LOCK_RETRY_MAX_MS = 50;
/** A lock found free again, or no attempt at it for this long, ends an episode of contention. */
const CONTENTION_GAP_MS = 1_000;

/**
 * One episode of another process holding the write lock, shared by every request of this process.
 * Requests queue for the one connection, so a request that waited behind a waiter must not start a
 * lock wait of its own from zero: each gives up when the episode is older than the limit, and the
 * whole queue answers 503 within about SIGNET_DATABASE_TIMEOUT_SECONDS, not a multiple of it.
 */
class LockContention {
  private since: number | undefined;
  private lastSeen = 0;

  /** A statement found the lock taken: when did this episode begin? */
  busy(now: number): number {
    if (this.since === undefined || now - this.lastSeen > CONTENTION_GAP_MS) this.since = now;
    this.lastSeen = now;
    return this.since;
  }

  /** The lock was taken: the episode is over. */
  over(): void {
    this.since = undefined;
  }
}

/**
 * Kysely's connection, waiting for a lock another process holds with timers rather than SQLite's busy
 * handler (which sleeps on the event loop). A statement that found the database locked is tried again
 * only when it ran on its own — BEGIN, or a statement outside any transaction — since nothing of it
 * happened; one inside a transaction fails, and its transaction with it. SQLITE_BUSY goes up, and is
 * answered 503, past the deadline (counted from when the request asked for the connection) or once
 * the episode of contention (LockContention) is older than the lock wait, whichever comes first.
 */
class PatientSqliteConnection implements DatabaseConnection {
  private readonly inner: DatabaseConnection;
  private readonly tracked: TrackedSqlite;
  private readonly deadline: number;
  private readonly lockWaitMs: number;

  constructor(inner: DatabaseConnection, tracked: TrackedSqlite, deadline: number, lockWaitMs: number) {
    this.inner = inner;
    this.tracked = tracked;
    this.deadline = deadline;
    this.lockWaitMs = lockWaitMs;
  }

  async executeQuery<R>(query: CompiledQuery): Promise<QueryResult<R>> {
    for (let attempt = 0; ; attempt++) {
      const alone = !this.tracked.inTransaction;
      try {
        const result = await this.inner.executeQuery<R>(query);
        if (attempt > 0 || query.sql === 'begin immediate') this.tracked.contention.over();
        return result;
      } catch (error) {
        if (!alone || !isSqliteBusy(error)) throw error;
        const now = Date.now();
        const giveUpAt = Math.min(this.deadline, this.tracked.contention.busy(now) + this.lockWaitMs);
        if (now >= giveUpAt) throw error;
        const wait = Math.min(LOCK_RETRY_MAX_MS, 2 ** attempt, Math.max(1, giveUpAt - now));
        await new Promise((resolve) => setTimeout(resolve, wait));
      }
    }
  }

  streamQuery<R>(query: CompiledQuery, chunkSize?: number): AsyncIterableIterator<QueryResult<R>> {
    return this.inner.streamQuery<R>(query, chunkSize);
  }
}

/** Kysely's SQLite driver, waiting for the group fsync after the connection is released to the next caller. */
class DurableSqliteDriver extends SqliteDriver {
  private readonly tracked: TrackedSqlite;
  private readonly lockWaitMs: number;

  constructor(tracked: TrackedSqlite, lockWaitMs: number) {
    super({ database: tracked });
    this.tracked = tracked;
    this.lockWaitMs = lockWaitMs;
  }

  override async acquireConnection(): Promise<DatabaseConnection> {
    const deadline = Date.now() + this.lockWaitMs;
    const connection = await super.acquireConnection();
    this.tracked.wroteSinceAcquire = false;
    return new PatientSqliteConnection(connection, this.tracked, deadline, this.lockWaitMs);
  }

  /**
   * BEGIN IMMEDIATE: a transaction takes the write lock when it starts, where waiting for it can be
   * retried, rather than at its first write, where a lock taken meanwhile by another process fails
   * it (SQLITE_BUSY_SNAPSHOT) with work already done.
   */
  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }

  /**
   * After some errors (SQLITE_FULL, SQLITE_IOERR, SQLITE_NOMEM) SQLite has already rolled the
   * transaction back itself; a ROLLBACK then fails ("no transaction is active"), and that error would
   * hide the one that mattered.
   */
  override async rollbackTransaction(connection: DatabaseConnection): Promise<void> {
    if (!this.tracked.inTransaction) return;
    await super.rollbackTransaction(connection);
  }

  override async releaseConnection(): Promise<void> {
    const { commits, wroteSinceAcquire } = this.tracked;
    const upTo = commits?.committed ?? 0;
    this.tracked.wroteSinceAcquire = false;
    // Release first: the next transaction runs (and commits into the next group) while this one waits.
    await super.releaseConnection();
    if (wroteSinceAcquire && commits) await commits.syncThrough(upTo);
  }

  override async destroy(): Promise<void> {
    await super.destroy();
    await this.tracked.commits?.close();
  }
}

class DurableSqliteDialect extends SqliteDialect {
  private readonly tracked: TrackedSqlite;
  private readonly lockWaitMs: number;

  constructor(tracked: TrackedSqlite, lockWaitMs: number) {
    super({ database: tracked });
    this.tracked = tracked;
    this.lockWaitMs = lockWaitMs;
  }

  override createDriver(): Driver {
    return new DurableSqliteDriver(this.tracked, this.lockWaitMs);
  }
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
