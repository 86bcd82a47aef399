// E-mail verification. spec (issue): "a verification link sets `email_verified`; the CLI can still set
// it". A link is minted for the address the account has when the mail is sent, and proves only that
// address: if the account changes its e-mail meanwhile, the old link verifies nothing.
import { findAccount, markEmailVerified } from './accounts.ts';
import { TOKEN_LIFETIME_MS, usedAccountToken, useAccountToken, type AccountLinkContext } from './account-tokens.ts';
import { queueAccountMail } from './mail/outbox.ts';
import { countAndCheck, VERIFY_PER_ACCOUNT } from './request-limits.ts';

export type VerificationRequestResult = { outcome: 'queued'; email: string } | { outcome: 'nothing_to_verify' } | { outcome: 'throttled'; retryAt: number };

/** Sends the signed-in person a verification link for their current address (when it is unverified). */
export async function requestEmailVerification(ctx: AccountLinkContext, input: { sub: string; locale: string }): Promise<VerificationRequestResult> {
  const account = await findAccount(ctx.db, input.sub);
  if (!account?.email || account.email_verified || account.disabled) return { outcome: 'nothing_to_verify' };
  const limit = await countAndCheck(ctx.db, ctx.clock, `verify:account:${account.sub}`, VERIFY_PER_ACCOUNT);
  if (!limit.allowed) return { outcome: 'throttled', retryAt: limit.retryAt };
  await queueVerificationMail(ctx, { sub: account.sub, email: account.email, locale: input.locale });
  return { outcome: 'queued', email: account.email };
}

/** Records the verification mail for a new or changed address (no limit: the caller decides). */
export async function queueVerificationMail(ctx: AccountLinkContext, input: { sub: string; email: string; locale: string }): Promise<void> {
  const now = ctx.clock();
  await queueAccountMail(ctx.db, now, { kind: 'email_verification', sub: input.sub, to: input.email, locale: input.locale, linkExpiresAt: now + TOKEN_LIFETIME_MS.email_verification });
}

export type VerifyResult =
  | { outcome: 'verified'; email: string }
  /** the link was used before and the address is verified: a second click, or a mail scanner's */
  | { outcome: 'already_verified'; email: string }
  /** the account has another address now */
  | { outcome: 'stale' }
  | { outcome: 'invalid_link' };

/** Follows a verification link: uses it up and sets `email_verified` for the address it was sent to. */
export async function verifyEmail(ctx: AccountLinkContext, token: string): Promise<VerifyResult> {
  const holder = await useAccountToken(ctx.db, ctx.tokenKey, 'email_verification', token, ctx.clock());
  if (!holder) {
    const used = await usedAccountToken(ctx.db, ctx.tokenKey, 'email_verification', token);
    const account = used && (await findAccount(ctx.db, used.sub));
    if (used && account?.email === used.email && account.email_verified) return { outcome: 'already_verified', email: used.email };
    return { outcome: 'invalid_link' };
  }
  if (!(await markEmailVerified(ctx.db, ctx.clock, holder.sub, holder.email))) return { outcome: 'stale' };
  return { outcome: 'verified', email: holder.email };
}
