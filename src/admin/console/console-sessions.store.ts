// The only place with queries on admin console sessions (migration 0012).
import type { Db } from '../../db/database.ts';
import type { ConsoleSessionsTable } from '../../db/schema.ts';

export type ConsoleSessionRow = ConsoleSessionsTable;

export async function insertConsoleSession(db: Db, row: ConsoleSessionRow): Promise<void> {
  await db.insertInto('console_sessions').values(row).execute();
}

/**
 * The session, if it is live — within its lifetime and its idle timeout — moved to `now` in the same
 * statement (so two tabs never race a read and a write).
 */
export async function touchLiveConsoleSession(db: Db, idHash: string, now: number, idleMs: number): Promise<ConsoleSessionRow | undefined> {
  return db
    .updateTable('console_sessions')
    .set({ last_seen_at: now })
    .where('id_hash', '=', idHash)
    .where('expires_at', '>', now)
    .where('last_seen_at', '>', now - idleMs)
    .returningAll()
    .executeTakeFirst();
}

export async function setConsoleCheckedAt(db: Db, idHash: string, at: number): Promise<void> {
  await db.updateTable('console_sessions').set({ checked_at: at }).where('id_hash', '=', idHash).execute();
}

export async function deleteConsoleSession(db: Db, idHash: string): Promise<void> {
  await db.deleteFrom('console_sessions').where('id_hash', '=', idHash).execute();
}

export async function deleteConsoleSessionsOf(db: Db, sub: string): Promise<number> {
  const result = await db.deleteFrom('console_sessions').where('sub', '=', sub).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteStaleConsoleSessions(db: Db, now: number, idleMs: number): Promise<number> {
  const result = await db.deleteFrom('console_sessions').where((eb) => eb.or([eb('expires_at', '<=', now), eb('last_seen_at', '<=', now - idleMs)])).executeTakeFirst();
  return Number(result.numDeletedRows);
}
