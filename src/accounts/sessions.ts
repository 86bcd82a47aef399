// Sign-in sessions, kept in the database so any server process can read them. The id is 32 random
// bytes handed out in a cookie and stored only as a keyed hash bound to the served origin, so a
// cookie from one host means nothing on the other.
import type { Clock } from '../config/clock.ts';
import { DAY } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { keyedHash, newOpaqueToken } from '../oauth/secrets.ts';
import { findAccount } from './accounts.ts';
import * as store from './sessions.store.ts';

/** Sessions end this long after sign-in. */
export const SESSION_LIFETIME_MS = 14 * DAY;

export type Session = { sub: string; expiresAt: number };

function idHash(key: Buffer, origin: string, id: string): string {
  return keyedHash(key, `${origin}\n${id}`);
}

/**
 * Starts a session after a successful sign-in. The previous session (if any) is ended, so the id
 * always changes at sign-in (no session fixation). Returns the new id for the cookie.
 */
export async function startSession(db: Db, key: Buffer, clock: Clock, input: { sub: string; origin: string; previousId?: string | undefined }): Promise<{ id: string; expiresAt: number }> {
  if (input.previousId) await store.deleteSession(db, idHash(key, input.origin, input.previousId));
  const id = newOpaqueToken();
  const now = clock();
  const expiresAt = now + SESSION_LIFETIME_MS;
  await store.insertSession(db, { id_hash: idHash(key, input.origin, id), sub: input.sub, created_at: now, expires_at: expiresAt });
  return { id, expiresAt };
}

/** The live session for a cookie value on this origin; undefined when unknown, expired, or its account is disabled. */
export async function findSession(db: Db, key: Buffer, clock: Clock, id: string, origin: string): Promise<Session | undefined> {
  if (id.length === 0 || id.length > 100) return undefined;
  const row = await store.findLiveSession(db, idHash(key, origin, id), clock());
  if (!row) return undefined;
  const account = await findAccount(db, row.sub);
  if (!account || account.disabled) return undefined;
  return { sub: row.sub, expiresAt: row.expires_at };
}

export async function endSession(db: Db, key: Buffer, id: string, origin: string): Promise<void> {
  await store.deleteSession(db, idHash(key, origin, id));
}

/** Removes expired sessions (for a periodic sweep; an expired session is never honoured anyway). */
export async function forgetExpiredSessions(db: Db, clock: Clock): Promise<number> {
  return store.deleteExpiredSessions(db, clock());
}
