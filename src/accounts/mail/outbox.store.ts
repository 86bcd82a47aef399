// The only place with queries on the account-mail outbox. Claimed as notification deliveries are, by
// the lease rules of db/leases.ts: one conditional UPDATE takes a due message under a lease, and every
// later change is conditional on still holding it, so several workers never send one twice.
import type { Db, Dialect } from '../../db/database.ts';
import { claimDueRow, releaseHeldForRetry, renewHeldLease, settleHeld, type LeasedQueue } from '../../db/leases.ts';
import type { MailOutboxTable } from '../../db/schema.ts';

export type OutboxRow = MailOutboxTable;

type Held = { id: string; owner: string; now: number };

const OUTBOX: LeasedQueue = { table: 'mail_outbox', id: 'id' };

export async function insertMail(db: Db, row: OutboxRow): Promise<void> {
  await db.insertInto('mail_outbox').values(row).execute();
}

/** Claims the message that has waited longest (pending, due, not under a live lease); its attempt is counted now. */
export function claimDueMail(db: Db, dialect: Dialect, input: { owner: string; now: number; leaseMs: number }): Promise<OutboxRow | undefined> {
  return claimDueRow<OutboxRow>(db, dialect, OUTBOX, input);
}

export function renewLease(db: Db, input: Held & { leaseMs: number }): Promise<boolean> {
  return renewHeldLease(db, OUTBOX.table, { ...held(input), leaseMs: input.leaseMs });
}

export function settleMail(db: Db, input: Held & { status: 'sent' | 'failed' | 'suppressed'; reason: string | null }): Promise<boolean> {
  return settleHeld(db, OUTBOX.table, { ...held(input), status: input.status, reason: input.reason });
}

export function scheduleRetry(db: Db, input: Held & { retryAt: number; reason: string }): Promise<boolean> {
  return releaseHeldForRetry(db, OUTBOX.table, { ...held(input), retryAt: input.retryAt, reason: input.reason });
}

function held(input: Held) {
  return { key: { id: input.id }, owner: input.owner, now: input.now };
}

/** Removes settled messages last changed before `before`. */
export async function deleteSettledBefore(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('mail_outbox').where('status', '!=', 'pending').where('updated_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** What the operators' outbox filters by: a status, or `retried` (sent more than once, or waiting to be tried again). */
export type OutboxFilter = { status?: 'pending' | 'sent' | 'failed' | 'suppressed' | undefined; retried?: boolean | undefined };

/** Account mail for the console's outbox page, newest first, created before `before` when given. Never a link token (the outbox holds none). */
export function listForOperators(db: Db, filter: OutboxFilter, before: number | undefined, limit: number) {
  let q = db.selectFrom('mail_outbox').select(['id', 'kind', 'sub', 'to_address', 'status', 'reason', 'attempts', 'next_attempt_at', 'created_at', 'updated_at']);
  if (filter.status !== undefined) q = q.where('status', '=', filter.status);
  if (filter.retried) q = q.where((eb) => eb.or([eb('attempts', '>', 1), eb.and([eb('status', '=', 'pending'), eb('reason', 'is not', null)])]));
  if (before !== undefined) q = q.where('created_at', '<', before);
  return q.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute();
}

/** Account mail by status (the outbox page's counts). */
export async function countByStatus(db: Db): Promise<Map<string, number>> {
  const rows = await db.selectFrom('mail_outbox').select(['status', (eb) => eb.fn.countAll<number | string | bigint>().as('n')]).groupBy('status').execute();
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}
