// What operators need beyond accounts.ts: every account a page at a time, and a person's sessions
// (list, end all). The admin API calls these; the rules for changing an account stay in accounts.ts.
import { createHash, timingSafeEqual } from 'node:crypto';
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { AccountError, findAccount, toProfile, type Profile } from './accounts.ts';
import * as store from './account-admin.store.ts';
import * as sessionStore from './sessions.store.ts';

export const DEFAULT_ACCOUNT_PAGE = 50;
export const MAX_ACCOUNT_PAGE = 200;

// The cursor is opaque to clients: where the last account of the page sits in (created_at, sub) order.
function encodeCursor(createdAt: number, sub: string): string {
  return Buffer.from(`u:${createdAt}:${sub}`).toString('base64url');
}

function decodeCursor(cursor: string): { createdAt: number; sub: string } {
  const match = /^u:(\d{1,15}):(.{1,200})$/s.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!match) throw new AccountCursorError();
  return { createdAt: Number(match[1]), sub: match[2]! };
}

export class AccountCursorError extends Error {
  readonly code = 'invalid_cursor';
  constructor() {
    super('The cursor is not one this server handed out. Start again without it.');
    this.name = 'AccountCursorError';
  }
}

/** Every account, oldest first, one page at a time. */
export async function listAccountsPage(db: Db, page: { cursor?: string | undefined; limit?: number | undefined } = {}): Promise<{ accounts: Profile[]; next_cursor: string | null }> {
  const limit = Math.min(Math.max(page.limit ?? DEFAULT_ACCOUNT_PAGE, 1), MAX_ACCOUNT_PAGE);
  const rows = await store.listUsersAfter(db, page.cursor === undefined ? undefined : decodeCursor(page.cursor), limit + 1);
  const pageRows = rows.slice(0, limit);
  const last = pageRows.at(-1);
  return { accounts: pageRows.map(toProfile), next_cursor: rows.length > limit && last ? encodeCursor(Number(last.created_at), last.sub) : null };
}

/**
 * A session as an operator sees it: a public id to end it by, when it began and when it ends — never
 * its cookie value or the keyed hash stored for it (the id is a one-way digest of that hash).
 */
export type SessionView = { id: string; created_at: string; expires_at: string };

/** The public id of a stored session: a digest of its stored hash (which itself never leaves the database). */
export function sessionPublicId(idHash: string): string {
  return createHash('sha256').update(`signet operator session id\n${idHash}`).digest('base64url').slice(0, 22);
}

async function existing(db: Db, sub: string): Promise<Profile> {
  const account = await findAccount(db, sub);
  if (!account) throw new AccountError('not_found', `no account with sub ${sub}`);
  return account;
}

/** The person's live sessions, newest first. */
export async function listSessionsOf(db: Db, clock: Clock, sub: string): Promise<SessionView[]> {
  await existing(db, sub);
  const rows = await store.listLiveSessionsOf(db, sub, clock());
  return rows.map((r) => ({ id: sessionPublicId(r.id_hash), created_at: new Date(Number(r.created_at)).toISOString(), expires_at: new Date(Number(r.expires_at)).toISOString() }));
}

/**
 * Ends one live session of the person, named by its public id (SessionView.id): that browser must sign
 * in again; the person's other sessions go on. A person has few sessions, so each one's id is worked
 * out and compared (in constant time) rather than stored.
 */
export async function endSessionOf(db: Db, clock: Clock, sub: string, id: string): Promise<void> {
  await existing(db, sub);
  const wanted = Buffer.from(id);
  const rows = id.length === 22 ? await store.listLiveSessionsOf(db, sub, clock()) : [];
  const match = rows.find((r) => {
    const candidate = Buffer.from(sessionPublicId(r.id_hash));
    return candidate.length === wanted.length && timingSafeEqual(candidate, wanted);
  });
  if (!match || !(await sessionStore.deleteSessionOf(db, sub, match.id_hash))) {
    throw new AccountError('not_found', `no live session with id ${id.slice(0, 40)} for this account (it may have ended already)`);
  }
}

/** Ends every session of the person (they must sign in again everywhere). Returns how many ended. */
export async function endSessionsOf(db: Db, sub: string): Promise<number> {
  await existing(db, sub);
  return sessionStore.deleteSessionsOf(db, sub);
}

/** How many accounts exist (the console's overview). */
export function countAccounts(db: Db): Promise<number> {
  return store.countUsers(db);
}

/** How many public sessions are live now (the console's overview). */
export function countLiveSessions(db: Db, clock: Clock): Promise<number> {
  return store.countLiveSessions(db, clock());
}
