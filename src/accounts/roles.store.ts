// The only place with queries on account roles (migration 0012).
import type { Db } from '../db/database.ts';

/** Adds the role; false when the person already held it. */
export async function insertRole(db: Db, sub: string, role: string, now: number): Promise<boolean> {
  const inserted = await db.insertInto('account_roles').values({ sub, role, granted_at: now }).onConflict((oc) => oc.columns(['sub', 'role']).doNothing()).returning('sub').executeTakeFirst();
  return inserted !== undefined;
}

/** Removes the role; false when the person did not hold it. */
export async function deleteRole(db: Db, sub: string, role: string): Promise<boolean> {
  const result = await db.deleteFrom('account_roles').where('sub', '=', sub).where('role', '=', role).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}

export async function rolesOf(db: Db, sub: string): Promise<string[]> {
  const rows = await db.selectFrom('account_roles').select('role').where('sub', '=', sub).orderBy('role').execute();
  return rows.map((r) => r.role);
}

export async function holdsRole(db: Db, sub: string, role: string): Promise<boolean> {
  return (await db.selectFrom('account_roles').select('sub').where('sub', '=', sub).where('role', '=', role).executeTakeFirst()) !== undefined;
}
