// Transactions retried on PostgreSQL's transient failures, when a retry cannot do anything twice.
//
// Retried: a serialization failure (40001) or a deadlock (40P01) — PostgreSQL has rolled the whole
// transaction back, wherever it happened, COMMIT included — and a lost connection (reset, terminated
// backend, "Connection terminated unexpectedly") *before* COMMIT was sent: a transaction that never
// committed left nothing behind. A connection lost during COMMIT is not retried: the commit may have
// happened, and the caller must not act as if it had not (the request fails; the client may ask again).
//
// Every rule that must hold once holds inside the transaction (a code is redeemed, a refresh token
// rotated, by one conditional UPDATE): a retry after a rollback runs that UPDATE again, and if another
// request won meanwhile it changes no row — so a retry can never issue twice.
import type { Db } from './database.ts';
import { isConnectionLost, isRolledBackByServer } from './errors.ts';

/** Attempts in all, the first included. */
export const TRANSIENT_ATTEMPTS = 3;

/**
 * The connection was lost while COMMIT was on its way: the transaction may or may not have committed.
 * SQLSTATE 08007 (transaction_resolution_unknown), so it is answered as the database being unavailable.
 */
export class CommitOutcomeUnknownError extends Error {
  readonly code = '08007';
  constructor(cause: unknown) {
    super('the database connection was lost during COMMIT; whether the transaction committed is unknown', { cause });
    this.name = 'CommitOutcomeUnknownError';
  }
}

export type TransientRetryOptions = {
  attempts?: number;
  /** waits before a retry, so two deadlocked transactions do not meet again at once */
  backoffMs?: (attempt: number) => number;
  /** told of each retry, before it (for a log line or a counter) */
  onRetry?: (error: unknown, attempt: number) => void | Promise<void>;
};

const defaultBackoff = (attempt: number) => 5 * 2 ** attempt + Math.random() * 10;

/**
 * Runs `work` in a transaction; on a transient failure, in a new transaction, up to
 * TRANSIENT_ATTEMPTS times in all. What `work` does must be undone by a rollback: database writes
 * only, nothing sent anywhere.
 */
export async function withTransientRetry<T>(db: Db, work: (trx: Db) => Promise<T>, options: TransientRetryOptions = {}): Promise<T> {
  const attempts = options.attempts ?? TRANSIENT_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    // What work itself threw, if anything: when the connection is gone, Kysely's ROLLBACK fails too
    // and its error replaces the one that caused it.
    let workError: unknown;
    let workDone = false;
    try {
      return await db.transaction().execute(async (trx) => {
        try {
          const result = await work(trx);
          workDone = true;
          return result;
        } catch (error) {
          workError = error;
          throw error;
        }
      });
    } catch (error) {
      const cause = workError ?? error;
      if (workDone && !isRolledBackByServer(error) && isConnectionLost(error)) throw new CommitOutcomeUnknownError(error);
      const retryable = isRolledBackByServer(cause) || isRolledBackByServer(error) || (!workDone && isConnectionLost(cause));
      if (!retryable || attempt >= attempts) throw cause;
      await options.onRetry?.(cause, attempt);
      await new Promise((resolve) => setTimeout(resolve, (options.backoffMs ?? defaultBackoff)(attempt)));
    }
  }
}

/**
 * One statement that is atomic on its own (a data-modifying CTE on PostgreSQL, in autocommit): no
 * BEGIN and COMMIT round trips. Retried like a transaction on a serialization failure or a deadlock
 * (the server rolled it back). A connection lost under it leaves the outcome unknown — the statement
 * may have committed — so it is run again only when `idempotent`: the statement carries the values it
 * writes (the new tokens' hashes), so whichever attempt commits writes the same rows, and the caller,
 * told `lostConnection`, looks for them when the retry changed nothing. Otherwise a lost connection is
 * CommitOutcomeUnknownError.
 */
export async function runAtomicStatement<T>(run: () => Promise<T>, options: TransientRetryOptions & { idempotent?: boolean } = {}): Promise<{ value: T; lostConnection: boolean }> {
  const attempts = options.attempts ?? TRANSIENT_ATTEMPTS;
  let lostConnection = false;
  for (let attempt = 1; ; attempt++) {
    try {
      return { value: await run(), lostConnection };
    } catch (error) {
      // Refused: no connection, so nothing was sent (the error goes up as it is, unavailable).
      const refused = (error as { code?: unknown } | null)?.code === 'ECONNREFUSED';
      const lost = isConnectionLost(error) && !refused;
      if (lost && !options.idempotent) throw new CommitOutcomeUnknownError(error);
      if (!(lost || isRolledBackByServer(error)) || attempt >= attempts) throw lost || lostConnection ? new CommitOutcomeUnknownError(error) : error;
      if (lost) lostConnection = true;
      await options.onRetry?.(error, attempt);
      await new Promise((resolve) => setTimeout(resolve, (options.backoffMs ?? defaultBackoff)(attempt)));
    }
  }
}
