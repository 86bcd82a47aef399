// The only place with queries on sign-in sessions.
import type { Db } from '../db/database.ts';
import type { SessionsTable } from '../db/schema.ts';

export type SessionRow = SessionsTable;

export async function insertSession(db: Db, row: SessionRow): Promise<void> {
  await db.insertInto('sessions').values(row).execute();
}

export async function findLiveSession(db: Db, idHash: string, now: number): Promise<SessionRow | undefined> {
  return db.selectFrom('sessions').selectAll().where('id_hash', '=', idHash).where('expires_at', '>', now).executeTakeFirst();
}

export async function deleteSession(db: Db, idHash: string): Promise<void> {
  await db.deleteFrom('sessions').where('id_hash', '=', idHash).execute();
}

export async function deleteSessionsOf(db: Db, sub: string): Promise<number> {
  const result = await db.deleteFrom('sessions').where('sub', '=', sub).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** A person's live sessions, newest sign-in first. */
export async function listLiveSessionsOf(db: Db, sub: string, now: number): Promise<SessionRow[]> {
  return db.selectFrom('sessions').selectAll().where('sub', '=', sub).where('expires_at', '>', now).orderBy('created_at', 'desc').orderBy('id_hash').execute();
}

/** Ends one session of that person (never another person's, whatever the hash). */
export async function deleteSessionOf(db: Db, sub: string, idHash: string): Promise<boolean> {
  const result = await db.deleteFrom('sessions').where('sub', '=', sub).where('id_hash', '=', idHash).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Ends every session of that person but one. */
export async function deleteSessionsOfExcept(db: Db, sub: string, keepIdHash: string): Promise<number> {
  const result = await db.deleteFrom('sessions').where('sub', '=', sub).where('id_hash', '!=', keepIdHash).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteExpiredSessions(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('sessions').where('expires_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** When the session last proved the password or a factor (step-up). */
export async function setCheckedAt(db: Db, idHash: string, at: number): Promise<void> {
  await db.updateTable('sessions').set({ checked_at: at }).where('id_hash', '=', idHash).execute();
}
