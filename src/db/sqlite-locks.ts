// SQLite lock contention: another process (a second server, `signet worker`, `signet migrate`) holding
// the write lock. Waited for with timers, never SQLite's busy handler (which sleeps on the event loop);
// one episode of contention is shared by every request of the process. Split from database.ts.
import type { CompiledQuery, DatabaseConnection, QueryResult } from 'kysely';
import { isSqliteBusy } from './errors.ts';

/** What the patient connection reads of the tracked better-sqlite3 connection (sqlite-transactions.ts). */
export type LockedConnectionState = { readonly inTransaction: boolean; readonly contention: LockContention };

const LOCK_RETRY_MAX_MS = 50;
/** A lock found free again, or no attempt at it for this long, ends an episode of contention. */
const CONTENTION_GAP_MS = 1_000;

/**
 * One episode of another process holding the write lock, shared by every request of this process.
 * Requests queue for the one connection, so a request that waited behind a waiter must not start a
 * lock wait of its own from zero: each gives up when the episode is older than the limit, and the
 * whole queue answers 503 within about SIGNET_DATABASE_TIMEOUT_SECONDS, not a multiple of it.
 */
export class LockContention {
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
export class PatientSqliteConnection implements DatabaseConnection {
  private readonly inner: DatabaseConnection;
  private readonly tracked: LockedConnectionState;
  private readonly deadline: number;
  private readonly lockWaitMs: number;

  constructor(inner: DatabaseConnection, tracked: LockedConnectionState, deadline: number, lockWaitMs: number) {
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

