// The id_token (issue 28 item 2; OpenID Connect Core 1.0 §2, §3.1.3.6, §12.2): issued only to an
// application registered with --oidc that was granted `openid`; every other application gets exactly
// the spec's answers (spec "What the service does" 5: "No id_token is issued"). The grant handlers call
// this file; it never calls them.
import { createHash, sign, verify, type KeyObject } from 'node:crypto';
import type { Client } from '../../clients/clients.ts';
import type { Clock } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import { findAccount } from '../../accounts/accounts.ts';
import { claimsFor } from '../claims.ts';
import { currentSigningKey, ID_TOKEN_LIFETIME_SECONDS, isSigningAlg, publicKeyOf, type SigningAlg } from './keys.ts';

/** acr values (OpenID Connect Core §2 `acr`): `mfa` asks for a second factor; `pwd` is one factor. */
export const ACR_VALUES_SUPPORTED = ['pwd', 'mfa'] as const;

/** The claims an id_token can carry (discovery's claims_supported adds the userinfo claims). */
export const ID_TOKEN_CLAIMS = ['iss', 'sub', 'aud', 'exp', 'iat', 'auth_time', 'nonce', 'at_hash', 'amr', 'acr', 'sid'] as const;

/**
 * What a chain's id_tokens say about the sign-in, stored with the code (token_chains.id_token_context):
 * the issuer that was asked, the nonce of the authorization request, when and how the person signed in.
 */
export type IdTokenContext = {
  iss: string;
  nonce?: string | undefined;
  /** seconds since the epoch; absent for a chain from before migration 0011 (the sign-in is not known) */
  auth_time?: number | undefined;
  /** absent (like auth_time) when the chain's sign-in is not known */
  amr?: string[] | undefined;
  /** present when the request carried acr_values */
  acr?: string | undefined;
  sid?: string | undefined;
  /** profile claims the `claims` parameter asked for in the id_token (each still needs its scope) */
  claims?: string[] | undefined;
};

/** The sign-in behind a code, as the session tells it. */
export type SignInFacts = { authTime: number; amr: readonly string[]; sid: string | null };

/** OpenID request parameters that reach the id_token. */
export type IdTokenRequest = { nonce?: string | undefined; acrValues?: readonly string[] | undefined; claims?: readonly string[] | undefined };

/** The acr of a sign-in: `mfa` when two factors (or a passkey, which is two on its own) were used. */
export function acrOf(amr: readonly string[]): 'pwd' | 'mfa' {
  return amr.includes('mfa') ? 'mfa' : 'pwd';
}

export function idTokenContext(issuer: string, signIn: SignInFacts, request: IdTokenRequest): string {
  const context: IdTokenContext = {
    iss: issuer,
    ...(request.nonce === undefined ? {} : { nonce: request.nonce }),
    auth_time: Math.floor(signIn.authTime / 1000),
    amr: [...signIn.amr],
    ...(request.acrValues && request.acrValues.length > 0 ? { acr: acrOf(signIn.amr) } : {}),
    ...(signIn.sid === null ? {} : { sid: signIn.sid }),
    ...(request.claims && request.claims.length > 0 ? { claims: [...request.claims] } : {}),
  };
  return JSON.stringify(context);
}

function parseContext(text: string | null | undefined): IdTokenContext | undefined {
  if (!text) return undefined;
  const value = JSON.parse(text) as IdTokenContext;
  return typeof value.iss === 'string' && typeof value.auth_time === 'number' ? value : undefined;
}

/**
 * What a refresh's id_token can say of a chain that has no stored context: one from before migration
 * 0011, or one begun while the application was not yet `--oidc`. Only the issuer asked now is known;
 * Core §2 makes auth_time and amr optional (and §12.2 says an auth_time must be the original sign-in's,
 * which was never recorded), so both are left out rather than guessed; there is no nonce on a refresh.
 */
function contextOfUnrecordedChain(issuer: string): IdTokenContext {
  return { iss: issuer };
}

/**
 * OpenID Connect Core §3.1.3.6: "at_hash — the base64url encoding of the left-most half of the hash of
 * the octets of the ASCII representation of the access_token value, where the hash algorithm used is the
 * hash algorithm used in the alg Header Parameter" (SHA-256 for both ES256 and RS256).
 */
export function atHash(accessToken: string): string {
  const digest = createHash('sha256').update(accessToken, 'ascii').digest();
  return digest.subarray(0, digest.length / 2).toString('base64url');
}

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A compact JWS (RFC 7515): ES256 signatures are r‖s (RFC 7518 §3.4), not DER. */
export function signJws(header: { alg: SigningAlg; kid: string; typ?: string }, payload: object, key: KeyObject): string {
  const input = `${b64(header)}.${b64(payload)}`;
  const signature = sign('sha256', Buffer.from(input), header.alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key);
  return `${input}.${signature.toString('base64url')}`;
}

export type IdTokenSigning = { db: Db; sealKey: Buffer; clock: Clock; defaultAlg: SigningAlg };

/** The algorithm an application's id_tokens are signed with: its own choice, else the deployment's. */
export function idTokenAlgFor(client: Client, defaultAlg: SigningAlg): SigningAlg {
  return client.idTokenAlg ?? defaultAlg;
}

/**
 * Adds an id_token to a token response when the application is an OpenID one and `openid` is part of
 * the issued scope; otherwise returns the response as it is (spec rule 5 for everyone else). On a
 * refresh (Core §12.2) the id_token is new — `iat` now, `auth_time` still the original sign-in — and
 * carries no nonce.
 */
export async function withIdToken<Response extends { access_token: string; scope: string }>(
  signing: IdTokenSigning | undefined,
  client: Client,
  chain: { sub: string; id_token_context?: string | null | undefined },
  response: Response,
  grant: { type: 'authorization_code' } | { type: 'refresh_token'; issuer: string | undefined },
): Promise<Response & { id_token?: string }> {
  if (!signing || !client.oidc) return response;
  if (!response.scope.split(' ').includes('openid')) return response;
  // issue 36: a chain with no recorded context (before migration 0011, or begun before the application
  // was --oidc) still gets an id_token on refresh once the application is an OpenID one.
  const context = parseContext(chain.id_token_context) ?? (grant.type === 'refresh_token' && grant.issuer !== undefined ? contextOfUnrecordedChain(grant.issuer) : undefined);
  if (!context) return response;
  const alg = idTokenAlgFor(client, signing.defaultAlg);
  const { kid, key } = await currentSigningKey(signing.db, signing.sealKey, signing.clock, alg);
  const iat = Math.floor(signing.clock() / 1000);
  const claims = {
    iss: context.iss,
    sub: chain.sub,
    aud: client.clientId,
    exp: iat + ID_TOKEN_LIFETIME_SECONDS,
    iat,
    ...(context.auth_time === undefined ? {} : { auth_time: context.auth_time }),
    ...(grant.type === 'authorization_code' && context.nonce !== undefined ? { nonce: context.nonce } : {}),
    at_hash: atHash(response.access_token),
    ...(context.amr === undefined ? {} : { amr: context.amr }),
    ...(context.acr === undefined ? {} : { acr: context.acr }),
    ...(context.sid === undefined ? {} : { sid: context.sid }),
    ...(await requestedProfileClaims(signing.db, chain.sub, response.scope, context.claims)),
  };
  return { ...response, id_token: signJws({ alg, kid, typ: 'JWT' }, claims, key) };
}

/**
 * Core §5.5: profile claims the `claims` parameter asked for in the id_token — released only as userinfo
 * would release them for the granted scope (spec "Scopes"); without a `claims` request they stay in userinfo.
 */
async function requestedProfileClaims(db: Db, sub: string, scope: string, asked: readonly string[] | undefined): Promise<Record<string, unknown>> {
  if (!asked || asked.length === 0) return {};
  const profile = await findAccount(db, sub);
  if (!profile) return {};
  const released = claimsFor(profile, scope) as Record<string, unknown>;
  return Object.fromEntries(asked.filter((name) => name !== 'sub' && released[name] !== undefined).map((name) => [name, released[name]]));
}

/** What an id_token_hint says, once its signature checked out with one of our keys (its expiry is not required: a hint may be old). */
export type IdTokenHint = { sub: string; aud: string; sid: string | undefined; exp: number; iss: string };

/**
 * Reads an id_token_hint (Core §3.1.2.1, RP-Initiated Logout §2): undefined unless it is a JWS signed by
 * one of the keys in our JWKS for this issuer.
 */
export async function readIdTokenHint(db: Db, hint: string, issuer: string): Promise<IdTokenHint | undefined> {
  const parts = hint.split('.');
  if (parts.length !== 3 || hint.length > 8000) return undefined;
  const [headerPart, payloadPart, signaturePart] = parts as [string, string, string];
  let header: { alg?: unknown; kid?: unknown };
  let payload: Record<string, unknown>;
  try {
    header = JSON.parse(Buffer.from(headerPart, 'base64url').toString('utf8')) as typeof header;
    payload = JSON.parse(Buffer.from(payloadPart, 'base64url').toString('utf8')) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (typeof header.kid !== 'string' || !isSigningAlg(header.alg)) return undefined;
  const found = await publicKeyOf(db, header.kid);
  if (!found || found.alg !== header.alg) return undefined;
  const signature = Buffer.from(signaturePart, 'base64url');
  const data = Buffer.from(`${headerPart}.${payloadPart}`);
  const ok = verify('sha256', data, found.alg === 'ES256' ? { key: found.key, dsaEncoding: 'ieee-p1363' } : found.key, signature);
  if (!ok) return undefined;
  const { sub, aud, sid, exp, iss } = payload;
  if (typeof sub !== 'string' || typeof aud !== 'string' || typeof exp !== 'number' || iss !== issuer) return undefined;
  return { sub, aud, sid: typeof sid === 'string' ? sid : undefined, exp, iss };
}
