// The only place with queries on account tokens (password-reset and e-mail-verification links).
import type { Db } from '../db/database.ts';
import type { AccountTokensTable } from '../db/schema.ts';

export type AccountTokenRow = AccountTokensTable;

export async function insertToken(db: Db, row: AccountTokenRow): Promise<void> {
  await db.insertInto('account_tokens').values(row).execute();
}

/** The token if it is unused and unexpired (nothing changes). */
export async function findUsableToken(db: Db, tokenHash: string, purpose: string, now: number): Promise<AccountTokenRow | undefined> {
  return db.selectFrom('account_tokens').selectAll().where('token_hash', '=', tokenHash).where('purpose', '=', purpose).where('used_at', 'is', null).where('expires_at', '>', now).executeTakeFirst();
}

export async function findToken(db: Db, tokenHash: string, purpose: string): Promise<AccountTokenRow | undefined> {
  return db.selectFrom('account_tokens').selectAll().where('token_hash', '=', tokenHash).where('purpose', '=', purpose).executeTakeFirst();
}

/**
 * Uses the token up: one conditional UPDATE, so of two concurrent uses exactly one gets the row back
 * (SQLite and PostgreSQL both support UPDATE … RETURNING).
 */
export async function useToken(db: Db, tokenHash: string, purpose: string, now: number): Promise<AccountTokenRow | undefined> {
  return db
    .updateTable('account_tokens')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('purpose', '=', purpose)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

/** Ends every other link of that purpose the person still holds. */
export async function deleteTokensOf(db: Db, sub: string, purpose: string): Promise<number> {
  const result = await db.deleteFrom('account_tokens').where('sub', '=', sub).where('purpose', '=', purpose).executeTakeFirst();
  return Number(result.numDeletedRows);
}

export async function deleteExpiredTokens(db: Db, before: number): Promise<number> {
  const result = await db.deleteFrom('account_tokens').where('expires_at', '<', before).executeTakeFirst();
  return Number(result.numDeletedRows);
}
