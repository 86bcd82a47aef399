// SQLite transactions and durable commits: the better-sqlite3 connection with its statement cache
// (TrackedSqlite), one fsync of the WAL for many commits off the event loop (GroupCommit), and Kysely's
// driver that begins transactions IMMEDIATE and answers a write only once its commit is on disk.
// Split from database.ts, which sets the dialects up.
import { open, type FileHandle } from 'node:fs/promises';
import { CompiledQuery, SqliteDialect, SqliteDriver, type DatabaseConnection, type Driver, type QueryResult, type SqliteDatabase, type SqliteStatement } from 'kysely';
import type SQLite from 'better-sqlite3';
import { isSqliteBusy } from './errors.ts';
import { LockContention, PatientSqliteConnection } from './sqlite-locks.ts';

/** WAL size, in pages, at which a commit checkpoints (see openDatabase). */
export const WAL_AUTOCHECKPOINT_PAGES = 4000;

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
export class GroupCommit {
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
export class TrackedSqlite implements SqliteDatabase {
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

  /**
   * Runs one statement now, on this connection, as Kysely's SQLite driver would (the same result
   * shape), but without its connection queue: for the hot paths (compiled-query.ts executeCompiled).
   * Only when that is what the queue would have done — `owner`: the caller runs inside the open
   * transaction (a transaction's handle), so the statement is part of it; otherwise no transaction
   * may be open, since one belongs to another request, held across its awaits, and a statement run
   * now would become part of it (or read what it has not committed). Undefined when it cannot run
   * now, and nothing happened: another request's transaction is open; another process holds the
   * write lock (SQLITE_BUSY on a statement alone, which PatientSqliteConnection waits out); a
   * streamed read holds the connection. The caller then goes through Kysely, which waits its turn.
   * `commit` is the number of the commit an autocommit write made: the caller waits for
   * commits.syncThrough(commit) before answering, as DurableSqliteDriver.releaseConnection does.
   */
  runNow<Row>(sqlText: string, parameters: readonly unknown[], owner: boolean): { result: QueryResult<Row>; commit: number | undefined } | undefined {
    // A closed handle answers as Kysely's path does.
    if (!this.sqlite.open) return undefined;
    const alone = !this.sqlite.inTransaction;
    if (!alone && !owner) return undefined;
    const before = this.commits?.committed ?? 0;
    let result: QueryResult<Row>;
    try {
      const statement = this.prepare(sqlText);
      if (statement.reader) {
        result = { rows: statement.all(parameters) as Row[] };
      } else {
        const { changes, lastInsertRowid } = statement.run(parameters);
        result = {
          numAffectedRows: changes !== undefined && changes !== null ? BigInt(changes) : undefined,
          insertId: lastInsertRowid !== undefined && lastInsertRowid !== null ? BigInt(lastInsertRowid) : undefined,
          rows: [],
        };
      }
    } catch (error) {
      if (alone && isSqliteBusy(error)) return undefined;
      // better-sqlite3 refuses any statement while an iterator (Kysely's streamQuery) is open.
      if (error instanceof TypeError && /busy executing a query/.test(error.message)) return undefined;
      throw error;
    }
    const after = this.commits?.committed ?? 0;
    return { result, commit: alone && after > before ? after : undefined };
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

export class DurableSqliteDialect extends SqliteDialect {
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

