// The only place with queries on operator keys.
import type { Db } from '../db/database.ts';
import type { AdminKeysTable } from '../db/schema.ts';

export type AdminKeyRow = AdminKeysTable;

export async function insertKey(db: Db, row: AdminKeyRow): Promise<void> {
  await db.insertInto('admin_keys').values(row).execute();
}

export async function findKey(db: Db, id: string): Promise<AdminKeyRow | undefined> {
  return db.selectFrom('admin_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

export async function listKeys(db: Db): Promise<AdminKeyRow[]> {
  return db.selectFrom('admin_keys').selectAll().orderBy('created_at').orderBy('id').execute();
}

/** Sets revoked_at unless it is set already. Returns whether the key exists. */
export async function revokeKey(db: Db, id: string, now: number): Promise<boolean> {
  await db.updateTable('admin_keys').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
  return (await findKey(db, id)) !== undefined;
}

export async function touchKey(db: Db, id: string, now: number): Promise<void> {
  await db.updateTable('admin_keys').set({ last_used_at: now }).where('id', '=', id).execute();
}
