// The only place with queries on personal API keys.
import type { Db } from '../../db/database.ts';
import type { ApiKeysTable } from '../../db/schema.ts';

export type ApiKeyRow = ApiKeysTable;

export async function insertKey(db: Db, row: ApiKeyRow): Promise<void> {
  await db.insertInto('api_keys').values(row).execute();
}

/** A key with its person's disabled flag, in one statement (the per-request check). */
export async function findKeyWithPerson(db: Db, id: string): Promise<(ApiKeyRow & { disabled: number }) | undefined> {
  return db
    .selectFrom('api_keys')
    .innerJoin('users', 'users.sub', 'api_keys.sub')
    .selectAll('api_keys')
    .select('users.disabled')
    .where('api_keys.id', '=', id)
    .executeTakeFirst();
}

export async function findKey(db: Db, id: string): Promise<ApiKeyRow | undefined> {
  return db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
}

/** A person's keys, newest first. */
export async function listKeysOf(db: Db, sub: string): Promise<ApiKeyRow[]> {
  return db.selectFrom('api_keys').selectAll().where('sub', '=', sub).orderBy('created_at', 'desc').orderBy('id', 'desc').execute();
}

/** Sets revoked_at unless set already; `sub` narrows it to the owner's keys when given. Returns whether such a key exists. */
export async function revokeKey(db: Db, id: string, now: number, sub?: string): Promise<boolean> {
  let update = db.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null);
  if (sub !== undefined) update = update.where('sub', '=', sub);
  await update.execute();
  const row = await findKey(db, id);
  return row !== undefined && (sub === undefined || row.sub === sub);
}

/** last_used_at, written only when it is older than `before` (one conditional UPDATE, no read). */
export async function touchKey(db: Db, id: string, now: number, before: number): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: now })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', before)]))
    .execute();
}
