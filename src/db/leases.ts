// Work shared by several workers (on several hosts) through leases, for the queues whose rows are
// `pending` until settled: the account-mail outbox (accounts/mail/outbox.store.ts) and notification
// deliveries (notifications/deliveries.store.ts). One conditional UPDATE claims a due row under a lease,
// and every later change is conditional on still holding it, so several workers never work on one row
// at once while they live; a worker that dies stops renewing, the lease expires, and another takes it.
// Each store keeps its own names and arguments and passes its table and key to these.
import { sql, type RawBuilder } from 'kysely';
import type { Db, Dialect } from './database.ts';

/** The tables with the columns these statements use: status, attempts, next_attempt_at, lease_owner, lease_expires_at, updated_at. */
export type LeasedTable = 'mail_outbox' | 'notification_deliveries';

/** A queue: its table, the column naming a row within `scope`, and the columns fixed for the whole queue (a channel). */
export type LeasedQueue = { table: LeasedTable; id: string; scope?: Record<string, string> };

/** The row a worker holds: its key columns (all of them, in that order), the lease owner, and the time now. */
export type HeldRow = { key: Record<string, string>; owner: string; now: number };

/**
 * Claims the row that has waited longest: pending, due (`next_attempt_at <= now`) and not held under a
 * live lease. It stays `pending` while held (the lease says who is working on it) and its attempt is
 * counted now, so a worker that dies mid-work has used that attempt. One statement: on PostgreSQL the
 * inner SELECT skips rows other workers hold (`FOR UPDATE SKIP LOCKED`) and the outer WHERE repeats the
 * condition; SQLite runs a statement under its single writer lock.
 */
export async function claimDueRow<Row>(db: Db, dialect: Dialect, queue: LeasedQueue, input: { owner: string; now: number; leaseMs: number }): Promise<Row | undefined> {
  const { owner, now, leaseMs } = input;
  const table = sql.table(queue.table);
  const id = sql.ref(queue.id);
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const claimable = sql`status = 'pending' and next_attempt_at <= ${now} and (lease_expires_at is null or lease_expires_at < ${now})`;
  const scope = equalities(queue.scope ?? {});
  const result = await sql<Row>`
    update ${table}
       set lease_owner = ${owner}, lease_expires_at = ${now + leaseMs}, attempts = attempts + 1, updated_at = ${now}
     where ${all([
       ...scope,
       sql`${id} = (
         select ${id} from ${table}
          where ${all([...scope, claimable])}
          order by next_attempt_at, ${id}
          limit 1
          ${lock})`,
       claimable,
     ])}
    returning *`.execute(db);
  return result.rows[0];
}

/** Extends a held lease (a slow mail server). False when this worker no longer holds it. */
export function renewHeldLease(db: Db, table: LeasedTable, held: HeldRow & { leaseMs: number }): Promise<boolean> {
  return updateHeld(db, table, held, { lease_expires_at: held.now + held.leaseMs, updated_at: held.now });
}

/** pending (held) → sent | failed | suppressed, with the reason for the last two. False when the lease was lost. */
export function settleHeld(db: Db, table: LeasedTable, held: HeldRow & { status: 'sent' | 'failed' | 'suppressed'; reason: string | null }): Promise<boolean> {
  return updateHeld(db, table, held, { status: held.status, reason: held.reason, next_attempt_at: null, lease_owner: null, lease_expires_at: null, updated_at: held.now });
}

/** pending (held) → pending, released and due again at `retryAt`; `reason` keeps what went wrong this time. */
export function releaseHeldForRetry(db: Db, table: LeasedTable, held: HeldRow & { retryAt: number; reason: string }): Promise<boolean> {
  return updateHeld(db, table, held, { reason: held.reason, next_attempt_at: held.retryAt, lease_owner: null, lease_expires_at: null, updated_at: held.now });
}

/** Sets `values` on the one row this worker still holds under its lease; false when it holds it no more. */
async function updateHeld(db: Db, table: LeasedTable, held: HeldRow, values: Record<string, string | number | null>): Promise<boolean> {
  const assignments = Object.entries(values).map(([column, value]) => sql`${sql.ref(column)} = ${value}`);
  const stillHeld = [...equalities(held.key), sql`lease_owner = ${held.owner}`, sql`status = 'pending'`];
  const result = await sql`update ${sql.table(table)} set ${sql.join(assignments)} where ${all(stillHeld)}`.execute(db);
  return (result.numAffectedRows ?? 0n) > 0n;
}

function equalities(columns: Record<string, string>): RawBuilder<unknown>[] {
  return Object.entries(columns).map(([column, value]) => sql`${sql.ref(column)} = ${value}`);
}

function all(conditions: RawBuilder<unknown>[]): RawBuilder<unknown> {
  return sql.join(conditions, sql` and `);
}
