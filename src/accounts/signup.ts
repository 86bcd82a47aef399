// Self-registration, off unless the operator sets SIGNET_SIGNUP=open. The new account starts with
// `email_verified=false` and gets a verification link. The answer never says whether the address had an
// account already (that would undo the forgotten-password page's care): an existing address gets an
// e-mail saying so instead of a new account, and the page reads the same.
import { keyedHash } from '../oauth/secrets.ts';
import { AccountError, createAccount, findAccountByEmail, MAX_NAME_LENGTH } from './accounts.ts';
import type { AccountLinkContext } from './account-tokens.ts';
import { queueVerificationMail } from './email-verification.ts';
import { normalizeEmail } from './identifiers.ts';
import { queueAccountMail } from './mail/outbox.ts';
import { hashPassword, passwordLengthProblem } from './passwords.ts';
import { countAndCheck, SIGNUP_PER_CLIENT, SIGNUP_PER_EMAIL } from './request-limits.ts';

export type SignUpInput = { email: string; password: string; name: string; address: string; locale: string };

export type SignUpResult =
  /** the one answer for a well-formed request: "check your e-mail" */
  | { outcome: 'check_email'; email: string }
  | { outcome: 'invalid_email' }
  | { outcome: 'invalid_password'; problem: 'too_short' | 'too_long' }
  | { outcome: 'invalid_name' }
  | { outcome: 'throttled'; retryAt: number };

export async function signUp(ctx: AccountLinkContext, input: SignUpInput): Promise<SignUpResult> {
  const email = normalizeEmail(input.email);
  if (email === undefined) return { outcome: 'invalid_email' };
  const problem = passwordLengthProblem(input.password);
  if (problem) return { outcome: 'invalid_password', problem };
  const name = input.name.trim();
  if (name.length > MAX_NAME_LENGTH) return { outcome: 'invalid_name' };
  const perClient = await countAndCheck(ctx.db, ctx.clock, `signup:address:${input.address}`, SIGNUP_PER_CLIENT);
  if (!perClient.allowed) return { outcome: 'throttled', retryAt: perClient.retryAt };
  const perEmail = await countAndCheck(ctx.db, ctx.clock, `signup:email:${keyedHash(ctx.hashKey, email)}`, SIGNUP_PER_EMAIL);

  if (!(await findAccountByEmail(ctx.db, email))) {
    try {
      const account = await createAccount(ctx.db, ctx.clock, { email, password: input.password, name: name || undefined, emailVerified: false });
      await queueVerificationMail(ctx, { sub: account.sub, email, locale: input.locale });
      return { outcome: 'check_email', email };
    } catch (error) {
      // Someone else took the address a moment ago: answered as any existing address is.
      if (!(error instanceof AccountError && error.code === 'email_taken')) throw error;
    }
  }
  // The same cost as creating an account (the argon2 hash), then a note to the address's owner.
  await hashPassword(input.password);
  const existing = await findAccountByEmail(ctx.db, email);
  await queueAccountMail(ctx.db, ctx.clock(), {
    kind: 'signup_exists',
    sub: existing?.sub,
    to: existing?.email ?? undefined,
    locale: input.locale,
    linkExpiresAt: undefined,
    suppressed: existing?.disabled ? 'the account is disabled' : !perEmail.allowed ? 'too many sign-up requests for this address' : undefined,
  });
  return { outcome: 'check_email', email };
}
