// How many applications received tokens lately (the admin console's overview): authorization codes
// exchanged for tokens, one refresh chain each.
import type { Db } from '../db/database.ts';
import * as store from './token-stats.store.ts';

export function tokenGrantsSince(db: Db, since: number): Promise<number> {
  return store.countChainsIssuedSince(db, since);
}
