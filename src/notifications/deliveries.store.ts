// Queries on notification deliveries for the workers that send them (e-mail). Like tasks, a delivery
// is claimed under a lease with one conditional UPDATE, and every later change is conditional on still
// holding that lease, so several workers on several hosts never send one delivery twice while they
// live; a worker that dies stops renewing, the lease expires, and another worker takes it.
import { sql, type UpdateQueryBuilder, type UpdateResult } from 'kysely';
import type { Db, Dialect } from '../db/database.ts';
import type { Database, NotificationDeliveriesTable, NotificationsTable } from '../db/schema.ts';

export type DeliveryRow = NotificationDeliveriesTable;

type Held = { notificationId: string; channel: string; owner: string; now: number };

/**
 * Claims the delivery on `channel` that has waited longest: pending, due (`next_attempt_at <= now`) and
 * not held under a live lease. It stays `pending` while held (the lease says who is working on it) and
 * its attempt is counted now, so a worker that dies mid-send has used that attempt. One statement: on
 * PostgreSQL the inner SELECT skips rows other workers hold (`FOR UPDATE SKIP LOCKED`) and the outer
 * WHERE repeats the condition; SQLite runs a statement under its single writer lock.
 */
export async function claimDueDelivery(db: Db, dialect: Dialect, input: { channel: string; owner: string; now: number; leaseMs: number }): Promise<DeliveryRow | undefined> {
  const { channel, owner, now, leaseMs } = input;
  const lock = dialect === 'postgres' ? sql`for update skip locked` : sql``;
  const claimable = sql`status = 'pending' and next_attempt_at <= ${now} and (lease_expires_at is null or lease_expires_at < ${now})`;
  const result = await sql<DeliveryRow>`
    update notification_deliveries
       set lease_owner = ${owner}, lease_expires_at = ${now + leaseMs}, attempts = attempts + 1, updated_at = ${now}
     where channel = ${channel}
       and notification_id = (
         select notification_id from notification_deliveries
          where channel = ${channel} and ${claimable}
          order by next_attempt_at, notification_id
          limit 1
          ${lock})
       and ${claimable}
    returning *`.execute(db);
  return result.rows[0];
}

/** Extends a held lease (a slow mail server). False when this worker no longer holds it. */
export async function renewLease(db: Db, input: Held & { leaseMs: number }): Promise<boolean> {
  const result = await held(db.updateTable('notification_deliveries').set({ lease_expires_at: input.now + input.leaseMs, updated_at: input.now }), input).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** pending (held) → sent | failed | suppressed, with the reason for the last two. False when the lease was lost. */
export async function settleDelivery(db: Db, input: Held & { status: 'sent' | 'failed' | 'suppressed'; reason: string | null }): Promise<boolean> {
  const result = await held(
    db.updateTable('notification_deliveries').set({ status: input.status, reason: input.reason, next_attempt_at: null, lease_owner: null, lease_expires_at: null, updated_at: input.now }),
    input,
  ).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** pending (held) → pending, released and due again at `retryAt`; `reason` keeps what went wrong this time. */
export async function scheduleRetry(db: Db, input: Held & { retryAt: number; reason: string }): Promise<boolean> {
  const result = await held(
    db.updateTable('notification_deliveries').set({ reason: input.reason, next_attempt_at: input.retryAt, lease_owner: null, lease_expires_at: null, updated_at: input.now }),
    input,
  ).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

type DeliveryUpdate = UpdateQueryBuilder<Database, 'notification_deliveries', 'notification_deliveries', UpdateResult>;

/** Narrows an update to the one delivery this worker still holds under its lease. */
function held(query: DeliveryUpdate, input: Held): DeliveryUpdate {
  return query.where('notification_id', '=', input.notificationId).where('channel', '=', input.channel).where('lease_owner', '=', input.owner).where('status', '=', 'pending');
}

/** The notification a delivery belongs to. */
export async function notificationOf(db: Db, id: string): Promise<NotificationsTable | undefined> {
  return db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst();
}
