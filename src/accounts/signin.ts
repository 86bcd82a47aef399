// Signing in by e-mail or phone plus password, throttled per account and per source address.
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { keyedHash } from '../oauth/secrets.ts';
import { checkCredentials, findAccountByIdentifier } from './accounts.ts';
import { parseLoginIdentifier } from './identifiers.ts';
import { accountKey, addressKey, blockedUntil, recordFailure, recordSuccess } from './throttle.ts';

export type SignInAttempt = { identifier: string; password: string; address: string };

export type SignInResult =
  | { outcome: 'signed_in'; sub: string }
  /** the identifier or password is wrong; `retryAt` when the next attempt must wait */
  | { outcome: 'wrong_credentials'; retryAt: number | undefined }
  /** too many failures: refused without checking the password */
  | { outcome: 'throttled'; retryAt: number };

/**
 * The account key of an identifier. An identifier with no account gets a key too (a keyed hash of
 * it), so lockouts behave the same whether or not the account exists.
 */
async function throttleKeys(db: Db, hashKey: Buffer, attempt: SignInAttempt): Promise<string[]> {
  const keys = [addressKey(attempt.address)];
  const account = await findAccountByIdentifier(db, attempt.identifier);
  if (account) keys.unshift(accountKey(account.sub));
  else {
    const parsed = parseLoginIdentifier(attempt.identifier);
    if (parsed) keys.unshift(accountKey(`unknown:${keyedHash(hashKey, 'email' in parsed ? parsed.email : parsed.phone)}`));
  }
  return keys;
}

export async function signIn(db: Db, hashKey: Buffer, clock: Clock, attempt: SignInAttempt): Promise<SignInResult> {
  const keys = await throttleKeys(db, hashKey, attempt);
  const blocked = await blockedUntil(db, clock, keys);
  if (blocked !== undefined) return { outcome: 'throttled', retryAt: blocked };
  // The password check costs the same time whether or not the account exists (checkCredentials uses a decoy hash).
  const account = await checkCredentials(db, attempt.identifier, attempt.password);
  if (!account) return { outcome: 'wrong_credentials', retryAt: await recordFailure(db, clock, keys) };
  await recordSuccess(db, accountKey(account.sub));
  return { outcome: 'signed_in', sub: account.sub };
}
