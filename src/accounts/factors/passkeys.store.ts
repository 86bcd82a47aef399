// The only place with queries on passkeys and their ceremony challenges.
import type { Db } from '../../db/database.ts';
import type { PasskeyChallengesTable, PasskeysTable } from '../../db/schema.ts';

export type PasskeyRow = PasskeysTable;
export type ChallengeRow = PasskeyChallengesTable;

export async function insertPasskey(db: Db, row: PasskeyRow): Promise<void> {
  await db.insertInto('passkeys').values(row).execute();
}

export function findPasskeyByCredentialId(db: Db, credentialId: string): Promise<PasskeyRow | undefined> {
  return db.selectFrom('passkeys').selectAll().where('credential_id', '=', credentialId).executeTakeFirst();
}

/** A person's passkeys, oldest first. */
export function listPasskeysOf(db: Db, sub: string): Promise<PasskeyRow[]> {
  return db.selectFrom('passkeys').selectAll().where('sub', '=', sub).orderBy('created_at').orderBy('id').execute();
}

export async function countPasskeysOf(db: Db, sub: string): Promise<number> {
  const row = await db.selectFrom('passkeys').select((eb) => eb.fn.countAll<number | string>().as('n')).where('sub', '=', sub).executeTakeFirst();
  return Number(row?.n ?? 0);
}

/** Removes every passkey of the person (an operator's reset); how many went. */
export async function deletePasskeysOf(db: Db, sub: string): Promise<number> {
  const result = await db.deleteFrom('passkeys').where('sub', '=', sub).executeTakeFirst();
  return Number(result.numDeletedRows);
}

/** Removes one of the person's passkeys; the row removed, or undefined when it was not theirs (or gone). */
export function deletePasskey(db: Db, sub: string, id: string): Promise<PasskeyRow | undefined> {
  return db.deleteFrom('passkeys').where('sub', '=', sub).where('id', '=', id).returningAll().executeTakeFirst();
}

/**
 * Records a use: the new counter and the time. Conditional on the counter read before verifying, so
 * of two uses racing with the same counter value only one counts (a counter that must grow refuses
 * the other; see passkeys.ts).
 */
export async function recordUse(db: Db, id: string, previousCounter: number, counter: number, now: number): Promise<boolean> {
  const result = await db.updateTable('passkeys').set({ counter, last_used_at: now }).where('id', '=', id).where('counter', '=', previousCounter).executeTakeFirst();
  return Number(result.numUpdatedRows) === 1;
}

export async function insertChallenge(db: Db, row: ChallengeRow): Promise<void> {
  await db.insertInto('passkey_challenges').values(row).execute();
}

/**
 * Uses a challenge up: one DELETE … RETURNING, so of two uses exactly one gets the row. An expired
 * challenge is deleted too, and not returned.
 */
export async function consumeChallenge(db: Db, challengeHash: string, purpose: string): Promise<ChallengeRow | undefined> {
  return db.deleteFrom('passkey_challenges').where('challenge_hash', '=', challengeHash).where('purpose', '=', purpose).returningAll().executeTakeFirst();
}

export async function deleteExpiredChallenges(db: Db, now: number): Promise<number> {
  const result = await db.deleteFrom('passkey_challenges').where('expires_at', '<=', now).executeTakeFirst();
  return Number(result.numDeletedRows);
}
