// Grant `authorization_code` (spec "POST /oauth/token — Grant authorization_code").
import { recordAuditSafely } from '../../audit/audit.ts';
import type { Client } from '../../clients/clients.ts';
import { clientSecretMatches } from '../../clients/clients.ts';
import { checkClientSecret, checkTokenEndpointClient } from '../client-auth.ts';
import { DESCRIPTION_CODE_VERIFIER_FAILED, OAuthError } from '../errors.ts';
import type { OAuthParams } from '../form-params.ts';
import { normalizeChallengeMethod, s256Challenge, verifierMatches } from '../pkce.ts';
import { keyedHash } from '../secrets.ts';
import * as store from '../tokens.store.ts';
import { revokedDetail } from '../revocation-detail.ts';
import type { GrantHandler, TokenContext } from './grant.ts';
import { decodeCode, isChainId } from '../token-format.ts';
import { newChainRow, newIssuance, REFRESH_CHAIN_LIFETIME_MS, tokensFor } from './issue-tokens.ts';
import { withIdToken } from '../oidc/id-token.ts';
import { checkTokenResource } from '../resources.ts';

/**
 * A presented authorization code, in either format: a chain-format code (its chain row, generation 0
 * until redeemed) or one from before migration 0010 (its own row in authorization_codes).
 */
export type PresentedCode = {
  clientId: string;
  sub: string;
  scope: string;
  redirectUri: string;
  codeChallenge: string | null;
  codeChallengeMethod: string | null;
  /** when the person authorized: the code's issue */
  issuedAt: number;
  expiresAt: number;
  redeemed: boolean;
  /** the person was revoked from this application meanwhile (withdrawn consent, a replay) */
  revoked: boolean;
  personActive: boolean;
  /** the chain the code starts (revoked when the code is presented again) */
  chainId: string;
  /** issue 39: the RFC 8707 resource the code was issued for, or null */
  resource: string | null;
} & ({ format: 'chain' } | { format: 'legacy'; codeHash: string });

/**
 * What `check` hands to `issue`: the code read and found redeemable; or, for a chain-format code whose
 * request proved a credential on its own (a client secret that checked, or a code_verifier), what the
 * redemption's conditional UPDATE must also hold — then that one statement is the check, and only a
 * refused redemption reads the code to say why (the error is the same either way).
 */
export type CheckedCode = { client: Client } & ({ code: PresentedCode } | { fast: { chainId: string; redirectUri: string; credential: store.CheckedCodeRedemption['credential'] }; params: OAuthParams });

/** The credential a request proves without knowing its code's row, or undefined when only the row can say what is missing or wrong. */
function provenCredential(ctx: TokenContext, client: Client, params: OAuthParams): store.CheckedCodeRedemption['credential'] | undefined {
  const clientSecret = params.optional('client_secret');
  const verifier = params.optional('code_verifier');
  if (clientSecret !== undefined && !clientSecretMatches(ctx.hashKey, client, clientSecret)) return undefined;
  if (verifier !== undefined) return { verifierS256: s256Challenge(verifier), verifier };
  return clientSecret === undefined ? undefined : { secretChecked: true };
}

const DESCRIPTION_CODE_UNUSABLE = 'The authorization code is invalid, expired or already used. Restart at the authorize step to get a new one.';

function codeRefused(detail: string): OAuthError {
  return new OAuthError('invalid_grant', DESCRIPTION_CODE_UNUSABLE, { detail });
}

/** Reads what a presented code is: a primary-key read of its chain, or of its row for the earlier format; with its person's state, one statement. */
async function readPresented(ctx: TokenContext, presented: string): Promise<PresentedCode | undefined> {
  const chainId = decodeCode(ctx.hashKey, presented);
  if (chainId !== undefined) {
    const found = await store.findChainWithPerson(ctx.db, chainId);
    if (!found) return undefined;
    const { chain } = found;
    // Every chain-format code's row has them; a row without would be no code's.
    if (chain.redirect_uri === null || chain.code_expires_at === null) return undefined;
    return {
      format: 'chain',
      chainId,
      clientId: chain.client_id,
      sub: chain.sub,
      scope: chain.scope,
      redirectUri: chain.redirect_uri,
      codeChallenge: chain.code_challenge,
      codeChallengeMethod: chain.code_challenge_method,
      issuedAt: chain.created_at,
      expiresAt: chain.code_expires_at,
      redeemed: chain.generation > 0,
      revoked: chain.revoked_at !== null,
      personActive: found.personActive,
      resource: chain.resource ?? null,
    };
  }
  const found = await store.findCodeWithPerson(ctx.db, keyedHash(ctx.hashKey, presented));
  if (!found) return undefined;
  const { code } = found;
  return {
    format: 'legacy',
    codeHash: code.code_hash,
    chainId: code.chain_id,
    clientId: code.client_id,
    sub: code.sub,
    scope: code.scope,
    redirectUri: code.redirect_uri,
    codeChallenge: code.code_challenge,
    codeChallengeMethod: code.code_challenge_method,
    issuedAt: code.created_at,
    expiresAt: code.expires_at,
    redeemed: code.redeemed_at !== null,
    revoked: false,
    personActive: found.personActive,
    resource: null,
  };
}

/**
 * spec: "A code presented a second time is refused and every token issued from it is revoked"
 * (RFC 6749 §4.1.2). Whoever presents it: a used code that shows up again has leaked.
 */
async function refuseReusedCode(ctx: TokenContext, code: PresentedCode): Promise<never> {
  const revoked = await store.revokeChain(ctx.db, code.chainId, ctx.now);
  await recordAuditSafely(
    ctx.db,
    () => ctx.now,
    {
      type: 'code.replay_detected',
      sub: code.sub,
      clientId: code.clientId,
      ip: ctx.ip,
      outcome: 'refused',
      detail: { revoked: 'code_chain', ...revokedDetail(revoked) },
    },
    ctx.log,
  );
  throw codeRefused('code presented again; its tokens were revoked');
}

/** spec: "The credential required is decided by how the code was issued, not by what the client sends." */
function checkCodeCredential(ctx: TokenContext, client: Client, code: PresentedCode, params: OAuthParams): void {
  const clientSecret = params.optional('client_secret');
  if (code.codeChallenge !== null) {
    // spec: "code_verifier — required when the code was issued with a code_challenge"
    const verifier = params.optional('code_verifier');
    if (verifier === undefined) {
      throw new OAuthError('invalid_request', 'code_verifier is required: the authorization code was issued with a code_challenge. Send the verifier you made the challenge from.');
    }
    // spec: "only the exact string `S256` selects SHA-256; any other value … is treated as `plain`"
    const method = normalizeChallengeMethod(code.codeChallengeMethod ?? undefined);
    if (!verifierMatches(verifier, code.codeChallenge, method)) {
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

/** Every rule, from a read of the code and its person's state (one statement, one round trip on PostgreSQL). */
async function checkByReading(ctx: TokenContext, client: Client, params: OAuthParams): Promise<{ client: Client; code: PresentedCode }> {
  const presented = params.required('code');
  const redirectUri = params.required('redirect_uri');
  const code = await readPresented(ctx, presented);
    if (!code) throw codeRefused('unknown code');
    if (code.redeemed) return refuseReusedCode(ctx, code);
    if (code.clientId !== client.clientId) throw codeRefused('code issued to another client');
    // spec "Authorization code — Lifetime: 10 minutes"
    if (code.expiresAt <= ctx.now) throw codeRefused('code expired');
    // The person withdrew the application (or a replay revoked its tokens) after this code was issued.
    if (code.revoked) throw codeRefused('code revoked');
    // spec: "redirect_uri — byte-identical to the one used at authorize; compared with the value stored with the code"
    if (redirectUri !== code.redirectUri) {
      throw new OAuthError('invalid_grant', 'redirect_uri does not match the one sent to the authorize step; send exactly the same value.', { detail: 'redirect_uri mismatch' });
    }
    checkCodeCredential(ctx, client, code, params);
    if (!code.personActive) throw codeRefused('account missing or disabled');
    // issue 39, RFC 8707 §2.2: a `resource` sent here must be the one authorized.
    checkTokenResource(params.optional('resource'), code.resource);
    return { client, code };
}

export const authorizationCodeGrant: GrantHandler<CheckedCode> = {
  async check(ctx, params) {
    const client = await checkTokenEndpointClient(ctx.db, params.required('client_id'), ctx.origin);
    const chainId = decodeCode(ctx.hashKey, params.required('code'));
    const redirectUri = params.required('redirect_uri');
    // A `resource` (issue 39) is compared with the code's: that needs the read, so no fast path.
    const credential = chainId === undefined || params.optional('resource') !== undefined ? undefined : provenCredential(ctx, client, params);
    if (chainId !== undefined && credential !== undefined) return { client, fast: { chainId, redirectUri, credential }, params };
    return checkByReading(ctx, client, params);
  },

  async issue(ctx, checked) {
    if ('fast' in checked) {
      const { client, fast } = checked;
      const chain = await store.redeemChainCodeChecked(ctx.db, {
        id: fast.chainId,
        now: ctx.now,
        issuance: newIssuance(),
        clientId: client.clientId,
        redirectUri: fast.redirectUri,
        credential: fast.credential,
        // spec: "the chain ends 30 days after the user first authorized the application": from the
        // code's issue, the chain row's created_at.
        chainLifetimeMs: REFRESH_CHAIN_LIFETIME_MS,
      });
      // issue 28: an id_token for an OpenID application granted `openid`; nothing more for any other.
      if (chain) return withIdToken(ctx.idTokens, client, chain, tokensFor(ctx.hashKey, chain, chain.generation, ctx.now, chain.scope), { type: 'authorization_code' });
      // Refused: the rules from a read of the code say why (a second presentation revokes its chain).
      // Should they all hold now — the row changed between the two statements — it is redeemed as usual.
      return authorizationCodeGrant.issue(ctx, await checkByReading(ctx, client, checked.params));
    }
    const { client, code } = checked;
    // spec: "the chain ends 30 days after the user first authorized the application" — the moment the
    // person authorized is when this code was issued.
    const chainExpiresAt = code.issuedAt + REFRESH_CHAIN_LIFETIME_MS;
    if (code.format === 'chain') {
      // Single use is one conditional UPDATE of the chain's row (generation 0 → 1): of concurrent
      // redemptions one wins; a loser is a second presentation and revokes the chain, the winner's
      // tokens with it.
      const chain = await store.redeemChainCode(ctx.db, { id: code.chainId, now: ctx.now, issuance: newIssuance(), chainExpiresAt });
      if (!chain) return refuseReusedCode(ctx, code);
      return withIdToken(ctx.idTokens, client, chain, tokensFor(ctx.hashKey, chain, chain.generation, ctx.now, code.scope), { type: 'authorization_code' });
    }
    // A code from before migration 0010: its redemption and a new chain row, atomically.
    const current = isChainId(code.chainId);
    const chain = newChainRow(ctx.now, {
      clientId: client.clientId,
      sub: code.sub,
      scope: code.scope,
      expiresAt: chainExpiresAt,
      ...(current ? { id: code.chainId } : { legacyChainId: code.chainId }),
    });
    if (!(await store.redeemCodeWithChain(ctx.db, code.codeHash, ctx.now, chain))) return refuseReusedCode(ctx, code);
    return tokensFor(ctx.hashKey, chain, chain.generation, ctx.now, code.scope);
  },
};
