// The only place with queries on authorization codes, access tokens and refresh tokens.
// Rules that must hold under concurrency are single conditional statements here.
import type { Db } from '../db/database.ts';
import type { AccessTokensTable, AuthorizationCodesTable, RefreshTokensTable } from '../db/schema.ts';

export type CodeRow = AuthorizationCodesTable;
export type AccessTokenRow = AccessTokensTable;
export type RefreshTokenRow = RefreshTokensTable;

/**
 * Runs `work` in one database transaction (both dialects): consuming a code or a refresh token and
 * inserting the tokens that replace it commit together or not at all.
 */
export function inTransaction<T>(db: Db, work: (trx: Db) => Promise<T>): Promise<T> {
  return db.transaction().execute(work);
}

export async function insertCode(db: Db, row: CodeRow): Promise<void> {
  await db.insertInto('authorization_codes').values(row).execute();
}

export async function findCode(db: Db, codeHash: string): Promise<CodeRow | undefined> {
  return db.selectFrom('authorization_codes').selectAll().where('code_hash', '=', codeHash).executeTakeFirst();
}

/** Marks a code redeemed if, and only if, nobody redeemed it before. Returns whether this call won. */
export async function redeemCode(db: Db, codeHash: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable('authorization_codes')
    .set({ redeemed_at: now })
    .where('code_hash', '=', codeHash)
    .where('redeemed_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return result.numUpdatedRows === 1n;
}

export async function insertAccessToken(db: Db, row: AccessTokenRow): Promise<void> {
  await db.insertInto('access_tokens').values(row).execute();
}

export async function insertRefreshToken(db: Db, row: RefreshTokenRow): Promise<void> {
  await db.insertInto('refresh_tokens').values(row).execute();
}

export async function findAccessToken(db: Db, tokenHash: string): Promise<AccessTokenRow | undefined> {
  return db.selectFrom('access_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

export async function findRefreshToken(db: Db, tokenHash: string): Promise<RefreshTokenRow | undefined> {
  return db.selectFrom('refresh_tokens').selectAll().where('token_hash', '=', tokenHash).executeTakeFirst();
}

/**
 * Rotation: marks the refresh token rotated (and so revoked: spec "the previous one is revoked at once")
 * if, and only if, it is the live latest one of its chain for this client and the chain has not expired.
 * One conditional UPDATE … RETURNING: of two concurrent calls, exactly one gets the row back; on
 * PostgreSQL the other blocks on the row lock until the winner commits, then sees the rotated row.
 */
export async function rotateRefreshToken(db: Db, tokenHash: string, clientId: string, now: number): Promise<RefreshTokenRow | undefined> {
  return db
    .updateTable('refresh_tokens')
    .set({ rotated_at: now, revoked_at: now })
    .where('token_hash', '=', tokenHash)
    .where('client_id', '=', clientId)
    .where('rotated_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('chain_expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}

const TOKEN_TABLES = ['access_tokens', 'refresh_tokens'] as const;
export type TokenKind = 'access' | 'refresh';

/** How many tokens of each kind a mass revocation revoked (those already revoked are not counted). */
export type RevokedCounts = { access: number; refresh: number };

/** Revokes every access and refresh token of one person for one application. */
export async function revokeAllForUserAndClient(db: Db, sub: string, clientId: string, now: number): Promise<RevokedCounts> {
  const counts = { access: 0, refresh: 0 };
  for (const table of TOKEN_TABLES) {
    const result = await db.updateTable(table).set({ revoked_at: now }).where('sub', '=', sub).where('client_id', '=', clientId).where('revoked_at', 'is', null).executeTakeFirst();
    counts[table === 'access_tokens' ? 'access' : 'refresh'] = Number(result.numUpdatedRows);
  }
  return counts;
}

/** Revokes every token issued from one code (the chain that code started). */
export async function revokeChain(db: Db, chainId: string, now: number): Promise<RevokedCounts> {
  const counts = { access: 0, refresh: 0 };
  for (const table of TOKEN_TABLES) {
    const result = await db.updateTable(table).set({ revoked_at: now }).where('chain_id', '=', chainId).where('revoked_at', 'is', null).executeTakeFirst();
    counts[table === 'access_tokens' ? 'access' : 'refresh'] = Number(result.numUpdatedRows);
  }
  return counts;
}

/** Revokes one access or refresh token if it belongs to the client. Returns whether something was revoked. */
export async function revokeToken(db: Db, kind: TokenKind, tokenHash: string, clientId: string, now: number): Promise<boolean> {
  const result = await db
    .updateTable(kind === 'access' ? 'access_tokens' : 'refresh_tokens')
    .set({ revoked_at: now })
    .where('token_hash', '=', tokenHash)
    .where('client_id', '=', clientId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return result.numUpdatedRows > 0n;
}

/**
 * Deletes what can no longer be used: codes past their lifetime (plus a margin), access tokens past
 * their expiry, refresh tokens whose chain has ended (a rotated one is kept until then, so a replay
 * is still recognised). Returns how many rows went.
 */
export async function deleteExpired(db: Db, codesBefore: number, accessTokensBefore: number, chainsBefore: number): Promise<number> {
  const codes = await db.deleteFrom('authorization_codes').where('expires_at', '<', codesBefore).executeTakeFirst();
  const access = await db.deleteFrom('access_tokens').where('expires_at', '<', accessTokensBefore).executeTakeFirst();
  const refresh = await db.deleteFrom('refresh_tokens').where('chain_expires_at', '<', chainsBefore).executeTakeFirst();
  return Number(codes.numDeletedRows + access.numDeletedRows + refresh.numDeletedRows);
}
