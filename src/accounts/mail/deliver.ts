// Sending one account mail: claim the next due message from the outbox, check it still makes sense,
// mint its link token (see outbox.ts for why here), render it, hand it to the mail server, and record
// what happened — with the lease, retry and back-off rules of notification e-mail (sendUnderLease).
import type { Logger } from 'pino';
import type { Clock } from '../../config/clock.ts';
import type { Db, Dialect } from '../../db/database.ts';
import { sendUnderLease, type EmailDeliveryPolicy } from '../../notifications/email/deliver.ts';
import type { Mailer, OutgoingEmail } from '../../notifications/email/send.ts';
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
  // A retry mints a new token: the one minted for the failed attempt was never delivered and expires
  // unused (only its hash exists).
  const outcome = await sendUnderLease(
    deps,
    policy,
    {
      attempts: row.attempts,
      logFields: { mail: row.id },
      sendErrorLine: 'account mail send failed',
      renew: (now) => store.renewLease(deps.db, { ...held, now, leaseMs: policy.leaseMs }),
      settle: (status, reason, now) => store.settleMail(deps.db, { ...held, now, status, reason }),
      retry: (now, retryAt, reason) => store.scheduleRetry(deps.db, { ...held, now, retryAt, reason }),
    },
    () => prepare(deps, row),
  );
  return { id: row.id, kind: row.kind, ...outcome };
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
