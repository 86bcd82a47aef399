// Grant `client_credentials` (RFC 6749 §4.4; issue 43), for applications registered with
// `--grant client_credentials`: the application authenticates as itself (client_secret_post) and gets
// an access token of its service identity — no person, no refresh token (§4.4.3: "A refresh token
// SHOULD NOT be included"), no id_token.
import { recordAuditSafely } from '../../audit/audit.ts';
import type { Client } from '../../clients/clients.ts';
import { checkClientSecret, checkTokenEndpointClient } from '../client-auth.ts';
import { OAuthError } from '../errors.ts';
import type { OAuthParams } from '../form-params.ts';
import { formatScope, parseScopeParameter } from '../scopes.ts';
import { newChainId } from '../token-format.ts';
import type { GrantHandler, TokenContext } from './grant.ts';
import { insertGrantChain } from './grant-chains.store.ts';
import { ACCESS_TOKEN_LIFETIME_MS, newIssuance, tokensFor } from './issue-tokens.ts';
import type { AccessOnlyResponse } from './grant.ts';

export type CheckedClientCredentials = { client: Client; serviceSub: string; scope: string };

/**
 * RFC 6749 §3.3: "If the client omits the scope parameter when requesting authorization, the
 * authorization server MUST either process the request using a pre-defined default value or fail the
 * request". Signet's default is every scope the application was registered with; a scope sent must be
 * among them.
 */
export function clientCredentialsScope(client: Client, requested: string | undefined): string {
  if (requested === undefined) return formatScope(client.scopes);
  const asked = parseScopeParameter(requested);
  const beyond = asked.filter((s) => !(client.scopes as string[]).includes(s));
  if (beyond.length > 0 || asked.length === 0) {
    throw new OAuthError('invalid_scope', `The application may ask only for the scopes it was registered with (${client.scopes.join(' ')}); ${beyond.join(' ') || 'an empty scope'} is not one of them.`);
  }
  return formatScope(asked);
}

export const clientCredentialsGrant: GrantHandler<CheckedClientCredentials, AccessOnlyResponse> = {
  async check(ctx, params: OAuthParams) {
    const client = await checkTokenEndpointClient(ctx.db, params.required('client_id'), ctx.origin);
    // RFC 6749 §4.4.2: "The client MUST authenticate with the authorization server" — a confidential
    // application with its secret (a public one never gets this grant: clients.ts checkGrantsFit).
    checkClientSecret(ctx.hashKey, client, params.optional('client_secret'));
    if (client.serviceSub === null) throw new OAuthError('unauthorized_client', 'This application has no service identity. Ask the operator to give it the client_credentials grant again.', { detail: 'no service_sub' });
    return { client, serviceSub: client.serviceSub, scope: clientCredentialsScope(client, params.optional('scope')) };
  },

  async issue(ctx: TokenContext, { client, serviceSub, scope }) {
    // A chain of one access token: generation 1, its refresh token revoked from the start (none is
    // handed out), ending when the access token does. Revocation and verification treat it as any other.
    const chain = {
      id: newChainId(),
      client_id: client.clientId,
      sub: serviceSub,
      scope,
      generation: 1,
      created_at: ctx.now,
      expires_at: ctx.now + ACCESS_TOKEN_LIFETIME_MS,
      rotated_at: null,
      issuance: newIssuance(),
      refresh_revoked_at: ctx.now,
      revoked_at: null,
      legacy_chain_id: null,
      code_expires_at: null,
      redirect_uri: null,
      code_challenge: null,
      code_challenge_method: null,
      grant_type: 'client_credentials' as const,
    };
    await insertGrantChain(ctx.db, chain);
    await recordAuditSafely(ctx.db, () => ctx.now, { type: 'token.client_credentials', sub: serviceSub, clientId: client.clientId, ip: ctx.ip, outcome: 'success', detail: { scope, grant_type: 'client_credentials' } }, ctx.log);
    const { refresh_token: _none, ...accessOnly } = tokensFor(ctx.hashKey, chain, 1, ctx.now, scope);
    return accessOnly;
  },
};
