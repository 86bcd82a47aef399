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

/** The roles of each of these accounts (export). */
export async function rolesOfMany(db: Db, subs: readonly string[]): Promise<Map<string, string[]>> {
  const out = new Map<string, string[]>();
  if (subs.length === 0) return out;
  const rows = await db.selectFrom('account_roles').select(['sub', 'role']).where('sub', 'in', subs).orderBy('role').execute();
  for (const row of rows) out.set(row.sub, [...(out.get(row.sub) ?? []), row.role]);
  return out;
}
