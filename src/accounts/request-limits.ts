// How often account mail may be asked for. Each rule is a count per key in a fixed window, kept in the
// database so every server process sees it: per client address (one machine asking for many accounts)
// and per account or e-mail address (one mailbox flooded from many machines).
import { HOUR, type Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import * as store from './request-limits.store.ts';

export type RequestLimit = { max: number; windowMs: number };

/** Password-reset requests: 20 an hour from one client address, 3 an hour for one e-mail address. */
export const RESET_PER_CLIENT: RequestLimit = { max: 20, windowMs: HOUR };
export const RESET_PER_EMAIL: RequestLimit = { max: 3, windowMs: HOUR };
/** Verification links a signed-in person may ask for: 5 an hour. */
export const VERIFY_PER_ACCOUNT: RequestLimit = { max: 5, windowMs: HOUR };
/** New accounts from one client address: 10 an hour; mail about one address from sign-up: 3 an hour. */
export const SIGNUP_PER_CLIENT: RequestLimit = { max: 10, windowMs: HOUR };
export const SIGNUP_PER_EMAIL: RequestLimit = { max: 3, windowMs: HOUR };

export type LimitResult = { allowed: true } | { allowed: false; retryAt: number };

/** Counts a request under `key` and says whether it is within the limit (and, if not, when it will be). */
export async function countAndCheck(db: Db, clock: Clock, key: string, limit: RequestLimit): Promise<LimitResult> {
  const now = clock();
  const count = await store.countRequest(db, key, now, limit.windowMs);
  if (count <= limit.max) return { allowed: true };
  const started = (await store.windowStart(db, key)) ?? now;
  return { allowed: false, retryAt: started + limit.windowMs };
}

/** Removes counters whose window ended a while ago (the periodic sweep). */
export function forgetStaleRequestCounters(db: Db, clock: Clock): Promise<number> {
  return store.deleteCountersBefore(db, clock() - 2 * HOUR);
}
