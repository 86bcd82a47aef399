// The admin console's own sessions (issue 27: "Its session is its own (short idle timeout, e.g. 15
// minutes)"). A table apart from the public `sessions`, a cookie of its own, and an id hashed under a
// purpose of its own: a public session cookie means nothing here and a console cookie nothing there.
import { HOUR, MINUTE, type Clock } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import { findAccount } from '../../accounts/accounts.ts';
import { keyedHash, newOpaqueToken } from '../../oauth/secrets.ts';
import * as store from './console-sessions.store.ts';

/** spec (issue 27): "short idle timeout, e.g. 15 minutes". */
export const CONSOLE_IDLE_MS = 15 * MINUTE;
/** However busy, a console session ends this long after sign-in. */
export const CONSOLE_LIFETIME_MS = 8 * HOUR;

export type ConsoleSession = { sub: string; checkedAt: number; idHash: string };

function idHash(key: Buffer, id: string): string {
  return keyedHash(key, `admin-console\n${id}`);
}

/** Starts a session after the password and the second factor; the previous one (if any) ends. */
export async function startConsoleSession(db: Db, key: Buffer, clock: Clock, input: { sub: string; ip: string | null; previousId?: string | undefined }): Promise<{ id: string }> {
  if (input.previousId) await store.deleteConsoleSession(db, idHash(key, input.previousId));
  const id = newOpaqueToken();
  const now = clock();
  await store.insertConsoleSession(db, { id_hash: idHash(key, id), sub: input.sub, created_at: now, last_seen_at: now, checked_at: now, expires_at: now + CONSOLE_LIFETIME_MS, ip: input.ip?.slice(0, 64) ?? null });
  return { id };
}

/**
 * The live session of a cookie value, its idle clock restarted; undefined when unknown, idle for 15
 * minutes, past its lifetime, or its account disabled.
 */
export async function findConsoleSession(db: Db, key: Buffer, clock: Clock, id: unknown): Promise<ConsoleSession | undefined> {
  if (typeof id !== 'string' || id.length === 0 || id.length > 100) return undefined;
  const hash = idHash(key, id);
  const row = await store.touchLiveConsoleSession(db, hash, clock(), CONSOLE_IDLE_MS);
  if (!row) return undefined;
  const account = await findAccount(db, row.sub);
  if (!account || account.disabled) return undefined;
  return { sub: row.sub, checkedAt: Number(row.checked_at), idHash: hash };
}

/** Records that the session just proved a second factor (a step-up confirmation). */
export async function markConsoleChecked(db: Db, clock: Clock, session: ConsoleSession): Promise<void> {
  await store.setConsoleCheckedAt(db, session.idHash, clock());
}

export async function endConsoleSession(db: Db, key: Buffer, id: string): Promise<void> {
  await store.deleteConsoleSession(db, idHash(key, id));
}

/** Ends every console session of the person ("End all sessions"). Returns how many ended. */
export function endConsoleSessionsOf(db: Db, sub: string): Promise<number> {
  return store.deleteConsoleSessionsOf(db, sub);
}

/** Removes sessions past their lifetime or idle timeout (never honoured anyway). */
export function forgetStaleConsoleSessions(db: Db, clock: Clock): Promise<number> {
  return store.deleteStaleConsoleSessions(db, clock(), CONSOLE_IDLE_MS);
}
