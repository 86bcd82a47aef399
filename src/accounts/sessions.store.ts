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

export async function deleteExpiredSessions(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('sessions').where('expires_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
