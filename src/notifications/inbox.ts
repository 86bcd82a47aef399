// The in-app inbox: a person's notifications newest first, the unread count, and marking them read.
// spec: "in-app inbox with an unread badge and live updates"; the record shape is the operator
// contract's `{"id","category","title","body","created_at","read_at","client_id","deliveries":[…]}`.
import type { Clock } from '../config/clock.ts';
import type { Db, Dialect } from '../db/database.ts';
import type { DeliveryStatus } from '../db/schema.ts';
import { CHANNELS, isChannel, type Channel } from './categories.ts';
import * as store from './notifications.store.ts';

export type DeliveryView = { channel: Channel; status: DeliveryStatus; reason: string | null };

export type NotificationView = {
  id: string;
  category: string;
  title: string;
  body: string;
  /** a path on this site, or null */
  link: string | null;
  created_at: string;
  read_at: string | null;
  client_id: string | null;
  deliveries: DeliveryView[];
};

/** A notification with its place in the per-database sequence (the SSE event id). */
export type SequencedNotification = { seq: number; view: NotificationView };

export type NotificationPage = { notifications: NotificationView[]; unread_count: number; next_cursor: string | null };

export const DEFAULT_PAGE_SIZE = 20;
export const MAX_PAGE_SIZE = 100;

/** A refusal of an inbox call, with its HTTP status and a message that says what to do next. */
export class InboxError extends Error {
  override name = 'InboxError';
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function iso(ms: number | null): string | null {
  return ms === null ? null : new Date(Number(ms)).toISOString();
}

function view(row: store.NotificationRow, deliveries: store.DeliveryRow[]): NotificationView {
  const mine = deliveries
    .filter((d) => d.notification_id === row.id && isChannel(d.channel))
    .map((d) => ({ channel: d.channel as Channel, status: d.status, reason: d.reason }))
    .sort((a, b) => CHANNELS.indexOf(a.channel) - CHANNELS.indexOf(b.channel));
  return {
    id: row.id,
    category: row.category,
    title: row.title,
    body: row.body,
    link: row.link,
    created_at: iso(row.created_at)!,
    read_at: iso(row.read_at),
    client_id: row.client_id,
    deliveries: mine,
  };
}

async function withDeliveries(db: Db, rows: store.NotificationRow[]): Promise<SequencedNotification[]> {
  const deliveries = await store.deliveriesOf(
    db,
    rows.map((r) => r.id),
  );
  return rows.map((row) => ({ seq: Number(row.seq), view: view(row, deliveries) }));
}

// The cursor is opaque to clients: the sequence number of the last notification on the page.
function encodeCursor(seq: number): string {
  return Buffer.from(`n:${seq}`).toString('base64url');
}

function decodeCursor(cursor: string): number {
  const match = /^n:(\d{1,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new InboxError(400, 'bad_cursor', 'The cursor is not one this server handed out. Start again without it.');
  return Number(match[1]);
}

/** A page of the person's notifications, newest first, with the unread count. */
export async function listNotifications(db: Db, sub: string, options: { unreadOnly?: boolean; cursor?: string | undefined; limit?: number | undefined } = {}): Promise<NotificationPage & { items: SequencedNotification[] }> {
  const limit = Math.min(Math.max(options.limit ?? DEFAULT_PAGE_SIZE, 1), MAX_PAGE_SIZE);
  const beforeSeq = options.cursor === undefined ? undefined : decodeCursor(options.cursor);
  const rows = await store.notificationsOf(db, sub, { limit: limit + 1, ...(beforeSeq === undefined ? {} : { beforeSeq }), unreadOnly: options.unreadOnly ?? false });
  const page = rows.slice(0, limit);
  const items = await withDeliveries(db, page);
  const last = page.at(-1);
  return {
    notifications: items.map((i) => i.view),
    items,
    unread_count: await store.countUnread(db, sub),
    next_cursor: rows.length > limit && last ? encodeCursor(Number(last.seq)) : null,
  };
}

/** How many of the person's notifications are unread (the header badge). */
export function unreadCount(db: Db, sub: string): Promise<number> {
  return store.countUnread(db, sub);
}

/** Unread counts of several people (people with none are absent). */
export function unreadCounts(db: Db, subs: string[]): Promise<Map<string, number>> {
  return store.countUnreadOf(db, subs);
}

/** The person's notifications after `afterSeq`, oldest first: what a reconnecting stream missed. */
export async function notificationsAfter(db: Db, sub: string, afterSeq: number, limit: number): Promise<SequencedNotification[]> {
  return withDeliveries(db, await store.notificationsOf(db, sub, { limit, afterSeq }));
}

/** One notification by id, whoever owns it (for the live fan-out, which checks the owner itself). */
export async function findNotification(db: Db, id: string): Promise<(SequencedNotification & { sub: string }) | undefined> {
  const row = await store.findNotification(db, id);
  if (!row) return undefined;
  const [item] = await withDeliveries(db, [row]);
  return { ...item!, sub: row.sub };
}

/** The newest sequence number among the person's notifications (0 when there are none). */
export function latestSeq(db: Db, sub: string): Promise<number> {
  return store.maxSeq(db, sub);
}

/** Notification ids are UUIDs (randomUUID). */
const NOTIFICATION_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Marks one notification read. Another person's notification is indistinguishable from a missing one (404). */
export async function markRead(db: Db, dialect: Dialect, clock: Clock, sub: string, id: string): Promise<void> {
  // Anything else names no notification — and is not sent to the database, which may refuse to
  // compare it at all (PostgreSQL and a NUL character: an error, not "no row").
  if (!NOTIFICATION_ID.test(id)) throw new InboxError(404, 'not_found', 'No such notification. It may belong to another account.');
  const { matched } = await store.markRead(db, dialect, sub, id, clock());
  if (matched === 0) throw new InboxError(404, 'not_found', 'No such notification. It may belong to another account.');
}

/** Marks every unread notification of the person read. */
export async function markAllRead(db: Db, dialect: Dialect, clock: Clock, sub: string): Promise<void> {
  await store.markRead(db, dialect, sub, undefined, clock());
}
