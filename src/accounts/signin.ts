// Signing in by e-mail or phone plus password, throttled per account and address, per address, and
// with a per-account ceiling that slows (see throttle.ts).
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { keyedHash } from '../oauth/secrets.ts';
import { checkCredentials, findAccountByIdentifier } from './accounts.ts';
import { parseLoginIdentifier } from './identifiers.ts';
import { blockedUntil, recordFailure, recordSuccess, type AttemptSource } from './throttle.ts';

export type SignInAttempt = { identifier: string; password: string; address: string };

export type SignInResult =
  | { outcome: 'signed_in'; sub: string }
  /** the identifier or password is wrong; `retryAt` when the next attempt must wait */
  | { outcome: 'wrong_credentials'; retryAt: number | undefined }
  /** too many failures: refused without checking the password */
  | { outcome: 'throttled'; retryAt: number };

/**
 * Whom the attempt counts against. An identifier with no account gets a stand-in account (a keyed
 * hash of it), so throttling behaves the same whether or not the account exists.
 */
async function attemptSource(db: Db, hashKey: Buffer, attempt: SignInAttempt): Promise<AttemptSource> {
  const account = await findAccountByIdentifier(db, attempt.identifier);
  if (account) return { account: account.sub, address: attempt.address };
  const parsed = parseLoginIdentifier(attempt.identifier);
  const normalized = parsed ? ('email' in parsed ? parsed.email : parsed.phone) : attempt.identifier;
  return { account: `unknown:${keyedHash(hashKey, normalized)}`, address: attempt.address };
}

export async function signIn(db: Db, hashKey: Buffer, clock: Clock, given: SignInAttempt): Promise<SignInResult> {
  // PostgreSQL cannot compare text holding U+0000, and no account's e-mail or phone holds one: the
  // replacement character stands in, so the attempt runs its normal course (same time, same counting)
  // to wrong_credentials instead of a database error.
  const attempt = { ...given, identifier: given.identifier.replaceAll('\u0000', '\ufffd') };
  const source = await attemptSource(db, hashKey, attempt);
  const blocked = await blockedUntil(db, clock, source);
  if (blocked !== undefined) return { outcome: 'throttled', retryAt: blocked };
  // The password check costs the same time whether or not the account exists (checkCredentials uses a decoy hash).
  const account = await checkCredentials(db, attempt.identifier, attempt.password);
  if (!account) return { outcome: 'wrong_credentials', retryAt: await recordFailure(db, clock, source) };
  await recordSuccess(db, source);
  return { outcome: 'signed_in', sub: account.sub };
}
