// issue 43: chains started by the extra grants, marked with their grant (token_chains.grant_type) so
// the statistics can tell them apart. Kept apart from tokens.store.ts (the hot path's statements, whose
// compiled inserts name their columns): only the client_credentials and device grants insert here.
import type { Db } from '../../db/database.ts';
import type { TokenChainsTable } from '../../db/schema.ts';

export type GrantChainRow = TokenChainsTable & { grant_type: 'client_credentials' | 'device_code' };

export async function insertGrantChain(db: Db, row: GrantChainRow): Promise<void> {
  await db.insertInto('token_chains').values(row).execute();
}
