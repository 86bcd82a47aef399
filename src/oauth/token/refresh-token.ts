// Grant `refresh_token` (spec "POST /oauth/token — Grant refresh_token", "Refresh token", "Limits").
import { recordAuditSafely } from '../../audit/audit.ts';
import type { Client } from '../../clients/clients.ts';
import type { Db } from '../../db/database.ts';
import { checkClientSecret, checkTokenEndpointClient } from '../client-auth.ts';
import { DESCRIPTION_REFRESH_TOKEN_EXPIRED, OAuthError } from '../errors.ts';
import type { OAuthParams } from '../form-params.ts';
import { formatScope, parseScopeParameter, scopeList } from '../scopes.ts';
import { keyedHash } from '../secrets.ts';
import * as store from '../tokens.store.ts';
import { revokedDetail } from '../revocation-detail.ts';
import { decodeRefreshToken, newChainId, type RefreshTokenFields } from '../token-format.ts';
import { withIdToken } from '../oidc/id-token.ts';
import { checkTokenResource } from '../resources.ts';
import type { GrantHandler, TokenContext, TokenResponse } from './grant.ts';
import { newIssuance, tokensFor } from './issue-tokens.ts';

/**
 * A presented refresh token, in either format: a chain-format token (its chain row and the generation
 * it carries) or one from before migration 0010 (its own row).
 */
export type PresentedRefresh = {
  clientId: string;
  sub: string;
  /** the scope granted to the chain */
  scope: string;
  expiresAt: number;
  /** when this refresh token was issued (the chain's last rotation, or its start) */
  issuedAt: number;
  /** rotated earlier: presenting it is the replay the spec describes */
  rotated: boolean;
  revoked: boolean;
  personActive: boolean;
  /** issue 39: the RFC 8707 resource of the chain, or null */
  resource: string | null;
} & ({ format: 'chain'; chain: store.ChainRow; generation: number } | { format: 'legacy'; tokenHash: string });

/**
 * What `check` hands to `issue`: the token read and found usable; or, for a chain-format token without
 * a `scope` parameter, only its fields — the rotation's conditional UPDATE is then also the check (one
 * statement, one round trip), and only a refused rotation reads the chain to say why.
 */
export type CheckedRefresh = { client: Client } & ({ token: PresentedRefresh; accessScope: string } | { fast: RefreshTokenFields });

/** What a chain-format token of `generation` is, given its chain; undefined when the chain never had that generation. */
function presentedFromChain(found: { chain: store.ChainRow; personActive: boolean } | undefined, generation: number): PresentedRefresh | undefined {
  if (!found || generation > found.chain.generation) return undefined;
  const { chain } = found;
  return {
    format: 'chain',
    chain,
    generation,
    clientId: chain.client_id,
    sub: chain.sub,
    scope: chain.scope,
    expiresAt: chain.expires_at,
    issuedAt: chain.rotated_at ?? chain.created_at,
    rotated: generation < chain.generation,
    revoked: chain.revoked_at !== null || chain.refresh_revoked_at !== null,
    personActive: found.personActive,
    resource: chain.resource ?? null,
  };
}

function presentedFromRow(token: store.RefreshTokenRow | undefined, personActive: boolean): PresentedRefresh | undefined {
  if (!token) return undefined;
  return {
    format: 'legacy',
    tokenHash: token.token_hash,
    clientId: token.client_id,
    sub: token.sub,
    scope: token.scope,
    expiresAt: token.chain_expires_at,
    issuedAt: token.created_at,
    rotated: token.rotated_at !== null,
    revoked: token.revoked_at !== null,
    personActive,
    resource: null,
  };
}

/** A refresh token from before migration 0010: its row and its person's state, one read. */
async function readLegacy(ctx: TokenContext, presented: string): Promise<PresentedRefresh | undefined> {
  const found = await store.findRefreshTokenWithPerson(ctx.db, keyedHash(ctx.hashKey, presented));
  return presentedFromRow(found?.token, found?.personActive ?? false);
}

/**
 * A presented refresh token as stored, in either format, without judging it (introspection reads it
 * this way, issue 43); undefined when this server never issued it.
 */
export async function readRefreshToken(db: Db, hashKey: Buffer, presented: string): Promise<PresentedRefresh | undefined> {
  const fields = decodeRefreshToken(hashKey, presented);
  if (fields) return presentedFromChain(await store.findChainWithPerson(db, fields.chainId), fields.generation);
  const found = await store.findRefreshTokenWithPerson(db, keyedHash(hashKey, presented));
  return presentedFromRow(found?.token, found?.personActive ?? false);
}

const RESTART = 'Restart at the authorize step to sign the person in again.';

/**
 * Refuses a refresh token that cannot be used, for the reason the spec gives (or because its person is
 * gone or disabled); returns the token only when it is still the live latest one of its chain.
 */
async function usableRefreshToken(ctx: TokenContext, client: Client, token: PresentedRefresh | undefined): Promise<PresentedRefresh> {
  if (!token || token.clientId !== client.clientId) {
    throw new OAuthError('invalid_grant', `The refresh token is not valid for this application. ${RESTART}`, { detail: token ? 'token of another client' : 'unknown refresh token' });
  }
  if (token.rotated) {
    // spec: "Refresh token | revoked by rotation | presented again → stays rejected; every access and
    // refresh token of that user for that application is revoked (treated as replay)"
    const revoked = await store.revokeAllForUserAndClient(ctx.db, token.sub, token.clientId, ctx.now);
    await recordAuditSafely(
      ctx.db,
      () => ctx.now,
      {
        type: 'token.replay_detected',
        sub: token.sub,
        clientId: token.clientId,
        ip: ctx.ip,
        outcome: 'refused',
        detail: { revoked: 'user_client_tokens', ...revokedDetail(revoked) },
      },
      ctx.log,
    );
    throw new OAuthError('invalid_grant', `This refresh token was already used, so every token this application holds for this person has been revoked. Send one refresh at a time and always use the newest refresh token. ${RESTART}`, {
      detail: 'rotated refresh token replayed; revoked all tokens of the user for the client',
      // spec (Limits): "two simultaneous refreshes of one token count as replay and revoke everything;
      // refreshes must be serialized per user" — an application that refreshes concurrently signs its
      // users out; its developers should hear of it.
      warning: {
        clientId: token.clientId,
        event: 'refresh_token_replayed',
        message: 'a rotated refresh token was presented again (a replay, or two refreshes at once): every token of this person for this application was revoked (spec); tell the developers of this application to serialize refreshes and keep only the newest refresh token',
      },
    });
  }
  // spec: "the user withdraws the application … → next refresh fails with invalid_grant"
  if (token.revoked) throw new OAuthError('invalid_grant', `The refresh token has been revoked. ${RESTART}`, { detail: 'refresh token revoked' });
  // spec: "30 days after first authorization → expired; later refresh fails with invalid_grant", description 刷新令牌已过期
  if (token.expiresAt <= ctx.now) throw new OAuthError('invalid_grant', DESCRIPTION_REFRESH_TOKEN_EXPIRED, { detail: 'refresh chain expired' });
  if (!token.personActive) throw new OAuthError('invalid_grant', `The account of this refresh token is disabled. ${RESTART}`, { detail: 'account missing or disabled' });
  return token;
}

/** An optional narrower `scope` (RFC 6749 §6): applies to the new access token only; the refresh token keeps the granted scope. */
function accessScopeFor(token: PresentedRefresh, requested: string | undefined): string {
  if (requested === undefined) return token.scope;
  const granted = new Set<string>(scopeList(token.scope));
  const asked = parseScopeParameter(requested);
  const beyond = asked.filter((s) => !granted.has(s));
  if (beyond.length > 0 || asked.length === 0) {
    throw new OAuthError('invalid_scope', `The scope may only narrow what was granted (${token.scope}); ${beyond.join(' ') || 'an empty scope'} is not part of it.`);
  }
  return formatScope(asked);
}

/**
 * spec: "only the most recently issued one" is accepted, "the previous one is revoked at once". One
 * conditional UPDATE decides which of any concurrent refreshes wins (the chain's generation moves on,
 * so the presented token is the previous one at once); a token of the earlier format is marked rotated
 * and its chain continues as a chain row, atomically. spec: "a replacement inherits the original
 * expiry" — the chain keeps its end. Returns the pair, or undefined when another request won.
 */
async function rotate(ctx: TokenContext, client: Client, token: PresentedRefresh, accessScope: string): Promise<TokenResponse | undefined> {
  if (token.format === 'chain') {
    const rotated = await store.rotateChain(ctx.db, { id: token.chain.id, generation: token.generation, clientId: client.clientId, now: ctx.now, issuance: newIssuance() });
    // OpenID Connect Core §12.2: a refresh of an OpenID application's chain carries a fresh id_token.
    return rotated && withIdToken(ctx.idTokens, client, rotated, tokensFor(ctx.hashKey, rotated, rotated.generation, ctx.now, accessScope), { type: 'refresh_token', issuer: ctx.issuer });
  }
  const chain = await store.rotateLegacyIntoChain(ctx.db, token.tokenHash, client.clientId, ctx.now, { id: newChainId(), issuance: newIssuance() });
  // A token from before migration 0010 is also from before 0011: its chain gets an id_token as any other.
  return chain && withIdToken(ctx.idTokens, client, chain, tokensFor(ctx.hashKey, chain, chain.generation, ctx.now, accessScope), { type: 'refresh_token', issuer: ctx.issuer });
}

/** A refused rotation: reads what the token is now and throws the spec's error for it (a generation moved on by another request is the replay). */
async function refuseRotation(ctx: TokenContext, client: Client, now: PresentedRefresh | undefined): Promise<never> {
  await usableRefreshToken(ctx, client, now);
  throw new OAuthError('invalid_grant', `The refresh token can no longer be used. ${RESTART}`, { detail: 'rotation lost without a classifiable cause' });
}

export const refreshTokenGrant: GrantHandler<CheckedRefresh> = {
  async check(ctx, params) {
    const client = await checkTokenEndpointClient(ctx.db, params.required('client_id'), ctx.origin);
    const presented = params.required('refresh_token');
    const clientSecret = params.optional('client_secret');
    // spec: "client_secret — always; no PKCE branch on this grant". Issue 39: a public application that
    // registered itself (RFC 7591, token_endpoint_auth_method none) has no secret; OAuth 2.1 §4.3.1 lets
    // it refresh with its client_id alone — its refresh tokens rotate, and a replay revokes them all.
    // Issue 43: so may a public application registered with --grant device_code (a device or a command
    // line, which cannot keep a secret either; RFC 6749 §6).
    const secretless = client.isPublic && (client.dynamic || client.grants.includes('device_code'));
    if (!(secretless && clientSecret === undefined)) checkClientSecret(ctx.hashKey, client, clientSecret);
    const requestedScope = params.optional('scope');
    const requestedResource = params.optional('resource');
    const fields = decodeRefreshToken(ctx.hashKey, presented);
    // The common case: nothing to check against the chain before rotating it (see CheckedRefresh).
    if (fields && requestedScope === undefined && requestedResource === undefined) return { client, fast: fields };
    // The token (its chain) and its person's state in one read (one statement, one round trip on PostgreSQL).
    const live = await usableRefreshToken(ctx, client, fields ? presentedFromChain(await store.findChainWithPerson(ctx.db, fields.chainId), fields.generation) : await readLegacy(ctx, presented));
    // issue 39, RFC 8707 §2.2: a `resource` sent with a refresh must be the one authorized (the chain keeps it).
    checkTokenResource(requestedResource, live.resource);
    return { client, token: live, accessScope: accessScopeFor(live, requestedScope) };
  },

  async issue(ctx, checked) {
    const { client } = checked;
    if ('fast' in checked) {
      const { chainId, generation } = checked.fast;
      const rotated = await store.rotateChain(ctx.db, { id: chainId, generation, clientId: client.clientId, now: ctx.now, issuance: newIssuance() });
      // The access token gets the scope granted to the chain (no narrower one was asked for).
      if (rotated) return withIdToken(ctx.idTokens, client, rotated, tokensFor(ctx.hashKey, rotated, rotated.generation, ctx.now, rotated.scope), { type: 'refresh_token', issuer: ctx.issuer });
      return refuseRotation(ctx, client, presentedFromChain(await store.findChainWithPerson(ctx.db, chainId), generation));
    }
    const { token, accessScope } = checked;
    const issued = await rotate(ctx, client, token, accessScope);
    if (issued) return issued;
    // Lost the rotation: classify what the token is now (rotated by another request → replay).
    return refuseRotation(
      ctx,
      client,
      token.format === 'chain' ? presentedFromChain(await store.findChainWithPerson(ctx.db, token.chain.id), token.generation) : presentedFromRow(await store.findRefreshToken(ctx.db, token.tokenHash), true),
    );
  },
};
