// Sending one account mail: claim the next due message from the outbox, check it still makes sense,
// mint its link token (see outbox.ts for why here), render it, hand it to the mail server, and record
// what happened — with the lease, retry and back-off rules of notification e-mail (same policy object).
import type { Logger } from 'pino';
import type { Clock } from '../../config/clock.ts';
import type { Db, Dialect } from '../../db/database.ts';
import { retryDelay, type EmailDeliveryPolicy } from '../../notifications/email/deliver.ts';
import { MailSendError, type Mailer, type OutgoingEmail } from '../../notifications/email/send.ts';
import { findAccount } from '../accounts.ts';
import { issueAccountToken } from '../account-tokens.ts';
import { isAccountMailKind, TOKEN_OF_KIND, type AccountMailKind } from './outbox.ts';
import * as store from './outbox.store.ts';
import { renderAccountMail } from './render.ts';

export type AccountMailDeps = {
  db: Db;
  dialect: Dialect;
  clock: Clock;
  mailer: Mailer;
  /** SIGNET_BASE_URL: the links in the message use it */
  baseUrl: URL;
  /** Keys.accountToken: the keyed hash of each link token */
  tokenKey: Buffer;
  productName: string;
  logger: Logger;
};

export type AccountMailOutcome = { id: string; kind: string; outcome: 'sent' | 'failed' | 'suppressed' | 'retry' | 'lost'; reason: string | null };

const ABANDONED = 'The worker sending this e-mail stopped before it finished, on every attempt.';

/** The page a kind of mail links to, with its token. */
export function accountMailLink(baseUrl: URL, kind: AccountMailKind, token: string | undefined): string {
  switch (kind) {
    case 'password_reset':
      return `${baseUrl.origin}/reset-password?token=${encodeURIComponent(token ?? '')}`;
    case 'email_verification':
      return `${baseUrl.origin}/verify-email?token=${encodeURIComponent(token ?? '')}`;
    case 'signup_exists':
      return `${baseUrl.origin}/signin`;
  }
}

/** Claims the next due account mail and settles it; undefined when none is due. */
export async function deliverNextAccountMail(deps: AccountMailDeps, policy: EmailDeliveryPolicy, owner: string): Promise<AccountMailOutcome | undefined> {
  const row = await store.claimDueMail(deps.db, deps.dialect, { owner, now: deps.clock(), leaseMs: policy.leaseMs });
  if (!row) return undefined;
  const held = { id: row.id, owner };
  const settle = async (outcome: 'sent' | 'failed' | 'suppressed', reason: string | null): Promise<AccountMailOutcome> => {
    const ok = await store.settleMail(deps.db, { ...held, now: deps.clock(), status: outcome, reason });
    return { id: row.id, kind: row.kind, outcome: ok ? outcome : 'lost', reason };
  };

  if (row.attempts > policy.maxAttempts) return settle('failed', ABANDONED);
  const message = await prepare(deps, row);
  if ('failed' in message) return settle('failed', message.failed);
  if ('suppressed' in message) return settle('suppressed', message.suppressed);

  const renew = setInterval(() => {
    void store.renewLease(deps.db, { ...held, now: deps.clock(), leaseMs: policy.leaseMs }).catch(() => {});
  }, policy.heartbeatMs);
  try {
    await deps.mailer.send(message);
  } catch (error) {
    const failure = error instanceof MailSendError ? error : new MailSendError('Sending failed because of an internal error; the worker log has the details.', false);
    if (!(error instanceof MailSendError)) deps.logger.error({ err: error, mail: row.id }, 'account mail send failed');
    if (failure.permanent || row.attempts >= policy.maxAttempts) return settle('failed', failure.message);
    const now = deps.clock();
    const ok = await store.scheduleRetry(deps.db, { ...held, now, retryAt: now + retryDelay(policy, row.attempts), reason: failure.message });
    // The token minted for this attempt was never delivered; it expires unused (only its hash exists).
    return { id: row.id, kind: row.kind, outcome: ok ? 'retry' : 'lost', reason: failure.message };
  } finally {
    clearInterval(renew);
  }
  return settle('sent', null);
}

/** The message, or why it must not go out (decided now: the account may have changed since). */
async function prepare(deps: AccountMailDeps, row: store.OutboxRow): Promise<OutgoingEmail | { suppressed: string } | { failed: string }> {
  if (!isAccountMailKind(row.kind)) return { suppressed: 'unknown kind of account mail' };
  if (row.sub === null || row.to_address === null) return { suppressed: 'no account' };
  const account = await findAccount(deps.db, row.sub);
  if (!account) return { suppressed: 'the account was deleted' };
  if (account.disabled) return { suppressed: 'the account is disabled' };
  // A link for an address the account no longer uses must not reach the old mailbox.
  if (account.email !== row.to_address) return { suppressed: 'the account has another e-mail address now' };
  const now = deps.clock();
  const purpose = TOKEN_OF_KIND[row.kind];
  let token: string | undefined;
  if (purpose) {
    if (row.link_expires_at === null || row.link_expires_at <= now) return { failed: 'The link would have expired before the e-mail could be sent.' };
    token = await issueAccountToken(deps.db, deps.tokenKey, { purpose, sub: row.sub, email: row.to_address, now, expiresAt: row.link_expires_at });
  }
  const content = renderAccountMail({
    kind: row.kind,
    locale: row.locale,
    productName: deps.productName,
    email: row.to_address,
    link: accountMailLink(deps.baseUrl, row.kind, token),
    secondLink: `${deps.baseUrl.origin}/forgot-password`,
  });
  return { to: row.to_address, ...content, headers: {} };
}
