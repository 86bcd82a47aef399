// Forgetting expired codes and tokens, so the tables hold only what can still matter.
import { DAY, type Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import * as store from './tokens.store.ts';

/** Expired rows are kept this long after expiry, for support questions and log correlation. */
const GRACE_MS = DAY;

export async function forgetExpiredCodesAndTokens(db: Db, clock: Clock): Promise<number> {
  const cutoff = clock() - GRACE_MS;
  return store.deleteExpired(db, cutoff, cutoff, cutoff);
}
