// Signing in by e-mail or phone plus password, throttled per account and address, per address, and
// with a per-account ceiling that slows — or, for a browser with a device cookie for the account, per
// device instead of the ceiling (see throttle.ts and device-cookies.ts).
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { keyedHash } from '../oauth/secrets.ts';
import { checkCredentials, findAccountByIdentifier } from './accounts.ts';
import { deviceCookieAfterSignIn, knownDevice } from './device-cookies.ts';
import { parseLoginIdentifier } from './identifiers.ts';
import { blockedUntil, recordFailedAttempt, recordSuccess, type AttemptSource } from './throttle.ts';

export type SignInAttempt = { identifier: string; password: string; address: string };

/** The browser's device cookie as presented (anything, or nothing), and the key that checks and makes them (keys.deviceCookie). */
export type DeviceCookieInput = { key: Buffer; cookie: unknown };

export type SignInResult =
  /** `deviceCookie`: the browser's new device cookie value, when the attempt came with `DeviceCookieInput` */
  | { outcome: 'signed_in'; sub: string; deviceCookie?: string }
  /**
   * the identifier or password is wrong; `retryAt` when the next attempt must wait; `locked` when this
   * failure started a lock. `sub` only when the identifier names an account — for the audit trail,
   * never for the answer (which must not tell whether the account exists)
   */
  | { outcome: 'wrong_credentials'; retryAt: number | undefined; locked: boolean; sub: string | undefined }
  /** too many failures: refused without checking the password (`sub` as above) */
  | { outcome: 'throttled'; retryAt: number; sub: string | undefined };

/**
 * Whom the attempt counts against, and the account's sub when there is one. An identifier with no
 * account gets a stand-in account (a keyed hash of it), so throttling behaves the same whether or not
 * the account exists.
 */
async function attemptSource(db: Db, hashKey: Buffer, attempt: SignInAttempt): Promise<{ source: AttemptSource; sub: string | undefined }> {
  const account = await findAccountByIdentifier(db, attempt.identifier);
  if (account) return { source: { account: account.sub, address: attempt.address }, sub: account.sub };
  const parsed = parseLoginIdentifier(attempt.identifier);
  const normalized = parsed ? ('email' in parsed ? parsed.email : parsed.phone) : attempt.identifier;
  return { source: { account: `unknown:${keyedHash(hashKey, normalized)}`, address: attempt.address }, sub: undefined };
}

/**
 * Signs in, or counts the failure. With `device`, a device cookie valid for this account exempts the
 * attempt from the account's ceiling (its failures count against the device), and success hands the
 * browser a new device cookie. A stand-in account is checked the same way (no cookie is ever valid for
 * it), so an unknown account still costs the same time.
 */
export async function signIn(db: Db, hashKey: Buffer, clock: Clock, given: SignInAttempt, device?: DeviceCookieInput): Promise<SignInResult> {
  // PostgreSQL cannot compare text holding U+0000, and no account's e-mail or phone holds one: the
  // replacement character stands in, so the attempt runs its normal course (same time, same counting)
  // to wrong_credentials instead of a database error.
  const attempt = { ...given, identifier: given.identifier.replaceAll('\u0000', '\ufffd') };
  const { source: bySource, sub } = await attemptSource(db, hashKey, attempt);
  const source = { ...bySource, device: device && knownDevice(device.key, bySource.account, device.cookie, clock()) };
  const blocked = await blockedUntil(db, clock, source);
  if (blocked !== undefined) return { outcome: 'throttled', retryAt: blocked, sub };
  // The password check costs the same time whether or not the account exists (checkCredentials uses a decoy hash).
  const account = await checkCredentials(db, attempt.identifier, attempt.password, clock);
  if (!account) return { outcome: 'wrong_credentials', ...(await recordFailedAttempt(db, clock, source)), sub };
  await recordSuccess(db, source);
  if (!device) return { outcome: 'signed_in', sub: account.sub };
  return { outcome: 'signed_in', sub: account.sub, deviceCookie: deviceCookieAfterSignIn(device.key, account.sub, device.cookie, clock()) };
}
