// Sign-in throttling: repeated wrong passwords first slow down, then temporarily lock, both the
// account and the source address. Counters live in the database, so every process sees them.
import { MINUTE, SECOND, type Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import * as store from './throttle.store.ts';

/** Failures are counted within this window. */
export const FAILURE_WINDOW_MS = 15 * MINUTE;
/** From this many failures on, each further failure makes the next attempt wait. */
export const SLOW_DOWN_AFTER = 5;
/** This many failures lock the key for LOCK_MS. */
export const LOCK_AFTER = 10;
export const LOCK_MS = 15 * MINUTE;

/** The wait imposed after the n-th failure in a window: none, then 5 s doubling, then the lock. */
export function waitAfterFailure(failures: number): number {
  if (failures >= LOCK_AFTER) return LOCK_MS;
  if (failures >= SLOW_DOWN_AFTER) return 5 * SECOND * 2 ** (failures - SLOW_DOWN_AFTER);
  return 0;
}

export function accountKey(sub: string): string {
  return `account:${sub}`;
}

export function addressKey(address: string): string {
  return `address:${address}`;
}

/** When the next attempt for these keys is allowed, or undefined when it is allowed now. */
export async function blockedUntil(db: Db, clock: Clock, keys: readonly string[]): Promise<number | undefined> {
  const until = await store.latestLock(db, keys);
  return until !== undefined && until > clock() ? until : undefined;
}

/** Counts a failed attempt on every key. Returns when the next attempt is allowed, if it must wait. */
export async function recordFailure(db: Db, clock: Clock, keys: readonly string[]): Promise<number | undefined> {
  const now = clock();
  let latest: number | undefined;
  for (const key of keys) {
    const failures = await store.countFailure(db, key, now, FAILURE_WINDOW_MS);
    const wait = waitAfterFailure(failures);
    if (wait > 0) {
      await store.setLock(db, key, now + wait);
      latest = Math.max(latest ?? 0, now + wait);
    }
  }
  return latest;
}

/** A successful sign-in clears the account's counter (not the address's: one good account must not reset an attacker's count). */
export async function recordSuccess(db: Db, key: string): Promise<void> {
  await store.clearKey(db, key);
}

/** Removes counters that no longer slow anyone down (for a periodic sweep). */
export async function forgetStaleCounters(db: Db, clock: Clock): Promise<number> {
  const now = clock();
  return store.deleteStaleCounters(db, now - FAILURE_WINDOW_MS, now);
}
