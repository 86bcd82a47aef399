// The only place with queries on grants (what a person allowed an application to see).
import type { Db } from '../db/database.ts';
import type { GrantsTable } from '../db/schema.ts';

export type GrantRow = GrantsTable;

export async function findGrant(db: Db, sub: string, clientId: string): Promise<GrantRow | undefined> {
  return db.selectFrom('grants').selectAll().where('sub', '=', sub).where('client_id', '=', clientId).executeTakeFirst();
}

export async function listGrantsOf(db: Db, sub: string): Promise<GrantRow[]> {
  return db.selectFrom('grants').selectAll().where('sub', '=', sub).orderBy('first_authorized_at').orderBy('client_id').execute();
}

/**
 * Inserts the grant unless one exists; true when it was inserted (the application is authorized for
 * the first time). Concurrent first authorizations insert once: the other finds the row and gets false.
 */
export async function insertGrantIfAbsent(db: Db, sub: string, clientId: string, scope: string, now: number): Promise<boolean> {
  const inserted = await db
    .insertInto('grants')
    .values({ sub, client_id: clientId, scope, first_authorized_at: now, updated_at: now, muted: 0 })
    .onConflict((oc) => oc.columns(['sub', 'client_id']).doNothing())
    .returning('sub')
    .executeTakeFirst();
  return inserted !== undefined;
}

/** Replaces the scope of an existing grant. `first_authorized_at` keeps the first time (the refresh
 * chain's 30 days count from it elsewhere); `muted` is left alone. */
export async function updateGrantScope(db: Db, sub: string, clientId: string, scope: string, now: number): Promise<void> {
  await db.updateTable('grants').set({ scope, updated_at: now }).where('sub', '=', sub).where('client_id', '=', clientId).execute();
}

export async function deleteGrant(db: Db, sub: string, clientId: string): Promise<boolean> {
  const result = await db.deleteFrom('grants').where('sub', '=', sub).where('client_id', '=', clientId).executeTakeFirst();
  return result.numDeletedRows > 0n;
}
