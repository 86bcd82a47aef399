// POST /oauth/introspect (RFC 7662, issue 43): a resource server asks whether a token is live and what it
// grants. The caller authenticates as at the token endpoint (client_secret_post), so a public client
// cannot introspect.
//
// Whose tokens an application may introspect — the rule (issue 43: "a resource server registered as its
// own confidential application may introspect access tokens issued to others only if the token's
// resource/audience names it"): an application learns about the tokens issued TO IT, access and refresh.
// A token issued to another application is answered `{"active":false}` unless its RFC 8707 `resource`
// names the caller — and no token can name an application today: Signet issues resource-bound tokens for
// its own MCP endpoint only (`{base}/mcp`, resources.ts), which Signet checks itself. So today the rule
// is "own tokens only"; `resourceNamesCaller` is the one place that widens it when applications can
// register a resource of their own. RFC 7662 §4: "the authorization server MAY respond differently to
// different protected resources making the same request" — and an answer about a token the caller may
// not see is the same `{"active":false}` as for an unknown one, so introspection reveals nothing.
import type { Client } from '../clients/clients.ts';
import type { Db } from '../db/database.ts';
import { verifyAccessToken } from './access-tokens.ts';
import { checkClientSecret, requireClient } from './client-auth.ts';
import { OAuthError } from './errors.ts';
import type { OAuthParams } from './form-params.ts';
import { readRefreshToken } from './token/refresh-token.ts';

/** RFC 7662 §2.2: the answer for a live token. */
export type ActiveIntrospection = {
  active: true;
  /** the person the token is for (their `sub`, as userinfo and id_tokens give it); for client_credentials, the application's service identity */
  sub: string;
  client_id: string;
  scope: string;
  exp: number;
  iat: number;
  /** `Bearer` for an access token (RFC 6749 §7.1), `refresh_token` for a refresh token */
  token_type: 'Bearer' | 'refresh_token';
  /** RFC 8707 / RFC 7662 §2.2: the resource the token is for — present only when it was issued for one */
  aud?: string;
  iss: string;
};

/** RFC 7662 §2.2: "If the introspection call is properly authorized but the token is not active … the authorization server MUST return … {"active": false}" — and nothing else. */
export type Introspection = ActiveIntrospection | { active: false };

export const INACTIVE: Introspection = Object.freeze({ active: false });

/** Whether a token issued to another application names `caller` as its audience (see the rule above). Today no token can. */
function resourceNamesCaller(_caller: Client, _resource: string | null): boolean {
  return false;
}

const seconds = (ms: number) => Math.floor(ms / 1000);

async function introspectAccessToken(db: Db, hashKey: Buffer, now: number, caller: Client, token: string, issuer: string): Promise<Introspection | undefined> {
  let verified;
  try {
    // issue 43: a client_credentials token (the application acting as itself) is live too
    verified = await verifyAccessToken(db, hashKey, now, token, { services: true });
  } catch (error) {
    if (error instanceof OAuthError) return undefined;
    throw error;
  }
  if (verified.client.clientId !== caller.clientId && !resourceNamesCaller(caller, verified.resource)) return INACTIVE;
  return {
    active: true,
    // RFC 7662 §2.2 `sub`: "usually a machine-readable identifier of the resource owner who authorized
    // this token" — the person; for a client_credentials token the application's service identity
    // (the `sub` that owns the tasks it creates), never a person.
    sub: 'person' in verified ? verified.person.sub : verified.service.sub,
    client_id: verified.client.clientId,
    scope: verified.scope,
    exp: seconds(verified.expiresAt),
    iat: seconds(verified.issuedAt),
    token_type: 'Bearer',
    ...(verified.resource ? { aud: verified.resource } : {}),
    iss: issuer,
  };
}

/**
 * A refresh token is live when it is the newest of its chain (not rotated), not revoked, not past the
 * chain's end, of an enabled application and an active person. Another application's refresh token is
 * never live to the caller (refresh tokens are only ever presented by the application they were issued to).
 */
async function introspectRefreshToken(db: Db, hashKey: Buffer, now: number, caller: Client, token: string, issuer: string): Promise<Introspection | undefined> {
  const found = await readRefreshToken(db, hashKey, token);
  if (!found) return undefined;
  if (found.clientId !== caller.clientId || found.rotated || found.revoked || found.expiresAt <= now || !found.personActive || !caller.enabled) return INACTIVE;
  return {
    active: true,
    sub: found.sub,
    client_id: found.clientId,
    scope: found.scope,
    exp: seconds(found.expiresAt),
    iat: seconds(found.issuedAt),
    token_type: 'refresh_token',
    ...(found.resource ? { aud: found.resource } : {}),
    iss: issuer,
  };
}

/**
 * RFC 7662 §2.1: `token` (required) and `token_type_hint` (optional: `access_token` or `refresh_token`).
 * "If the server is unable to locate the token using the given hint, it MUST extend its search across
 * all of its supported token types", so the hint only decides which is tried first. The caller is
 * authenticated first (client_id and client_secret in the body, `invalid_client` 401 otherwise) — a
 * disabled application may still ask (it learns only about its own tokens, which are inactive).
 */
export async function introspectToken(db: Db, hashKey: Buffer, now: number, params: OAuthParams, issuer: string): Promise<Introspection> {
  const caller = await requireClient(db, params.required('client_id'));
  checkClientSecret(hashKey, caller, params.optional('client_secret'));
  const token = params.required('token');
  const refreshFirst = params.optional('token_type_hint') === 'refresh_token';
  const order = refreshFirst ? [introspectRefreshToken, introspectAccessToken] : [introspectAccessToken, introspectRefreshToken];
  for (const lookup of order) {
    const answer = await lookup(db, hashKey, now, caller, token, issuer);
    if (answer) return answer;
  }
  return INACTIVE;
}
