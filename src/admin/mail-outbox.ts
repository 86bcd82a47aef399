// The operators' e-mail outbox (issue 36): account mail (reset and verification links, accounts/mail/)
// and e-mail notifications (notifications/email/) in one list, newest first — queued, sent, failed,
// suppressed, and those tried more than once — with one count per state across both.
import { accountMailCounts, accountMailForOperators } from '../accounts/mail/outbox.ts';
import type { Db } from '../db/database.ts';
import { emailDeliveriesForOperators, emailDeliveryCounts } from '../notifications/email/outbox.ts';

export const OUTBOX_STATES = ['pending', 'sent', 'failed', 'suppressed'] as const;
export type OutboxState = (typeof OUTBOX_STATES)[number];

/** A state, or `retried`: sent more than once, or waiting to be tried again after a failure. */
export type OutboxView = OutboxState | 'retried' | undefined;

export type OutboxLine = {
  source: 'account_mail' | 'notification';
  id: string;
  /** the account mail's kind, or the notification's category */
  kind: string;
  sub: string | null;
  /** the address, for account mail (notifications are addressed when sent) */
  to: string | null;
  status: OutboxState;
  reason: string | null;
  attempts: number;
  /** when a queued message is tried (again) */
  nextAttemptAt: number | null;
  createdAt: number;
  updatedAt: number;
};

export const OUTBOX_PAGE = 50;

/** One page of the outbox, newest first; `before` (a creation time) pages on. */
export async function outboxPage(db: Db, view: OutboxView, before: number | undefined): Promise<{ lines: OutboxLine[]; nextBefore: number | undefined }> {
  const filter = view === 'retried' ? { retried: true } : { status: view };
  const mail = await accountMailForOperators(db, filter, before, OUTBOX_PAGE + 1);
  const notes = await emailDeliveriesForOperators(db, filter, before, OUTBOX_PAGE + 1);
  const lines: OutboxLine[] = [
    ...mail.map((m) => ({ source: 'account_mail' as const, id: m.id, kind: m.kind, sub: m.sub, to: m.to, status: m.status, reason: m.reason, attempts: m.attempts, nextAttemptAt: m.nextAttemptAt, createdAt: m.createdAt, updatedAt: m.updatedAt })),
    ...notes.map((n) => ({ source: 'notification' as const, id: n.id, kind: n.category, sub: n.sub, to: null, status: n.status, reason: n.reason, attempts: n.attempts, nextAttemptAt: n.nextAttemptAt, createdAt: n.createdAt, updatedAt: n.updatedAt })),
  ].sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
  const page = lines.slice(0, OUTBOX_PAGE);
  // The next page starts below the last line's creation time (a message queued in that same millisecond
  // beyond the page is not listed: an operator's view, not an export).
  const last = page.at(-1);
  return { lines: page, nextBefore: lines.length > OUTBOX_PAGE && last ? last.createdAt : undefined };
}

/** How many messages are in each state, both kinds together. */
export async function outboxCounts(db: Db): Promise<Record<OutboxState, number>> {
  const [mail, notes] = [await accountMailCounts(db), await emailDeliveryCounts(db)];
  return Object.fromEntries(OUTBOX_STATES.map((s) => [s, (mail.get(s) ?? 0) + (notes.get(s) ?? 0)])) as Record<OutboxState, number>;
}
