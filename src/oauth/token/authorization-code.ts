// Grant `authorization_code` (spec "POST /oauth/token — Grant authorization_code").
import { recordAuditSafely } from '../../audit/audit.ts';
import type { Client } from '../../clients/clients.ts';
import { checkClientSecret, checkTokenEndpointClient } from '../client-auth.ts';
import { DESCRIPTION_CODE_VERIFIER_FAILED, OAuthError } from '../errors.ts';
import type { OAuthParams } from '../form-params.ts';
import { normalizeChallengeMethod, verifierMatches } from '../pkce.ts';
import { keyedHash } from '../secrets.ts';
import * as store from '../tokens.store.ts';
import { revokedDetail } from '../revocation-detail.ts';
import type { GrantHandler, TokenContext } from './grant.ts';
import { isChainId } from '../token-format.ts';
import { newChainRow, REFRESH_CHAIN_LIFETIME_MS, tokensFor } from './issue-tokens.ts';

export type CheckedCode = { client: Client; code: store.CodeRow };

const DESCRIPTION_CODE_UNUSABLE = 'The authorization code is invalid, expired or already used. Restart at the authorize step to get a new one.';

function codeRefused(detail: string): OAuthError {
  return new OAuthError('invalid_grant', DESCRIPTION_CODE_UNUSABLE, { detail });
}

/**
 * spec: "A code presented a second time is refused and every token issued from it is revoked"
 * (RFC 6749 §4.1.2). Whoever presents it: a used code that shows up again has leaked.
 */
async function refuseReusedCode(ctx: TokenContext, code: store.CodeRow): Promise<never> {
  const revoked = await store.revokeChain(ctx.db, code.chain_id, ctx.now);
  await recordAuditSafely(
    ctx.db,
    () => ctx.now,
    {
      type: 'code.replay_detected',
      sub: code.sub,
      clientId: code.client_id,
      ip: ctx.ip,
      outcome: 'refused',
      detail: { revoked: 'code_chain', ...revokedDetail(revoked) },
    },
    ctx.log,
  );
  throw codeRefused('code presented again; its tokens were revoked');
}

/** spec: "The credential required is decided by how the code was issued, not by what the client sends." */
function checkCodeCredential(ctx: TokenContext, client: Client, code: store.CodeRow, params: OAuthParams): void {
  const clientSecret = params.optional('client_secret');
  if (code.code_challenge !== null) {
    // spec: "code_verifier — required when the code was issued with a code_challenge"
    const verifier = params.optional('code_verifier');
    if (verifier === undefined) {
      throw new OAuthError('invalid_request', 'code_verifier is required: the authorization code was issued with a code_challenge. Send the verifier you made the challenge from.');
    }
    // spec: "only the exact string `S256` selects SHA-256; any other value … is treated as `plain`"
    const method = normalizeChallengeMethod(code.code_challenge_method ?? undefined);
    if (!verifierMatches(verifier, code.code_challenge, method)) {
      throw new OAuthError('invalid_grant', DESCRIPTION_CODE_VERIFIER_FAILED, { detail: `code_verifier mismatch (${method})` });
    }
    // A confidential client may authenticate as well; a secret that is sent must then be right.
    if (clientSecret !== undefined) checkClientSecret(ctx.hashKey, client, clientSecret);
    return;
  }
  // spec: "client_secret — required unless the code was issued with a code_challenge"
  checkClientSecret(ctx.hashKey, client, clientSecret);
  // RFC 9700 §4.8.2 (PKCE downgrade): "if there was no code_challenge in the authorization request, a
  // request to the token endpoint containing a code_verifier is rejected". The code was issued without
  // PKCE, so a verifier has nothing to prove; one that rides along means the request was tampered with.
  if (params.optional('code_verifier') !== undefined) {
    throw new OAuthError('invalid_grant', 'code_verifier was sent, but the authorization code was issued without a code_challenge. Send code_verifier only when the authorize request carried code_challenge.', {
      detail: 'PKCE downgrade: code_verifier sent for a code issued without code_challenge',
    });
  }
}

export const authorizationCodeGrant: GrantHandler<CheckedCode> = {
  async check(ctx, params) {
    const client = await checkTokenEndpointClient(ctx.db, params.required('client_id'), ctx.origin);
    const presented = params.required('code');
    const redirectUri = params.required('redirect_uri');

    // The code and its person's state in one read (one statement, one round trip on PostgreSQL).
    const found = await store.findCodeWithPerson(ctx.db, keyedHash(ctx.hashKey, presented));
    if (!found) throw codeRefused('unknown code');
    const { code } = found;
    if (code.redeemed_at !== null) return refuseReusedCode(ctx, code);
    if (code.client_id !== client.clientId) throw codeRefused('code issued to another client');
    // spec "Authorization code — Lifetime: 10 minutes"
    if (code.expires_at <= ctx.now) throw codeRefused('code expired');
    // spec: "redirect_uri — byte-identical to the one used at authorize; compared with the value stored with the code"
    if (redirectUri !== code.redirect_uri) {
      throw new OAuthError('invalid_grant', 'redirect_uri does not match the one sent to the authorize step; send exactly the same value.', { detail: 'redirect_uri mismatch' });
    }
    checkCodeCredential(ctx, client, code, params);
    if (!found.personActive) throw codeRefused('account missing or disabled');
    return { client, code };
  },

  async issue(ctx, { client, code }) {
    // Single use is one conditional UPDATE; the chain is stored atomically with it (one statement on
    // PostgreSQL, one transaction on SQLite), so a concurrent second redemption that loses and revokes
    // the chain also revokes these tokens.
    const current = isChainId(code.chain_id);
    const chain = newChainRow(ctx.now, {
      clientId: client.clientId,
      sub: code.sub,
      scope: code.scope,
      // spec: "the chain ends 30 days after the user first authorized the application" — the moment
      // the person authorized is when this code was issued.
      expiresAt: code.created_at + REFRESH_CHAIN_LIFETIME_MS,
      ...(current ? { id: code.chain_id } : { legacyChainId: code.chain_id }),
    });
    // Someone redeemed it between our check and our update: that is a second presentation.
    if (!(await store.redeemCodeWithChain(ctx.db, code.code_hash, ctx.now, chain))) return refuseReusedCode(ctx, code);
    return tokensFor(ctx.hashKey, chain, chain.generation, ctx.now, code.scope);
  },
};
