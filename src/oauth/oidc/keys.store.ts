// The only place with queries on the id_token signing keys.
import type { Db } from '../../db/database.ts';
import type { SigningKeysTable } from '../../db/schema.ts';

export type SigningKeyRow = SigningKeysTable;

export async function insertKey(db: Db, row: SigningKeyRow): Promise<void> {
  await db.insertInto('signing_keys').values(row).execute();
}

/** Every key, newest first (the JWKS, `signet keys list`). */
export async function listKeys(db: Db): Promise<SigningKeyRow[]> {
  return db.selectFrom('signing_keys').selectAll().orderBy('created_at', 'desc').orderBy('kid').execute();
}

/** The key that signs for this algorithm: the newest one not rotated out. */
export async function findCurrentKey(db: Db, alg: string): Promise<SigningKeyRow | undefined> {
  return db.selectFrom('signing_keys').selectAll().where('alg', '=', alg).where('rotated_at', 'is', null).orderBy('created_at', 'desc').orderBy('kid', 'desc').limit(1).executeTakeFirst();
}

export async function findKey(db: Db, kid: string): Promise<SigningKeyRow | undefined> {
  return db.selectFrom('signing_keys').selectAll().where('kid', '=', kid).executeTakeFirst();
}

/** Marks every key of `alg` but `keep` as rotated out (it stops signing; it stays in the JWKS). */
export async function markRotated(db: Db, alg: string, keep: string, now: number): Promise<number> {
  const result = await db.updateTable('signing_keys').set({ rotated_at: now }).where('alg', '=', alg).where('kid', '!=', keep).where('rotated_at', 'is', null).executeTakeFirst();
  return Number(result.numUpdatedRows);
}

/** Removes one rotated-out key; false when it is unknown or still signs. */
export async function deleteRotatedKey(db: Db, kid: string): Promise<boolean> {
  const result = await db.deleteFrom('signing_keys').where('kid', '=', kid).where('rotated_at', 'is not', null).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Removes the keys rotated out before `before`; returns their kids. */
export async function deleteKeysRotatedBefore(db: Db, before: number): Promise<string[]> {
  const rows = await db.deleteFrom('signing_keys').where('rotated_at', '<', before).returning('kid').execute();
  return rows.map((r) => r.kid);
}
