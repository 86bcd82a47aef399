// Queries for operators' views of accounts and sessions (paging every account, a person's sessions).
// Kept apart from accounts.store.ts and sessions.store.ts, which others are changing; both files are
// the accounts domain's, and only account-admin.ts calls this one.
import type { Db } from '../db/database.ts';
import type { SessionsTable, UsersTable } from '../db/schema.ts';

/** Accounts oldest first, after (created_at, sub) when given. */
export async function listUsersAfter(db: Db, after: { createdAt: number; sub: string } | undefined, limit: number): Promise<UsersTable[]> {
  let q = db.selectFrom('users').selectAll();
  if (after) q = q.where((eb) => eb.or([eb('created_at', '>', after.createdAt), eb.and([eb('created_at', '=', after.createdAt), eb('sub', '>', after.sub)])]));
  return q.orderBy('created_at').orderBy('sub').limit(limit).execute();
}

/** A person's sessions that have not expired, newest first. */
export async function listLiveSessionsOf(db: Db, sub: string, now: number): Promise<SessionsTable[]> {
  return db.selectFrom('sessions').selectAll().where('sub', '=', sub).where('expires_at', '>', now).orderBy('created_at', 'desc').execute();
}

export async function countUsers(db: Db): Promise<number> {
  const row = await db.selectFrom('users').select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

/** Sessions (on either public host) that have not expired. */
export async function countLiveSessions(db: Db, now: number): Promise<number> {
  const row = await db.selectFrom('sessions').select((eb) => eb.fn.countAll<number | string | bigint>().as('n')).where('expires_at', '>', now).executeTakeFirstOrThrow();
  return Number(row.n);
}
