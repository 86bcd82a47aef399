// Recording a notification: one row, one delivery per channel, written in the same transaction as the
// change that causes it, so none is lost or doubled.
import { randomUUID } from 'node:crypto';
import type { Db } from '../db/database.ts';
import type { DeliveryStatus } from '../db/schema.ts';
import { CHANNELS, type Channel } from './categories.ts';
import { categoryOf, textsFor, type NotificationEvent } from './messages.ts';
import * as store from './notifications.store.ts';
import { getPreferences, isMuted } from './preferences.ts';

export type RecordInput = {
  sub: string;
  locale: string;
  event: NotificationEvent;
  link?: string;
  clientId?: string;
};

/** What each channel's delivery starts as, from the person's choices (defaults until they set any). */
function initialDelivery(channel: Channel, enabled: boolean, muted: boolean): { status: DeliveryStatus; reason: string | null } {
  if (channel === 'browser_push' || channel === 'mobile_push') return { status: 'suppressed', reason: 'not available' };
  // spec: mute "without revoking its access": the notification is kept, every delivery suppressed.
  if (muted) return { status: 'suppressed', reason: 'the application is muted' };
  if (!enabled) return { status: 'suppressed', reason: 'turned off in preferences' };
  // In-app delivery is the inbox row itself; e-mail waits for `signet worker` (spec: it stays pending without it).
  return channel === 'in_app' ? { status: 'sent', reason: null } : { status: 'pending', reason: null };
}

/** Records a notification inside the caller's transaction `trx`. Returns its id. */
export async function recordNotification(trx: Db, dialect: 'sqlite' | 'postgres', now: number, input: RecordInput): Promise<string> {
  const id = randomUUID();
  const { title, body } = textsFor(input.locale, input.event);
  const category = categoryOf(input.event);
  const choices = (await getPreferences(trx, input.sub)).categories[category];
  const muted = input.clientId !== undefined && (await isMuted(trx, input.sub, input.clientId));
  const deliveries = CHANNELS.map((channel) => {
    const { status, reason } = initialDelivery(channel, choices[channel], muted);
    return { notification_id: id, channel, status, reason, attempts: 0, next_attempt_at: status === 'pending' ? now : null, lease_owner: null, lease_expires_at: null, updated_at: now };
  });
  // Not delivered in-app (the application is muted, or in-app is off for the category): the record is
  // kept, with its deliveries, but it never waits for attention — no unread count, no badge.
  const inApp = deliveries.find((d) => d.channel === 'in_app');
  const readAt = inApp?.status === 'suppressed' ? now : null;
  await store.insertNotification(
    trx,
    dialect,
    { id, sub: input.sub, category, title, body, link: input.link ?? null, client_id: input.clientId ?? null, locale: input.locale, created_at: now, read_at: readAt },
    deliveries,
  );
  return id;
}
