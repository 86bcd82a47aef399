// Delivering one e-mail notification: claim the next due delivery, decide whether it may be sent at
// all, render it in the owner's language with a one-click unsubscribe, hand it to the mail server, and
// record what happened. spec: e-mail is "delivered by a separate background process. Without that
// process, notifications stay in status `pending`" — this runs only inside `signet worker`.
import type { Logger } from 'pino';
import { findAccount } from '../../accounts/accounts.ts';
import { HOUR, MINUTE, type Clock } from '../../config/clock.ts';
import type { Db, Dialect } from '../../db/database.ts';
import { isCategory } from '../categories.ts';
import * as store from '../deliveries.store.ts';
import { channelEnabled, isMuted } from '../preferences.ts';
import { renderEmail } from './render.ts';
import { MailSendError, type Mailer, type OutgoingEmail } from './send.ts';
import { createUnsubscribeToken } from './unsubscribe-token.ts';

export type EmailDeliveryDeps = {
  db: Db;
  dialect: Dialect;
  clock: Clock;
  mailer: Mailer;
  /** SIGNET_BASE_URL: links in the message and the unsubscribe URL use it */
  baseUrl: URL;
  unsubscribeKey: Buffer;
  logger: Logger;
};

export type EmailDeliveryPolicy = {
  /** how long a claim holds without renewal */
  leaseMs: number;
  /** how often a claim is renewed while the mail server is talking */
  heartbeatMs: number;
  /** sends per delivery; after the last one fails, the delivery is `failed` */
  maxAttempts: number;
  /** the wait after the first failed attempt; each later wait is four times the one before */
  backoffMs: number;
  maxBackoffMs: number;
};

export const DEFAULT_EMAIL_POLICY: EmailDeliveryPolicy = { leaseMs: 60_000, heartbeatMs: 10_000, maxAttempts: 5, backoffMs: MINUTE, maxBackoffMs: 6 * HOUR };

export type EmailOutcome = {
  notificationId: string;
  /** `retry`: still pending, due again later; `lost`: another worker took the delivery over meanwhile */
  outcome: 'sent' | 'failed' | 'suppressed' | 'retry' | 'lost';
  reason: string | null;
};

const CHANNEL = 'email';
export const NO_ADDRESS = 'no e-mail address';
const ABANDONED = 'The worker sending this e-mail stopped before it finished, on every attempt.';

/** The wait before attempt `attempts + 1`: 1 min, 4 min, 16 min, 64 min … with the defaults, capped. */
export function retryDelay(policy: EmailDeliveryPolicy, attempts: number): number {
  return Math.min(policy.maxBackoffMs, policy.backoffMs * 4 ** Math.max(0, attempts - 1));
}

export function unsubscribeUrl(baseUrl: URL, token: string): string {
  // RFC 8058 wants an https URI in List-Unsubscribe. It is built from SIGNET_BASE_URL, which is https in
  // production; with an http base URL (local development) the link is http, and mail providers will
  // not offer their one-click button for it.
  return `${baseUrl.origin}/unsubscribe?token=${encodeURIComponent(token)}`;
}

/** A claimed message and what this worker may do to it while it holds its lease. */
export type LeasedMessage = {
  /** sends so far, this one included */
  attempts: number;
  /** what names the message in the log line of an unexpected send error, and that line */
  logFields: Record<string, string>;
  sendErrorLine: string;
  renew(now: number): Promise<boolean>;
  settle(status: 'sent' | 'failed' | 'suppressed', reason: string | null, now: number): Promise<boolean>;
  retry(now: number, retryAt: number, reason: string): Promise<boolean>;
};

export type LeasedSendOutcome = Omit<EmailOutcome, 'notificationId'>;

/**
 * The lease, retry and back-off rules of e-mail, for notification deliveries and account mail alike:
 * `prepare` the claimed message (or learn why it must not go out), send it while renewing the lease, and
 * settle it — sent; failed after a permanent answer or the last attempt; otherwise due again after
 * `retryDelay`. `lost` when another worker took the message over meanwhile.
 */
export async function sendUnderLease(
  deps: { clock: Clock; mailer: Mailer; logger: Logger },
  policy: EmailDeliveryPolicy,
  message: LeasedMessage,
  prepare: () => Promise<OutgoingEmail | { suppressed: string } | { failed: string }>,
): Promise<LeasedSendOutcome> {
  const settle = async (outcome: 'sent' | 'failed' | 'suppressed', reason: string | null): Promise<LeasedSendOutcome> => {
    const ok = await message.settle(outcome, reason, deps.clock());
    return { outcome: ok ? outcome : 'lost', reason };
  };

  // A claim past the last attempt means a worker died holding every earlier one.
  if (message.attempts > policy.maxAttempts) return settle('failed', ABANDONED);

  const email = await prepare();
  if ('failed' in email) return settle('failed', email.failed);
  if ('suppressed' in email) return settle('suppressed', email.suppressed);

  const renew = setInterval(() => {
    void message.renew(deps.clock()).catch(() => {});
  }, policy.heartbeatMs);
  try {
    await deps.mailer.send(email);
  } catch (error) {
    const failure = error instanceof MailSendError ? error : new MailSendError('Sending failed because of an internal error; the worker log has the details.', false);
    if (!(error instanceof MailSendError)) deps.logger.error({ err: error, ...message.logFields }, message.sendErrorLine);
    // spec'd by the notifications issue: "SMTP down or a 4xx answer: retry with back-off; after the last
    // try `failed` with the reason"; a 5xx answer is permanent, so the delivery fails at once.
    if (failure.permanent || message.attempts >= policy.maxAttempts) return settle('failed', failure.message);
    const now = deps.clock();
    const ok = await message.retry(now, now + retryDelay(policy, message.attempts), failure.message);
    return { outcome: ok ? 'retry' : 'lost', reason: failure.message };
  } finally {
    clearInterval(renew);
  }
  // The server has the message. Were the process to die right here, the lease would expire and the
  // message be sent again: at least once, never lost.
  return settle('sent', null);
}

/** Claims the next due e-mail delivery and settles it; undefined when none is due. */
export async function deliverNextEmail(deps: EmailDeliveryDeps, policy: EmailDeliveryPolicy, owner: string): Promise<EmailOutcome | undefined> {
  const delivery = await store.claimDueDelivery(deps.db, deps.dialect, { channel: CHANNEL, owner, now: deps.clock(), leaseMs: policy.leaseMs });
  if (!delivery) return undefined;
  const notificationId = delivery.notification_id;
  const held = { notificationId, channel: CHANNEL, owner };
  const outcome = await sendUnderLease(
    deps,
    policy,
    {
      attempts: delivery.attempts,
      logFields: { notification: notificationId },
      sendErrorLine: 'e-mail send failed',
      renew: (now) => store.renewLease(deps.db, { ...held, now, leaseMs: policy.leaseMs }),
      settle: (status, reason, now) => store.settleDelivery(deps.db, { ...held, now, status, reason }),
      retry: (now, retryAt, reason) => store.scheduleRetry(deps.db, { ...held, now, retryAt, reason }),
    },
    () => prepare(deps, notificationId),
  );
  return { notificationId, ...outcome };
}

/** The message to send, or why this delivery must not be sent (decided now, not when it was recorded). */
async function prepare(deps: EmailDeliveryDeps, notificationId: string): Promise<OutgoingEmail | { suppressed: string }> {
  const notification = await store.notificationOf(deps.db, notificationId);
  if (!notification || !isCategory(notification.category)) return { suppressed: 'unknown notification category' };
  const { sub, category } = notification;
  const account = await findAccount(deps.db, sub);
  // spec'd by the notifications issue: "An account without an e-mail address: `suppressed`".
  if (!account?.email) return { suppressed: NO_ADDRESS };
  if (account.disabled) return { suppressed: 'the account is disabled' };
  // The person may have turned e-mail off (one-click unsubscribe) or muted the application since.
  if (!(await channelEnabled(deps.db, sub, category, CHANNEL))) return { suppressed: 'turned off in preferences' };
  if (notification.client_id !== null && (await isMuted(deps.db, sub, notification.client_id))) return { suppressed: 'the application is muted' };

  const url = unsubscribeUrl(deps.baseUrl, createUnsubscribeToken(deps.unsubscribeKey, { sub, category }));
  const content = renderEmail({ locale: notification.locale, category, title: notification.title, body: notification.body, link: notification.link, baseUrl: deps.baseUrl, unsubscribeUrl: url });
  return {
    to: account.email,
    ...content,
    // RFC 2369 and RFC 8058 §3.1: one https URI, and the POST body the mail provider sends to it. (RFC 8058
    // also wants a DKIM signature covering both headers: the operator's outgoing mail server adds it.)
    headers: { 'List-Unsubscribe': `<${url}>`, 'List-Unsubscribe-Post': 'List-Unsubscribe=One-Click' },
  };
}
