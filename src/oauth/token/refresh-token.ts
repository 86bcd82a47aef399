// Grant `refresh_token` (spec "POST /oauth/token — Grant refresh_token", "Refresh token", "Limits").
import { recordAuditSafely } from '../../audit/audit.ts';
import type { Client } from '../../clients/clients.ts';
import { checkClientSecret, checkTokenEndpointClient } from '../client-auth.ts';
import { DESCRIPTION_REFRESH_TOKEN_EXPIRED, OAuthError } from '../errors.ts';
import type { OAuthParams } from '../form-params.ts';
import { formatScope, parseScopeParameter, scopeList } from '../scopes.ts';
import { keyedHash } from '../secrets.ts';
import * as store from '../tokens.store.ts';
import type { GrantHandler, TokenContext } from './grant.ts';
import { mintTokenPair } from './issue-tokens.ts';

export type CheckedRefresh = { client: Client; token: store.RefreshTokenRow; accessScope: string };

const RESTART = 'Restart at the authorize step to sign the person in again.';

/**
 * Refuses a refresh token that cannot be used, for the reason the spec gives; returns the token only
 * when it is still the live latest one of its chain.
 */
async function usableRefreshToken(ctx: TokenContext, client: Client, token: store.RefreshTokenRow | undefined): Promise<store.RefreshTokenRow> {
  if (!token || token.client_id !== client.clientId) {
    throw new OAuthError('invalid_grant', `The refresh token is not valid for this application. ${RESTART}`, { detail: token ? 'token of another client' : 'unknown refresh token' });
  }
  if (token.rotated_at !== null) {
    // spec: "Refresh token | revoked by rotation | presented again → stays rejected; every access and
    // refresh token of that user for that application is revoked (treated as replay)"
    const revoked = await store.revokeAllForUserAndClient(ctx.db, token.sub, token.client_id, ctx.now);
    await recordAuditSafely(
      ctx.db,
      () => ctx.now,
      {
        type: 'token.replay_detected',
        sub: token.sub,
        clientId: token.client_id,
        ip: ctx.ip,
        outcome: 'refused',
        detail: { revoked: 'user_client_tokens', revoked_access_tokens: revoked.access, revoked_refresh_tokens: revoked.refresh },
      },
      ctx.log,
    );
    throw new OAuthError('invalid_grant', `This refresh token was already used, so every token this application holds for this person has been revoked. Send one refresh at a time and always use the newest refresh token. ${RESTART}`, {
      detail: 'rotated refresh token replayed; revoked all tokens of the user for the client',
      // spec (Limits): "two simultaneous refreshes of one token count as replay and revoke everything;
      // refreshes must be serialized per user" — an application that refreshes concurrently signs its
      // users out; its developers should hear of it.
      warning: {
        clientId: token.client_id,
        event: 'refresh_token_replayed',
        message: 'a rotated refresh token was presented again (a replay, or two refreshes at once): every token of this person for this application was revoked (spec); tell the developers of this application to serialize refreshes and keep only the newest refresh token',
      },
    });
  }
  // spec: "the user withdraws the application … → next refresh fails with invalid_grant"
  if (token.revoked_at !== null) throw new OAuthError('invalid_grant', `The refresh token has been revoked. ${RESTART}`, { detail: 'refresh token revoked' });
  // spec: "30 days after first authorization → expired; later refresh fails with invalid_grant", description 刷新令牌已过期
  if (token.chain_expires_at <= ctx.now) throw new OAuthError('invalid_grant', DESCRIPTION_REFRESH_TOKEN_EXPIRED, { detail: 'refresh chain expired' });
  return token;
}

/** An optional narrower `scope` (RFC 6749 §6): applies to the new access token only; the refresh token keeps the granted scope. */
function accessScopeFor(token: store.RefreshTokenRow, requested: string | undefined): string {
  if (requested === undefined) return token.scope;
  const granted = new Set<string>(scopeList(token.scope));
  const asked = parseScopeParameter(requested);
  const beyond = asked.filter((s) => !granted.has(s));
  if (beyond.length > 0 || asked.length === 0) {
    throw new OAuthError('invalid_scope', `The scope may only narrow what was granted (${token.scope}); ${beyond.join(' ') || 'an empty scope'} is not part of it.`);
  }
  return formatScope(asked);
}

export const refreshTokenGrant: GrantHandler<CheckedRefresh> = {
  async check(ctx, params) {
    const client = await checkTokenEndpointClient(ctx.db, params.required('client_id'), ctx.origin);
    const presented = params.required('refresh_token');
    // spec: "client_secret — always; no PKCE branch on this grant"
    checkClientSecret(ctx.hashKey, client, params.optional('client_secret'));
    // The token and its person's state in one read (one statement, one round trip on PostgreSQL).
    const found = await store.findRefreshTokenWithPerson(ctx.db, keyedHash(ctx.hashKey, presented));
    const live = await usableRefreshToken(ctx, client, found?.token);
    if (!found?.personActive) throw new OAuthError('invalid_grant', `The account of this refresh token is disabled. ${RESTART}`, { detail: 'account missing or disabled' });
    return { client, token: live, accessScope: accessScopeFor(live, params.optional('scope')) };
  },

  async issue(ctx, { client, token, accessScope }) {
    // spec: "only the most recently issued one" is accepted, "the previous one is revoked at once".
    // One conditional UPDATE decides which of any concurrent refreshes wins; the new pair is stored
    // atomically with it (one statement on PostgreSQL, one transaction on SQLite), so a loser that then
    // revokes everything also revokes the winner's pair. spec: "a replacement inherits the original
    // expiry" — the new refresh token takes the chain's expiry from the rotated row.
    const pair = mintTokenPair(ctx.hashKey, ctx.now, client.clientId, accessScope);
    const rotated = await store.rotateRefreshTokenWithPair(ctx.db, token.token_hash, pair.rows);
    const issued = rotated && pair.response;
    if (issued) return issued;
    // Lost the rotation: classify what the token is now (rotated by another request → replay).
    await usableRefreshToken(ctx, client, await store.findRefreshToken(ctx.db, token.token_hash));
    throw new OAuthError('invalid_grant', `The refresh token can no longer be used. ${RESTART}`, { detail: 'rotation lost without a classifiable cause' });
  },
};
