// The e-mail side of `signet worker`: deliver every due account mail (reset and verification links,
// accounts/mail/) and e-mail notification, then wait and look again. Account mail goes first: its
// links expire within the hour.
// Several runners (in several workers, on several hosts) share the deliveries through their leases
// (deliveries.store.ts), so none is sent twice. In-app delivery never waits for this: it is `sent` when
// the notification is recorded.
import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Clock } from '../config/clock.ts';
import type { Db, Dialect } from '../db/database.ts';
import { deliverNextAccountMail } from '../accounts/mail/deliver.ts';
import { DEFAULT_EMAIL_POLICY, deliverNextEmail, type EmailDeliveryPolicy } from '../notifications/email/deliver.ts';
import { createSmtpMailer, type Mailer } from '../notifications/email/send.ts';
import { startPollLoop } from './loop.ts';

export type EmailRunnerDeps = {
  db: Db;
  dialect: Dialect;
  clock: Clock;
  logger: Logger;
  /** SIGNET_SMTP_URL and SIGNET_MAIL_FROM; undefined when no mail server is configured */
  smtp: { url: string; from: string } | undefined;
  baseUrl: URL;
  unsubscribeKey: Buffer;
  /**
   * Account mail (reset and verification links): Keys.accountToken, which hashes the link tokens minted
   * when a message is sent, and SIGNET_PRODUCT_NAME. `signet worker` always gives it; a runner without
   * it leaves account mail to one that has it.
   */
  accountMail?: { tokenKey: Buffer; productName: string } | undefined;
  /** a mail server stand-in; by default one is made from `smtp` */
  mailer?: Mailer;
};

export type EmailRunnerOptions = Partial<EmailDeliveryPolicy> & {
  /** how often an idle runner looks for due deliveries */
  pollMs?: number;
};

export function startEmailRunner(deps: EmailRunnerDeps, options: EmailRunnerOptions = {}): { stop(): Promise<void> } {
  const owner = randomUUID();
  const log = deps.logger.child({ worker: owner, work: 'email' });
  const mailer = deps.mailer ?? (deps.smtp ? createSmtpMailer(deps.smtp) : undefined);
  if (!mailer) {
    // spec: without a sender "notifications stay in status `pending`" — said once, not on every poll.
    log.warn('SIGNET_SMTP_URL is not set: e-mail notifications stay pending until a worker with a mail server runs');
    return { stop: async () => {} };
  }
  const leaseMs = options.leaseMs ?? DEFAULT_EMAIL_POLICY.leaseMs;
  const policy: EmailDeliveryPolicy = {
    leaseMs,
    heartbeatMs: options.heartbeatMs ?? Math.min(DEFAULT_EMAIL_POLICY.heartbeatMs, leaseMs / 3),
    maxAttempts: options.maxAttempts ?? DEFAULT_EMAIL_POLICY.maxAttempts,
    backoffMs: options.backoffMs ?? DEFAULT_EMAIL_POLICY.backoffMs,
    maxBackoffMs: options.maxBackoffMs ?? DEFAULT_EMAIL_POLICY.maxBackoffMs,
  };
  const pollMs = options.pollMs ?? 2_000;
  const delivery = { db: deps.db, dialect: deps.dialect, clock: deps.clock, mailer, baseUrl: deps.baseUrl, unsubscribeKey: deps.unsubscribeKey, logger: log };
  const accountMail = deps.accountMail && { db: deps.db, dialect: deps.dialect, clock: deps.clock, mailer, baseUrl: deps.baseUrl, ...deps.accountMail, logger: log };
  const loop = startPollLoop({
    pollMs,
    log,
    errorLine: 'e-mail runner error; retrying',
    step: async () => {
      const mail = accountMail && (await deliverNextAccountMail(accountMail, policy, owner));
      if (mail) {
        const level = mail.outcome === 'sent' || mail.outcome === 'suppressed' ? 'info' : 'warn';
        log[level]({ mail: mail.id, kind: mail.kind, outcome: mail.outcome, reason: mail.reason ?? undefined }, 'account mail delivery');
        return true;
      }
      const done = await deliverNextEmail(delivery, policy, owner);
      if (done) {
        const level = done.outcome === 'sent' || done.outcome === 'suppressed' ? 'info' : 'warn';
        log[level]({ notification: done.notificationId, outcome: done.outcome, reason: done.reason ?? undefined }, 'e-mail delivery');
        return true;
      }
      return false;
    },
  });

  return {
    /** Finishes the message being sent (bounded by the SMTP timeouts), then stops. */
    async stop() {
      await loop.stop();
      mailer.close();
    },
  };
}
