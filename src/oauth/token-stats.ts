// How many applications received tokens lately (the admin console's overview): authorization codes
// exchanged for tokens, one refresh chain each; and (issue 43) how many by each grant.
import type { Db } from '../db/database.ts';
import * as store from './token-stats.store.ts';

export function tokenGrantsSince(db: Db, since: number): Promise<number> {
  return store.countChainsIssuedSince(db, since);
}

export type GrantCounts = { authorization_code: number; client_credentials: number; device_code: number };

/** issue 43: chains started since `since`, by grant — client_credentials tokens and device sign-ins apart from codes. */
export async function tokenGrantsByGrantSince(db: Db, since: number): Promise<GrantCounts> {
  const counts: GrantCounts = { authorization_code: 0, client_credentials: 0, device_code: 0 };
  for (const { grant, n } of await store.countChainsIssuedSinceByGrant(db, since)) {
    if (grant === 'client_credentials' || grant === 'device_code') counts[grant] += n;
    else counts.authorization_code += n;
  }
  return counts;
}
