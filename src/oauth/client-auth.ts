// Who is calling the token and revoke endpoints. spec (Authentication): credentials go in the body
// (client_secret_post); "HTTP Basic client authentication (client_secret_basic) is not supported on any
// endpoint" — an Authorization header is never read here.
import { clientSecretMatches, findClientCached, type Client } from '../clients/clients.ts';
import type { Db } from '../db/database.ts';
import { DETAIL_UNKNOWN_CLIENT, OAuthError } from './errors.ts';

export const DESCRIPTION_CLIENT_AUTH_FAILED =
  'Client authentication failed. Send client_id and client_secret in the form-encoded body (HTTP Basic authentication is not supported), and check that the secret is the current one.';

/**
 * The application a request names. An unknown client_id is `invalid_client` (RFC 6749 §5.2). From the
 * client cache: another node's change (disabled, new secret) shows within CLIENT_CACHE_MS.
 */
export async function requireClient(db: Db, clientId: string): Promise<Client> {
  const client = await findClientCached(db, clientId);
  if (!client) throw new OAuthError('invalid_client', DESCRIPTION_CLIENT_AUTH_FAILED, { detail: DETAIL_UNKNOWN_CLIENT });
  return client;
}

/** client_secret_post: the secret is present, the client is confidential, and the keyed hashes match in constant time. */
export function checkClientSecret(hashKey: Buffer, client: Client, clientSecret: string | undefined): void {
  if (clientSecret === undefined) {
    throw new OAuthError('invalid_client', 'client_secret is required for this request; send it in the form-encoded body (HTTP Basic authentication is not supported).', {
      detail: 'no client_secret',
    });
  }
  if (!clientSecretMatches(hashKey, client, clientSecret)) {
    throw new OAuthError('invalid_client', DESCRIPTION_CLIENT_AUTH_FAILED, { detail: client.secretHash === null ? 'public client sent a secret' : 'wrong client_secret' });
  }
}

/**
 * A disabled application gets no new tokens. The spec only names the authorize endpoint; stopping
 * issuance as well is what an operator who disables an application expects.
 */
export function checkClientEnabled(client: Client): void {
  if (!client.enabled) {
    throw new OAuthError('unauthorized_client', 'This application is disabled. Ask the operator of this sign-in service to enable it.', { detail: 'client disabled' });
  }
}

/**
 * spec (Authentication 3): "A browser-only application cannot complete the token exchange unless an
 * operator allowlist entry exists." A request that carries an `Origin` header comes from a browser;
 * it is refused unless that origin is on the application's allowlist — checked before any code or
 * refresh token is consumed. Requests without `Origin` (servers) are unaffected. Signet's own origin is
 * no exception: Signet's pages never call the token endpoint, so it is refused like any other origin
 * that is not on the list.
 */
export function checkBrowserOrigin(client: Client, origin: string | undefined): void {
  if (origin === undefined) return;
  if (!client.allowedOrigins.includes(origin)) {
    throw new OAuthError(
      'invalid_client',
      'Requests from this browser origin are not allowed for this application. Call the token endpoint from your server, or ask the operator to add the origin to the application\'s allowed origins.',
      { detail: 'origin not on the allowlist' },
    );
  }
}

/**
 * The steps every grant at the token endpoint starts with, in this order: client_id present, the
 * application exists, a browser origin is allowlisted, the application is enabled. The credential
 * (client_secret or code_verifier) is the grant's to check.
 */
export async function checkTokenEndpointClient(db: Db, clientId: string, origin: string | undefined): Promise<Client> {
  const client = await requireClient(db, clientId);
  checkBrowserOrigin(client, origin);
  checkClientEnabled(client);
  return client;
}
