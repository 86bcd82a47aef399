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
