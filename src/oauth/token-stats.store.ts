// Counts for the admin console's overview. Kept apart from tokens.store.ts (the hot path, changed by
// others); only token-stats.ts calls this file.
import type { Db } from '../db/database.ts';

/** Chains that reached generation 1 (a code exchanged for tokens) created at or after `since`. */
export async function countChainsIssuedSince(db: Db, since: number): Promise<number> {
  const row = await db
    .selectFrom('token_chains')
    .select((eb) => eb.fn.countAll<number | string | bigint>().as('n'))
    .where('created_at', '>=', since)
    .where('generation', '>=', 1)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

/** issue 43: the same, by the grant that started each chain (null: an authorization code). */
export async function countChainsIssuedSinceByGrant(db: Db, since: number): Promise<Array<{ grant: string | null; n: number }>> {
  const rows = await db
    .selectFrom('token_chains')
    .select((eb) => ['grant_type', eb.fn.countAll<number | string | bigint>().as('n')])
    .where('created_at', '>=', since)
    .where('generation', '>=', 1)
    .groupBy('grant_type')
    .execute();
  return rows.map((r) => ({ grant: r.grant_type ?? null, n: Number(r.n) }));
}
