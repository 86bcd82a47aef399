// The token endpoint's grants: a map from grant_type to its handler. An unknown or missing grant_type
// falls through to `unsupported_grant_type` here, in one place — and so does an opt-in grant (issue 43)
// asked for by an application that did not opt into it, with the very same answer.
import { findClientCached, type ExtraGrant } from '../../clients/clients.ts';
import { DEVICE_CODE_GRANT_TYPE } from '../device/device-authorizations.ts';
import { OAuthError } from '../errors.ts';
import type { OAuthParams } from '../form-params.ts';
import { authorizationCodeGrant } from './authorization-code.ts';
import { clientCredentialsGrant } from './client-credentials.ts';
import { deviceCodeGrant } from './device-code.ts';
import type { GrantHandler, TokenContext, TokenEndpointResponse } from './grant.ts';
import { refreshTokenGrant } from './refresh-token.ts';

type RunGrant = (ctx: TokenContext, params: OAuthParams) => Promise<TokenEndpointResponse>;

/** check, then issue: nothing is consumed unless every rule passed. */
function run<Checked, Response extends TokenEndpointResponse>(handler: GrantHandler<Checked, Response>): RunGrant {
  return async (ctx, params) => handler.issue(ctx, await handler.check(ctx, params));
}

/** spec: "Two grants are supported: `authorization_code` and `refresh_token`." */
export const GRANTS: ReadonlyMap<string, RunGrant> = new Map([
  ['authorization_code', run(authorizationCodeGrant)],
  ['refresh_token', run(refreshTokenGrant)],
]);

/**
 * issue 43: grants an application must have opted into (`--grant`), by grant_type: RFC 6749 §4.4's
 * client_credentials and RFC 8628's device grant.
 */
export const OPT_IN_GRANTS: ReadonlyMap<string, { optIn: ExtraGrant; run: RunGrant }> = new Map([
  ['client_credentials', { optIn: 'client_credentials' as const, run: run(clientCredentialsGrant) }],
  [DEVICE_CODE_GRANT_TYPE, { optIn: 'device_code' as const, run: run(deviceCodeGrant) }],
]);

export const SUPPORTED_GRANT_TYPES = [...GRANTS.keys()];
/** What discovery lists: the spec's two, then the opt-in ones (issue 43). */
export const ALL_GRANT_TYPES = [...GRANTS.keys(), ...OPT_IN_GRANTS.keys()];

/** The spec's answer to a grant_type it does not know (also what an application that did not opt in gets). */
function unsupportedGrantType(grantType: string | undefined): OAuthError {
  // spec (Errors): "token endpoint receives a JSON body → fields come back empty; error unsupported_grant_type"
  return new OAuthError(
    'unsupported_grant_type',
    `grant_type must be authorization_code or refresh_token, sent in an application/x-www-form-urlencoded body${grantType === undefined ? ' (no grant_type was read)' : ''}.`,
  );
}

export async function handleTokenRequest(ctx: TokenContext, params: OAuthParams): Promise<TokenEndpointResponse> {
  const grantType = params.optional('grant_type');
  const grant = grantType === undefined ? undefined : GRANTS.get(grantType);
  if (grant) return grant(ctx, params);
  const optIn = grantType === undefined ? undefined : OPT_IN_GRANTS.get(grantType);
  if (optIn) {
    // Only an application that opted in sees the grant at all; for any other (or an unknown client_id)
    // it is a grant_type the spec does not know, answered byte for byte as one.
    const clientId = params.optional('client_id');
    const client = clientId === undefined ? undefined : await findClientCached(ctx.db, clientId);
    if (client?.grants.includes(optIn.optIn)) return optIn.run(ctx, params);
  }
  throw unsupportedGrantType(grantType);
}
