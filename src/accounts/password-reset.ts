// Forgotten passwords. spec (issue): "the same answer whether or not the account exists (and takes the
// same time — do the same work); a single-use reset link valid 30 minutes (the token stored as a keyed
// hash), sent by e-mail through the worker's e-mail delivery; a reset ends every session".
import { keyedHash } from '../oauth/secrets.ts';
import { findAccount, findAccountByEmail, markEmailVerified, replacePasswordHash } from './accounts.ts';
import { forgetAccountTokens, peekAccountToken, TOKEN_LIFETIME_MS, useAccountToken, type AccountLinkContext } from './account-tokens.ts';
import { normalizeEmail } from './identifiers.ts';
import { queueAccountMail } from './mail/outbox.ts';
import { hashPassword, passwordLengthProblem } from './passwords.ts';
import { countAndCheck, RESET_PER_CLIENT, RESET_PER_EMAIL } from './request-limits.ts';
import { unlockAccount } from './throttle.ts';

export type ResetRequestResult =
  /** the answer for every well-formed address, whether or not an account has it */
  | { outcome: 'accepted' }
  | { outcome: 'invalid_email' }
  /** too many requests from this client address (says nothing about any account) */
  | { outcome: 'throttled'; retryAt: number };

/**
 * Asks for a reset link. Every well-formed address takes the same steps — count the request for the
 * client and for the address, look the account up, record one outbox row — and gets the same answer;
 * only the row differs: `pending` with the account's address, or `suppressed` without one. The worker
 * sends the e-mail later, so its cost is never part of the answer.
 */
export async function requestPasswordReset(ctx: AccountLinkContext, input: { email: string; address: string; locale: string }): Promise<ResetRequestResult> {
  const email = normalizeEmail(input.email);
  if (email === undefined) return { outcome: 'invalid_email' };
  const perClient = await countAndCheck(ctx.db, ctx.clock, `reset:address:${input.address}`, RESET_PER_CLIENT);
  if (!perClient.allowed) return { outcome: 'throttled', retryAt: perClient.retryAt };
  // Keyed by the address, not the account: the same statement whether or not the account exists.
  const perEmail = await countAndCheck(ctx.db, ctx.clock, `reset:email:${keyedHash(ctx.hashKey, email)}`, RESET_PER_EMAIL);
  const account = await findAccountByEmail(ctx.db, email);
  const now = ctx.clock();
  const suppressed = !account ? 'no account' : account.disabled ? 'the account is disabled' : !perEmail.allowed ? 'too many reset requests for this address' : undefined;
  await queueAccountMail(ctx.db, now, {
    kind: 'password_reset',
    sub: account?.sub,
    to: account?.email ?? undefined,
    locale: input.locale,
    linkExpiresAt: now + TOKEN_LIFETIME_MS.password_reset,
    suppressed,
  });
  return { outcome: 'accepted' };
}

/** Whether a reset link can still be used (its page shows the form only then). Changes nothing. */
export async function resetLinkUsable(ctx: AccountLinkContext, token: string): Promise<boolean> {
  return (await peekAccountToken(ctx.db, ctx.tokenKey, 'password_reset', token, ctx.clock())) !== undefined;
}

export type ResetResult = { outcome: 'done'; sub: string } | { outcome: 'invalid_link' } | { outcome: 'invalid_password'; problem: 'too_short' | 'too_long' };

/**
 * Sets the new password with a reset link. In one transaction: the link is used up (one conditional
 * UPDATE — a second use finds nothing), the password replaced, every session ended, every other reset
 * link of the person forgotten, and sign-in throttling lifted (the owner has just proved control of the
 * mailbox). Following the link also proves the address, so it counts as verified.
 */
export async function resetPassword(ctx: AccountLinkContext, input: { token: string; password: string }): Promise<ResetResult> {
  const problem = passwordLengthProblem(input.password);
  if (problem) return { outcome: 'invalid_password', problem };
  if (!(await resetLinkUsable(ctx, input.token))) return { outcome: 'invalid_link' };
  const passwordHash = await hashPassword(input.password);
  return ctx.db.transaction().execute(async (trx): Promise<ResetResult> => {
    const holder = await useAccountToken(trx, ctx.tokenKey, 'password_reset', input.token, ctx.clock());
    if (!holder) return { outcome: 'invalid_link' };
    const account = await findAccount(trx, holder.sub);
    if (!account || account.disabled) return { outcome: 'invalid_link' };
    // spec (issue): "a reset ends every session".
    await replacePasswordHash(trx, ctx.clock, holder.sub, passwordHash);
    await forgetAccountTokens(trx, holder.sub, 'password_reset');
    await markEmailVerified(trx, ctx.clock, holder.sub, holder.email);
    await unlockAccount(trx, holder.sub);
    return { outcome: 'done', sub: holder.sub };
  });
}
