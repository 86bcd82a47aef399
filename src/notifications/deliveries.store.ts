// Queries on notification deliveries for the workers that send them (e-mail). Like tasks, a delivery
// is claimed under a lease with one conditional UPDATE, and every later change is conditional on still
// holding that lease, so several workers on several hosts never send one delivery twice while they
// live; a worker that dies stops renewing, the lease expires, and another worker takes it.
import type { Db, Dialect } from '../db/database.ts';
import { claimDueRow, releaseHeldForRetry, renewHeldLease, settleHeld, type LeasedQueue } from '../db/leases.ts';
import type { NotificationDeliveriesTable, NotificationsTable } from '../db/schema.ts';

export type DeliveryRow = NotificationDeliveriesTable;

type Held = { notificationId: string; channel: string; owner: string; now: number };

/**
 * Claims the delivery on `channel` that has waited longest: pending, due and not held under a live lease
 * (db/leases.ts says how). Its attempt is counted now, so a worker that dies mid-send has used that attempt.
 */
export function claimDueDelivery(db: Db, dialect: Dialect, input: { channel: string; owner: string; now: number; leaseMs: number }): Promise<DeliveryRow | undefined> {
  const { channel, ...claim } = input;
  return claimDueRow<DeliveryRow>(db, dialect, onChannel(channel), claim);
}

/** Extends a held lease (a slow mail server). False when this worker no longer holds it. */
export function renewLease(db: Db, input: Held & { leaseMs: number }): Promise<boolean> {
  return renewHeldLease(db, 'notification_deliveries', { ...held(input), leaseMs: input.leaseMs });
}

/** pending (held) → sent | failed | suppressed, with the reason for the last two. False when the lease was lost. */
export function settleDelivery(db: Db, input: Held & { status: 'sent' | 'failed' | 'suppressed'; reason: string | null }): Promise<boolean> {
  return settleHeld(db, 'notification_deliveries', { ...held(input), status: input.status, reason: input.reason });
}

/** pending (held) → pending, released and due again at `retryAt`; `reason` keeps what went wrong this time. */
export function scheduleRetry(db: Db, input: Held & { retryAt: number; reason: string }): Promise<boolean> {
  return releaseHeldForRetry(db, 'notification_deliveries', { ...held(input), retryAt: input.retryAt, reason: input.reason });
}

/** The deliveries of one channel: a queue of its own, each row named by its notification. */
function onChannel(channel: string): LeasedQueue {
  return { table: 'notification_deliveries', id: 'notification_id', scope: { channel } };
}

/** The one delivery this worker holds: its key is the notification and the channel. */
function held(input: Held) {
  return { key: { notification_id: input.notificationId, channel: input.channel }, owner: input.owner, now: input.now };
}

/** The notification a delivery belongs to. */
export async function notificationOf(db: Db, id: string): Promise<NotificationsTable | undefined> {
  return db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst();
}

/** E-mail deliveries for the console's outbox page, newest notification first (created before `before` when given). */
export function listEmailDeliveriesForOperators(db: Db, filter: { status?: DeliveryRow['status'] | undefined; retried?: boolean | undefined }, before: number | undefined, limit: number) {
  let q = db
    .selectFrom('notification_deliveries as d')
    .innerJoin('notifications as n', 'n.id', 'd.notification_id')
    .select(['d.notification_id as id', 'n.category as category', 'n.sub as sub', 'd.status as status', 'd.reason as reason', 'd.attempts as attempts', 'd.next_attempt_at as next_attempt_at', 'n.created_at as created_at', 'd.updated_at as updated_at'])
    .where('d.channel', '=', 'email');
  if (filter.status !== undefined) q = q.where('d.status', '=', filter.status);
  if (filter.retried) q = q.where((eb) => eb.or([eb('d.attempts', '>', 1), eb.and([eb('d.status', '=', 'pending'), eb('d.reason', 'is not', null)])]));
  if (before !== undefined) q = q.where('n.created_at', '<', before);
  return q.orderBy('n.created_at', 'desc').orderBy('d.notification_id', 'desc').limit(limit).execute();
}

/** E-mail deliveries by status (the outbox page's counts, the overview's pending e-mails). */
export async function countEmailDeliveriesByStatus(db: Db): Promise<Map<string, number>> {
  const rows = await db.selectFrom('notification_deliveries').select(['status', (eb) => eb.fn.countAll<number | string | bigint>().as('n')]).where('channel', '=', 'email').groupBy('status').execute();
  return new Map(rows.map((r) => [r.status, Number(r.n)]));
}
