// The only place with queries on notifications and their deliveries.
import { sql } from 'kysely';
import type { Db } from '../db/database.ts';
import type { NotificationDeliveriesTable, NotificationsTable } from '../db/schema.ts';

export type NotificationRow = NotificationsTable;

/** The PostgreSQL LISTEN/NOTIFY channel that announces committed notifications to every process. */
export const NOTIFY_CHANNEL = 'signet_notifications';
export type DeliveryRow = NotificationDeliveriesTable;

/**
 * Inserts a notification with the next sequence number and its deliveries. On PostgreSQL a
 * transaction-scoped advisory lock serialises notification inserts until commit, so sequence order is
 * commit order and a reader that has seen N never later finds a smaller number appearing (SSE replay
 * by Last-Event-ID relies on it). SQLite has one writer anyway. Call inside a transaction.
 */
export async function insertNotification(trx: Db, dialect: 'sqlite' | 'postgres', row: Omit<NotificationRow, 'seq'>, deliveries: DeliveryRow[]): Promise<number> {
  if (dialect === 'postgres') await sql`select pg_advisory_xact_lock(hashtext('signet.notifications.seq'))`.execute(trx);
  const next = await trx.selectFrom('notifications').select((eb) => eb.fn.coalesce(eb.fn.max('seq'), sql<number>`0`).as('max')).executeTakeFirstOrThrow();
  const seq = Number(next.max) + 1;
  await trx.insertInto('notifications').values({ ...row, seq }).execute();
  if (deliveries.length > 0) await trx.insertInto('notification_deliveries').values(deliveries).execute();
  // Every server process LISTENs on this channel; PostgreSQL delivers it at commit, never for a
  // rollback. The payload names the row (well under NOTIFY's 8,000 bytes); listeners read the row.
  if (dialect === 'postgres') await sql`select pg_notify(${NOTIFY_CHANNEL}, ${JSON.stringify({ id: row.id, sub: row.sub, seq })})`.execute(trx);
  return seq;
}

export async function deliveriesOf(db: Db, notificationIds: string[]): Promise<DeliveryRow[]> {
  if (notificationIds.length === 0) return [];
  return db.selectFrom('notification_deliveries').selectAll().where('notification_id', 'in', notificationIds).execute();
}

export async function notificationsOf(db: Db, sub: string, options: { limit: number; beforeSeq?: number; afterSeq?: number; unreadOnly?: boolean }): Promise<NotificationRow[]> {
  let query = db.selectFrom('notifications').selectAll().where('sub', '=', sub);
  if (options.beforeSeq !== undefined) query = query.where('seq', '<', options.beforeSeq);
  if (options.afterSeq !== undefined) query = query.where('seq', '>', options.afterSeq);
  if (options.unreadOnly) query = query.where('read_at', 'is', null);
  return query.orderBy('seq', options.afterSeq !== undefined ? 'asc' : 'desc').limit(options.limit).execute();
}

export async function findNotification(db: Db, id: string): Promise<NotificationRow | undefined> {
  return db.selectFrom('notifications').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function countUnread(db: Db, sub: string): Promise<number> {
  const row = await db.selectFrom('notifications').select((eb) => eb.fn.countAll<number>().as('n')).where('sub', '=', sub).where('read_at', 'is', null).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Unread counts of several people at once (people without unread notifications are absent). */
export async function countUnreadOf(db: Db, subs: string[]): Promise<Map<string, number>> {
  if (subs.length === 0) return new Map();
  const rows = await db
    .selectFrom('notifications')
    .select(['sub', (eb) => eb.fn.countAll<number>().as('n')])
    .where('sub', 'in', subs)
    .where('read_at', 'is', null)
    .groupBy('sub')
    .execute();
  return new Map(rows.map((r) => [r.sub, Number(r.n)]));
}

/** The newest sequence number of one person's notifications, or of all when `sub` is undefined; 0 when none. */
export async function maxSeq(db: Db, sub?: string): Promise<number> {
  let query = db.selectFrom('notifications').select((eb) => eb.fn.max('seq').as('max'));
  if (sub !== undefined) query = query.where('sub', '=', sub);
  const row = await query.executeTakeFirst();
  return row?.max === null || row?.max === undefined ? 0 : Number(row.max);
}

/** Every person's notifications after `afterSeq`, oldest first (what a polling process announces). */
export async function announcementsAfter(db: Db, afterSeq: number, limit: number): Promise<Array<{ id: string; sub: string; seq: number }>> {
  const rows = await db.selectFrom('notifications').select(['id', 'sub', 'seq']).where('seq', '>', afterSeq).orderBy('seq', 'asc').limit(limit).execute();
  return rows.map((r) => ({ id: r.id, sub: r.sub, seq: Number(r.seq) }));
}

/**
 * Marks notifications of `sub` read (one by id, or all unread when `id` is undefined); a notification
 * already read keeps its time. Returns how many rows matched the owner (and id), read or not. On
 * PostgreSQL the unread count change is announced to every process at commit.
 */
export async function markRead(db: Db, dialect: 'sqlite' | 'postgres', sub: string, id: string | undefined, now: number): Promise<{ matched: number; changed: number }> {
  let matched = 0;
  if (id !== undefined) {
    const row = await db.selectFrom('notifications').select('id').where('id', '=', id).where('sub', '=', sub).executeTakeFirst();
    if (!row) return { matched: 0, changed: 0 };
    matched = 1;
  }
  let update = db.updateTable('notifications').set({ read_at: now }).where('sub', '=', sub).where('read_at', 'is', null);
  if (id !== undefined) update = update.where('id', '=', id);
  const result = await update.executeTakeFirst();
  const changed = Number(result.numUpdatedRows);
  if (changed > 0 && dialect === 'postgres') await sql`select pg_notify(${NOTIFY_CHANNEL}, ${JSON.stringify({ sub, read: true })})`.execute(db);
  return { matched: id === undefined ? changed : matched, changed };
}
