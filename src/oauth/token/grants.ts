// The token endpoint's grants: a map from grant_type to its handler. An unknown or missing grant_type
// falls through to `unsupported_grant_type` here, in one place.
import { OAuthError } from '../errors.ts';
import type { OAuthParams } from '../form-params.ts';
import { authorizationCodeGrant } from './authorization-code.ts';
import type { GrantHandler, TokenContext, TokenResponse } from './grant.ts';
import { refreshTokenGrant } from './refresh-token.ts';

type RunGrant = (ctx: TokenContext, params: OAuthParams) => Promise<TokenResponse>;

/** check, then issue: nothing is consumed unless every rule passed. */
function run<Checked>(handler: GrantHandler<Checked>): RunGrant {
  return async (ctx, params) => handler.issue(ctx, await handler.check(ctx, params));
}

/** spec: "Two grants are supported: `authorization_code` and `refresh_token`." */
export const GRANTS: ReadonlyMap<string, RunGrant> = new Map([
  ['authorization_code', run(authorizationCodeGrant)],
  ['refresh_token', run(refreshTokenGrant)],
]);

export const SUPPORTED_GRANT_TYPES = [...GRANTS.keys()];

export async function handleTokenRequest(ctx: TokenContext, params: OAuthParams): Promise<TokenResponse> {
  const grantType = params.optional('grant_type');
  const grant = grantType === undefined ? undefined : GRANTS.get(grantType);
  if (!grant) {
    // spec (Errors): "token endpoint receives a JSON body → fields come back empty; error unsupported_grant_type"
    throw new OAuthError(
      'unsupported_grant_type',
      `grant_type must be authorization_code or refresh_token, sent in an application/x-www-form-urlencoded body${grantType === undefined ? ' (no grant_type was read)' : ''}.`,
    );
  }
  return grant(ctx, params);
}
