// One-click unsubscribe (RFC 8058): a genuine token turns e-mail off for its category, for its person.
// No session is needed: the signed token is the proof, as the mail provider posting it has no cookie.
import { findAccount } from '../../accounts/accounts.ts';
import type { Clock } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import { updatePreferences } from '../preferences.ts';
import { verifyUnsubscribeToken, type UnsubscribeClaim } from './unsubscribe-token.ts';

export type UnsubscribeContext = { db: Db; clock: Clock; unsubscribeKey: Buffer };

/** Who and what a token unsubscribes, without changing anything (the confirmation page); undefined when it is not genuine. */
export async function readUnsubscribeToken(ctx: UnsubscribeContext, token: string): Promise<UnsubscribeClaim | undefined> {
  const claim = verifyUnsubscribeToken(ctx.unsubscribeKey, token);
  if (!claim || !(await findAccount(ctx.db, claim.sub))) return undefined;
  return claim;
}

/** Turns the token's category's e-mail off. Doing it twice is fine. Undefined (nothing changed) for a token that is not genuine. */
export async function unsubscribe(ctx: UnsubscribeContext, token: string): Promise<UnsubscribeClaim | undefined> {
  const claim = await readUnsubscribeToken(ctx, token);
  if (!claim) return undefined;
  await updatePreferences(ctx.db, ctx.clock, claim.sub, { categories: { [claim.category]: { email: false } } });
  return claim;
}
