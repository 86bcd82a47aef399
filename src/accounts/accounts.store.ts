// The only place with queries on users.
import type { Db } from '../db/database.ts';
import type { UsersTable } from '../db/schema.ts';

export type UserRow = UsersTable;

export async function insertUser(db: Db, row: UserRow): Promise<void> {
  await db.insertInto('users').values(row).execute();
}

export async function findUserBySub(db: Db, sub: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('sub', '=', sub).executeTakeFirst();
}

export async function findUserByEmail(db: Db, email: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('email', '=', email).executeTakeFirst();
}

export async function findUserByPhone(db: Db, phone: string): Promise<UserRow | undefined> {
  return db.selectFrom('users').selectAll().where('phone_number', '=', phone).executeTakeFirst();
}

export async function listUsers(db: Db): Promise<UserRow[]> {
  return db.selectFrom('users').selectAll().orderBy('created_at').orderBy('sub').execute();
}

export async function updateUser(db: Db, sub: string, changes: Partial<Omit<UserRow, 'sub' | 'created_at'>>): Promise<boolean> {
  const result = await db.updateTable('users').set(changes).where('sub', '=', sub).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Marks the e-mail verified, only while the account still has that address. */
export async function setEmailVerified(db: Db, sub: string, email: string, now: number): Promise<boolean> {
  const result = await db.updateTable('users').set({ email_verified: 1, updated_at: now }).where('sub', '=', sub).where('email', '=', email).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

export async function deleteUser(db: Db, sub: string): Promise<boolean> {
  const result = await db.deleteFrom('users').where('sub', '=', sub).executeTakeFirst();
  return result.numDeletedRows > 0n;
}

/** Largest numeric legacy sub, so a new legacy id can follow it. */
export async function legacyNumericSubs(db: Db): Promise<string[]> {
  const rows = await db.selectFrom('users').select('sub').where('sub', 'not like', '%-%').execute();
  return rows.map((r) => r.sub).filter((s) => /^\d+$/.test(s));
}

/** Sets the password hash only while it is still `expected` (a password set meanwhile is kept). */
export async function replacePasswordHashIf(db: Db, sub: string, expected: string, passwordHash: string, now: number): Promise<boolean> {
  const result = await db.updateTable('users').set({ password_hash: passwordHash, updated_at: now }).where('sub', '=', sub).where('password_hash', '=', expected).executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/** Accounts in sub order, a page at a time (export reads them all without holding them all). */
export async function pageUsers(db: Db, afterSub: string | undefined, limit: number): Promise<UserRow[]> {
  let query = db.selectFrom('users').selectAll().orderBy('sub').limit(limit);
  if (afterSub !== undefined) query = query.where('sub', '>', afterSub);
  return query.execute();
}
