// E-mail notifications as the operators' outbox shows them (issue 36): each e-mail delivery with its
// notification's category and person, its state, attempts and last reason — never its text.
import type { Db } from '../../db/database.ts';
import type { DeliveryStatus } from '../../db/schema.ts';
import * as store from '../deliveries.store.ts';

export type EmailDeliveryEntry = {
  /** the notification's id */
  id: string;
  category: string;
  sub: string;
  status: DeliveryStatus;
  reason: string | null;
  attempts: number;
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
};

export async function emailDeliveriesForOperators(db: Db, filter: { status?: DeliveryStatus | undefined; retried?: boolean | undefined }, before: number | undefined, limit: number): Promise<EmailDeliveryEntry[]> {
  const rows = await store.listEmailDeliveriesForOperators(db, filter, before, limit);
  return rows.map((r) => ({ id: r.id, category: r.category, sub: r.sub, status: r.status, reason: r.reason, attempts: Number(r.attempts), nextAttemptAt: r.next_attempt_at === null ? null : Number(r.next_attempt_at), createdAt: Number(r.created_at), updatedAt: Number(r.updated_at) }));
}

export function emailDeliveryCounts(db: Db): Promise<Map<string, number>> {
  return store.countEmailDeliveriesByStatus(db);
}
