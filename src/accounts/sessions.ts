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

/**
 * `checkedAt`: when this session last proved the password or a second factor (null: never, e.g. from
 * before step-up existed). `authTime`: when the person signed in (the id_token's auth_time); `amr`: how
 * (RFC 8176 values); `sid`: a public id of the session for id_tokens and logout (never the cookie value).
 */
export type Session = { sub: string; expiresAt: number; checkedAt: number | null; authTime: number; amr: string[]; sid: string | null };

/** RFC 8176 methods of a sign-in: `pwd`, `otp`, `hwk` (a passkey), `mfa` when two factors were used. */
export type SignInMethods = readonly string[];
export const PASSWORD_ONLY: SignInMethods = ['pwd'];

function parseAmr(text: string | null | undefined): string[] {
  if (!text) return [...PASSWORD_ONLY];
  const value = JSON.parse(text) as unknown;
  return Array.isArray(value) && value.every((m) => typeof m === 'string') ? value : [...PASSWORD_ONLY];
}

function idHash(key: Buffer, origin: string, id: string): string {
  return keyedHash(key, `${origin}\n${id}`);
}

/**
 * Starts a session after a successful sign-in. The previous session (if any) is ended, so the id
 * always changes at sign-in (no session fixation). Returns the new id for the cookie.
 */
export async function startSession(
  db: Db,
  key: Buffer,
  clock: Clock,
  input: { sub: string; origin: string; previousId?: string | undefined; client?: SessionClient | undefined; amr?: SignInMethods | undefined },
): Promise<{ id: string; session: Session }> {
  if (input.previousId) await store.deleteSession(db, idHash(key, input.origin, input.previousId));
  const id = newOpaqueToken();
  const now = clock();
  const expiresAt = now + SESSION_LIFETIME_MS;
  const client = recordedClient(input.client);
  const amr = [...(input.amr ?? PASSWORD_ONLY)];
  const sid = newOpaqueToken().slice(0, 22);
  await store.insertSession(db, { id_hash: idHash(key, input.origin, id), sub: input.sub, created_at: now, expires_at: expiresAt, user_agent: client.userAgent, ip: client.ip, checked_at: now, amr: JSON.stringify(amr), sid });
  // A session starts right after the password (and the second step, when due): it counts as checked now.
  return { id, session: { sub: input.sub, expiresAt, checkedAt: now, authTime: now, amr, sid } };
}

/** Where a sign-in came from, shown in the person's list of sessions: the browser and the client address. */
export type SessionClient = { userAgent?: string | undefined; ip?: string | undefined };

/** At most this much of a User-Agent is kept: enough to name the browser and system. */
const USER_AGENT_MAX = 300;

function recordedClient(client: SessionClient | undefined): { userAgent: string | null; ip: string | null } {
  // eslint-disable-next-line no-control-regex
  const clean = (value: string | undefined, max: number) => (value ? value.replace(/[\u0000-\u001f\u007f]/g, '').slice(0, max) || null : null);
  return { userAgent: clean(client?.userAgent, USER_AGENT_MAX), ip: clean(client?.ip, 64) };
}

/** One of a person's sessions as their account page lists it. `handle` names it in a "Sign out" form. */
export type SessionListing = { handle: string; signedInAt: number; expiresAt: number; userAgent: string | null; ip: string | null; current: boolean };

/**
 * The person's live sessions, newest first; `current` marks the one this cookie belongs to. The handle
 * is the stored keyed hash: it identifies the session to its owner but cannot be used as a cookie.
 */
export async function listSessions(db: Db, key: Buffer, clock: Clock, sub: string, current: { id: string; origin: string } | undefined): Promise<SessionListing[]> {
  const currentHash = current ? idHash(key, current.origin, current.id) : undefined;
  const rows = await store.listLiveSessionsOf(db, sub, clock());
  return rows.map((row) => ({ handle: row.id_hash, signedInAt: row.created_at, expiresAt: row.expires_at, userAgent: row.user_agent, ip: row.ip, current: row.id_hash === currentHash }));
}

/** Signs out one of the person's sessions by its handle; false when it is not theirs or already ended. */
export function endSessionByHandle(db: Db, sub: string, handle: string): Promise<boolean> {
  if (handle.length === 0 || handle.length > 100) return Promise.resolve(false);
  return store.deleteSessionOf(db, sub, handle);
}

/** Signs out every session of the person except the one of this cookie. Returns how many ended. */
export function endOtherSessions(db: Db, key: Buffer, sub: string, current: { id: string; origin: string }): Promise<number> {
  return store.deleteSessionsOfExcept(db, sub, idHash(key, current.origin, current.id));
}

/** The live session for a cookie value on this origin; undefined when unknown, expired, or its account is disabled. */
export async function findSession(db: Db, key: Buffer, clock: Clock, id: string, origin: string): Promise<Session | undefined> {
  if (id.length === 0 || id.length > 100) return undefined;
  const row = await store.findLiveSession(db, idHash(key, origin, id), clock());
  if (!row) return undefined;
  const account = await findAccount(db, row.sub);
  if (!account || account.disabled) return undefined;
  return { sub: row.sub, expiresAt: row.expires_at, checkedAt: row.checked_at, authTime: row.created_at, amr: parseAmr(row.amr), sid: row.sid ?? null };
}

/** Records that this session just proved the password or a second factor (a step-up confirmation). */
export async function markSessionChecked(db: Db, key: Buffer, clock: Clock, id: string, origin: string): Promise<number> {
  const now = clock();
  await store.setCheckedAt(db, idHash(key, origin, id), now);
  return now;
}

export async function endSession(db: Db, key: Buffer, id: string, origin: string): Promise<void> {
  await store.deleteSession(db, idHash(key, origin, id));
}

/** Removes expired sessions (for a periodic sweep; an expired session is never honoured anyway). */
export async function forgetExpiredSessions(db: Db, clock: Clock): Promise<number> {
  return store.deleteExpiredSessions(db, clock());
}
