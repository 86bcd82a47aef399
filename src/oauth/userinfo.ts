// GET /oauth/userinfo: the claims of the person an access token was issued for, by the token's scope.
// spec: "/oauth/userinfo is currently the only endpoint that an OAuth access token can call."
import type { Client } from '../clients/clients.ts';
import type { Db } from '../db/database.ts';
import { verifyAccessToken } from './access-tokens.ts';
import { claimsFor, type ClaimsSource, type UserinfoClaims } from './claims.ts';
import type * as store from './tokens.store.ts';

export { bearerToken, DESCRIPTION_INVALID_ACCESS_TOKEN } from './access-tokens.ts';

/** The claims' view of the person's row (the flags as booleans). */
function claimsSource(person: store.TokenPersonRow): ClaimsSource {
  return {
    sub: person.sub,
    name: person.name,
    picture: person.picture,
    email: person.email,
    email_verified: person.email_verified === 1,
    phone_number: person.phone_number,
    phone_number_verified: person.phone_number_verified === 1,
  };
}

/**
 * The claims an access token may read: the person's, by the token's scope, for a live token (see
 * verifyAccessToken); else `invalid_token` (401).
 */
export async function readUserinfo(db: Db, hashKey: Buffer, now: number, accessToken: string): Promise<{ claims: UserinfoClaims; client: Client }> {
  const { client, person, scope } = await verifyAccessToken(db, hashKey, now, accessToken);
  return { claims: claimsFor(claimsSource(person), scope), client };
}
