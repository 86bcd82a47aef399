// The shape every grant handler has. spec-style split (as fosite's HandleTokenEndpointRequest /
// PopulateTokenEndpointResponse): `check` runs every validation rule and consumes nothing; `issue`
// consumes the code or refresh token atomically and mints the new pair.
import type { RequestAuditLog } from '../../audit/audit.ts';
import type { Db } from '../../db/database.ts';
import type { OAuthParams } from '../form-params.ts';
import type { IdTokenSigning } from '../oidc/id-token.ts';

export type TokenContext = {
  db: Db;
  /** HMAC key for codes and tokens at rest */
  hashKey: Buffer;
  /** the moment of this request, from the injected clock */
  now: number;
  /** the request's `Origin` header: present when a browser sent it */
  origin: string | undefined;
  /** the client address (request.ip), for the audit events of a replay */
  ip?: string | undefined;
  /** the request's logger: audit lines, and a failure to record one */
  log?: RequestAuditLog | undefined;
  /** the served origin that received the request: the `iss` of a refresh's id_token when the chain recorded none (issue 36) */
  issuer?: string | undefined;
  /** issue 28: how id_tokens are signed (absent: none is ever issued) */
  idTokens?: IdTokenSigning | undefined;
};

/** spec "POST /oauth/token — Response 200 for both grants". */
export type TokenResponse = {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
  /** issue 28: only for an application registered with --oidc that was granted `openid` */
  id_token?: string;
};

/** issue 43: an access token alone (client_credentials, RFC 6749 §4.4.3: no refresh token, no id_token). */
export type AccessOnlyResponse = Omit<TokenResponse, 'refresh_token' | 'id_token'>;

/** What the token endpoint answers with: a pair (the spec's two grants, the device grant) or an access token alone. */
export type TokenEndpointResponse = TokenResponse | AccessOnlyResponse;

export interface GrantHandler<Checked, Response extends TokenEndpointResponse = TokenResponse> {
  /** Every rule of the grant; throws OAuthError. Nothing is consumed here. */
  check(ctx: TokenContext, params: OAuthParams): Promise<Checked>;
  /** Consumes what was presented (one conditional UPDATE) and issues the new tokens in the same transaction. */
  issue(ctx: TokenContext, checked: Checked): Promise<Response>;
}
