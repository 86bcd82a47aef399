// Sign-in throttling (OWASP Authentication Cheat Sheet, "Protect against automated attacks"). Wrong
// passwords are counted under three keys, each with its own rule:
// - one account from one address: slows down, then locks — a guesser at one account is stopped;
// - one address, over every account: slows down, then locks — one address spraying many accounts;
// - one account, over every address: a ceiling that only slows (a short, capped wait), never locks;
//   or, for a browser that proves with a device cookie that it signed in to this account before
//   (device-cookies.ts), that device instead: it slows, then locks, like one address.
// So a stranger who knows an account can lock out only their own address, and strangers from many
// addresses can only slow the browsers the account has never signed in from: the person with the right
// password, from an address that has not been failing and a browser they signed in with before, always
// gets in. Counters live in the database, so every process sees them.
import { MINUTE, SECOND, type Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import * as store from './throttle.store.ts';

/** Failures are counted within this window. */
export const FAILURE_WINDOW_MS = 15 * MINUTE;

export type ThrottleRule = {
  /** from this many failures in the window on, each further failure makes the next attempt wait */
  slowAfter: number;
  /** the first wait; it doubles with every further failure */
  firstWaitMs: number;
  /** the longest wait short of a lock */
  maxWaitMs: number;
  /** this many failures lock the key for `lockMs`; absent: the key never locks */
  lock?: { after: number; ms: number };
};

/** One account from one address: 5 s from the 5th failure, doubling; the 10th locks for 15 minutes. */
export const PER_ACCOUNT_AND_ADDRESS: ThrottleRule = { slowAfter: 5, firstWaitMs: 5 * SECOND, maxWaitMs: 15 * MINUTE, lock: { after: 10, ms: 15 * MINUTE } };

/**
 * One address over every account. It adds up the failures of everyone behind that address (an office,
 * a mobile carrier's NAT), so it allows more: 5 s from the 15th, doubling up to a minute; the 30th
 * locks for 15 minutes. (The waits add up to well under the window, so the count can reach the lock.)
 */
export const PER_ADDRESS: ThrottleRule = { slowAfter: 15, firstWaitMs: 5 * SECOND, maxWaitMs: MINUTE, lock: { after: 30, ms: 15 * MINUTE } };

/**
 * One account over every address: the ceiling against guessing from many addresses. It slows, never
 * locks: at most a 30-second wait, so nobody can keep the owner out for longer than that.
 */
export const PER_ACCOUNT: ThrottleRule = { slowAfter: 20, firstWaitMs: 5 * SECOND, maxWaitMs: 30 * SECOND };

/**
 * One known browser (a valid device cookie) at its account, over every address, in place of the
 * ceiling: like one address, 5 s from the 5th failure, doubling; the 10th locks that device cookie out
 * for 15 minutes, so a stolen cookie cannot be used to guess freely.
 */
export const PER_DEVICE: ThrottleRule = { slowAfter: 5, firstWaitMs: 5 * SECOND, maxWaitMs: 15 * MINUTE, lock: { after: 10, ms: 15 * MINUTE } };

/** The wait imposed after the n-th failure in a window under a rule: none, then doubling up to the cap, then the lock. */
export function waitAfterFailure(rule: ThrottleRule, failures: number): number {
  if (rule.lock && failures >= rule.lock.after) return rule.lock.ms;
  if (failures < rule.slowAfter) return 0;
  return Math.min(rule.firstWaitMs * 2 ** (failures - rule.slowAfter), rule.maxWaitMs);
}

/**
 * Who a sign-in attempt is about. `account` is the account's `sub`, or a stand-in for an identifier
 * with no account (so an unknown account is throttled exactly like a real one and reveals nothing).
 * `device`: the id of the device cookie that proved this browser signed in to this account before
 * (device-cookies.ts knownDevice), when it did.
 */
export type AttemptSource = { account: string; address: string; device?: string | undefined };

/** The key of an account's ceiling; its (account, address) keys extend it with `:address`. */
export function accountKey(sub: string): string {
  return `account:${sub}`;
}

/** The key of the failures counted against a client address, over every account. */
function addressKey(address: string): string {
  return `address:${address}`;
}

/**
 * The counter keys of an attempt, each with its rule. A known browser is exempt from the account's
 * ceiling — neither held back by it nor adding to it — and counted against its device cookie instead
 * (under "account:<sub>:device:", so unlocking the account lifts it too).
 */
export function throttleKeys(source: AttemptSource): Array<{ key: string; rule: ThrottleRule }> {
  return [
    { key: `${accountKey(source.account)}:${source.address}`, rule: PER_ACCOUNT_AND_ADDRESS },
    { key: addressKey(source.address), rule: PER_ADDRESS },
    source.device === undefined ? { key: accountKey(source.account), rule: PER_ACCOUNT } : { key: `${accountKey(source.account)}:device:${source.device}`, rule: PER_DEVICE },
  ];
}

/** When the next attempt from this source is allowed, or undefined when it is allowed now. */
export async function blockedUntil(db: Db, clock: Clock, source: AttemptSource): Promise<number | undefined> {
  return blockedUntilFor(db, clock, throttleKeys(source));
}

/** When the next attempt counted under these keys is allowed, or undefined when it is allowed now. */
export async function blockedUntilFor(db: Db, clock: Clock, keys: ReadonlyArray<{ key: string }>): Promise<number | undefined> {
  const until = await store.latestLock(
    db,
    keys.map((k) => k.key),
  );
  return until !== undefined && until > clock() ? until : undefined;
}

/**
 * Wrong codes at the second step (issue 19: "5 wrong codes → growing waits, never a lockout a stranger
 * can cause"), over every address: from the 5th, 5 s doubling up to a minute, never a lock.
 */
export const SECOND_STEP_PER_ACCOUNT: ThrottleRule = { slowAfter: 5, firstWaitMs: 5 * SECOND, maxWaitMs: MINUTE };

/**
 * The counter keys of a second-step code (or a step-up code): the account from this address (5 → waits,
 * doubling; 10 locks that address out for 15 minutes), the address over every account (shared with
 * passwords), and the account's own ceiling, which only slows. Codes have keys of their own under
 * "account:<sub>:code", so a correct password — which clears the password counter — never gives a
 * code guesser a fresh allowance, and unlocking the account lifts them too.
 */
export function secondStepKeys(sub: string, address: string): Array<{ key: string; rule: ThrottleRule }> {
  return [
    { key: `${accountKey(sub)}:code:${address}`, rule: PER_ACCOUNT_AND_ADDRESS },
    { key: addressKey(address), rule: PER_ADDRESS },
    { key: `${accountKey(sub)}:code`, rule: SECOND_STEP_PER_ACCOUNT },
  ];
}

/** A correct code clears the count of that account from that address (the person's own typos), nothing else. */
export async function recordSecondStepSuccess(db: Db, sub: string, address: string): Promise<void> {
  await store.clearKey(db, secondStepKeys(sub, address)[0]!.key);
}

/** What one counted failure led to: when the next attempt is allowed (if it must wait), and whether it started a lock. */
export type FailureConsequence = { retryAt: number | undefined; locked: boolean };

/**
 * Counts a failed attempt under every key. `locked` when a key reached its lock with this failure (the
 * attempts that follow are refused unchecked until `retryAt`, so each failure counted at or past a
 * rule's lock threshold starts a new lock).
 */
export async function recordFailedAttempt(db: Db, clock: Clock, source: AttemptSource): Promise<FailureConsequence> {
  return recordFailureFor(db, clock, throttleKeys(source));
}

/** Counts one failure under each of these keys, by its rule (see recordFailedAttempt). */
export async function recordFailureFor(db: Db, clock: Clock, keys: ReadonlyArray<{ key: string; rule: ThrottleRule }>): Promise<FailureConsequence> {
  const now = clock();
  let latest: number | undefined;
  let locked = false;
  for (const { key, rule } of keys) {
    const failures = await store.countFailure(db, key, now, FAILURE_WINDOW_MS);
    const wait = waitAfterFailure(rule, failures);
    if (wait > 0) {
      await store.setLock(db, key, now + wait);
      latest = Math.max(latest ?? 0, now + wait);
    }
    if (rule.lock && failures >= rule.lock.after) locked = true;
  }
  return { retryAt: latest, locked };
}

/** Counts a failed attempt under every key. Returns when the next attempt is allowed, if it must wait. */
export async function recordFailure(db: Db, clock: Clock, source: AttemptSource): Promise<number | undefined> {
  return (await recordFailedAttempt(db, clock, source)).retryAt;
}

/**
 * A successful sign-in clears the counter of that account from that address — the person's own typos.
 * Not the address's (one good account must not reset a sprayer's count), not the account's ceiling
 * (the owner signing in must not hand guessers elsewhere a fresh allowance), and not the device
 * cookie's: the browser gets a new one, and a copy of the old one in a thief's hands stays counted.
 */
export async function recordSuccess(db: Db, source: AttemptSource): Promise<void> {
  await store.clearKey(db, throttleKeys(source)[0]!.key);
}

/**
 * For an operator: lifts every lock and wait on an account — from every address and device, and its ceiling.
 * Address counters stay (they are about the addresses, not the account). Returns the counters removed.
 */
export async function unlockAccount(db: Db, sub: string): Promise<number> {
  // "account:<sub>", "account:<sub>:<address>" and "account:<sub>:device:<id>"; not "account:<sub>0…" (another numeric sub).
  return store.clearKeys(db, accountKey(sub), `${accountKey(sub)}:`);
}

/**
 * For an operator: forgets the failures counted against one client address (over every account), so
 * a person who shares it with whoever was failing — an office, a carrier's NAT — can sign in again.
 * Returns the counters removed (0 or 1).
 */
export async function unblockAddress(db: Db, address: string): Promise<number> {
  return store.clearKey(db, addressKey(address));
}

/**
 * A plain fixed-window counter in the same shared table, for other per-address limits (the oauth
 * domain limits how many pending authorization requests one address opens). `key` must carry its own
 * namespace (e.g. "authorize:<address>"). Returns the count in the current window and when it ends.
 * The window must not exceed FAILURE_WINDOW_MS, after which the sweep forgets the counter.
 */
export async function countInWindow(db: Db, clock: Clock, key: string, windowMs: number): Promise<{ count: number; windowEndsAt: number }> {
  const { count, windowStartedAt } = await store.countEvent(db, key, clock(), Math.min(windowMs, FAILURE_WINDOW_MS));
  return { count, windowEndsAt: windowStartedAt + windowMs };
}

/** Removes counters that no longer slow anyone down (for a periodic sweep). */
export async function forgetStaleCounters(db: Db, clock: Clock): Promise<number> {
  const now = clock();
  return store.deleteStaleCounters(db, now - FAILURE_WINDOW_MS, now);
}

/** One counter holding an account back, as an operator sees it (the address, never the device cookie). */
export type Lockout = { scope: 'account' | 'address' | 'device'; address: string | null; failures: number; lockedUntil: number | null };

/**
 * For an operator (the console's person page): the account's counters with failures or a lock that
 * still holds — its ceiling, each (account, address) pair, each known browser.
 */
export async function lockoutsOf(db: Db, clock: Clock, sub: string): Promise<Lockout[]> {
  const now = clock();
  const rows = await store.countersUnder(db, accountKey(sub), `${accountKey(sub)}:`);
  const rest = (key: string) => key.slice(accountKey(sub).length + 1);
  return rows
    .filter((r) => (r.locked_until !== null && r.locked_until > now) || r.window_started_at + FAILURE_WINDOW_MS > now)
    .map((r) => {
      const scope = r.key === accountKey(sub) ? 'account' : rest(r.key).startsWith('device:') ? 'device' : 'address';
      return { scope, address: scope === 'address' ? rest(r.key) : null, failures: r.failures, lockedUntil: r.locked_until !== null && r.locked_until > now ? r.locked_until : null };
    });
}

/** The subs of accounts locked out now (by any of their counters), most recent lock first. */
export async function lockedAccounts(db: Db, clock: Clock, limit = 100): Promise<string[]> {
  const keys = await store.lockedAccountKeys(db, clock(), limit * 4);
  const subs = keys.map((key) => key.slice('account:'.length).split(':', 1)[0]!).filter((sub) => sub.length > 0);
  return [...new Set(subs)].slice(0, limit);
}
