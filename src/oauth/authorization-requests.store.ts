// The only place with queries on pending authorization requests.
import type { Db } from '../db/database.ts';
import type { AuthorizationRequestsTable } from '../db/schema.ts';

export type AuthorizationRequestRow = AuthorizationRequestsTable;

export async function insertRequest(db: Db, row: AuthorizationRequestRow): Promise<void> {
  await db.insertInto('authorization_requests').values(row).execute();
}

/** A pending request that is neither finished nor expired. */
export async function findOpenRequest(db: Db, idHash: string, now: number): Promise<AuthorizationRequestRow | undefined> {
  return db
    .selectFrom('authorization_requests')
    .selectAll()
    .where('id_hash', '=', idHash)
    .where('completed_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/**
 * Marks a request finished if, and only if, it was still open. One conditional UPDATE … RETURNING:
 * of two concurrent submissions (double click, two tabs), exactly one gets the row back.
 */
export async function completeRequest(db: Db, idHash: string, now: number): Promise<AuthorizationRequestRow | undefined> {
  return db
    .updateTable('authorization_requests')
    .set({ completed_at: now })
    .where('id_hash', '=', idHash)
    .where('completed_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

/** Removes requests that expired before `before`. */
export async function deleteExpiredRequests(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('authorization_requests').where('expires_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
