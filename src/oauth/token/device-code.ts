// Grant `urn:ietf:params:oauth:grant-type:device_code` (RFC 8628 §3.4–3.5; issue 43), for applications
// registered with `--grant device_code`: the device polls with its device_code until the person decides
// at /device. A confidential application authenticates with its secret, a public one sends its
// client_id (RFC 8628 §3.4). The approval becomes a person's chain like a redeemed code's: an access
// token and a refresh token, the chain ending 30 days after the person approved.
import type { Client } from '../../clients/clients.ts';
import { checkClientSecret, checkTokenEndpointClient } from '../client-auth.ts';
import { pollDeviceAuthorization, redeemDeviceAuthorization, type ApprovedDevice } from '../device/device-authorizations.ts';
import { OAuthError } from '../errors.ts';
import type { OAuthParams } from '../form-params.ts';
import { newChainId } from '../token-format.ts';
import type { GrantHandler } from './grant.ts';
import { insertGrantChain } from './grant-chains.store.ts';
import { newIssuance, REFRESH_CHAIN_LIFETIME_MS, tokensFor } from './issue-tokens.ts';
import { inTransaction } from '../tokens.store.ts';

export type CheckedDeviceCode = { client: Client; approved: ApprovedDevice };

export const deviceCodeGrant: GrantHandler<CheckedDeviceCode> = {
  async check(ctx, params: OAuthParams) {
    const client = await checkTokenEndpointClient(ctx.db, params.required('client_id'), ctx.origin);
    if (!client.isPublic) checkClientSecret(ctx.hashKey, client, params.optional('client_secret'));
    const deviceCode = params.required('device_code');
    return { client, approved: await pollDeviceAuthorization({ db: ctx.db, hashKey: ctx.hashKey, now: ctx.now }, client, deviceCode) };
  },

  async issue(ctx, { client, approved }) {
    const chain = {
      id: newChainId(),
      client_id: client.clientId,
      sub: approved.sub,
      scope: approved.scope,
      generation: 1,
      created_at: ctx.now,
      // spec: the chain ends 30 days after the person authorized the application — here, the approval's poll
      expires_at: ctx.now + REFRESH_CHAIN_LIFETIME_MS,
      rotated_at: null,
      issuance: newIssuance(),
      refresh_revoked_at: null,
      revoked_at: null,
      legacy_chain_id: null,
      code_expires_at: null,
      redirect_uri: null,
      code_challenge: null,
      code_challenge_method: null,
      grant_type: 'device_code' as const,
    };
    // Single use: the approval is redeemed and the chain inserted together, or neither.
    const issued = await inTransaction(ctx.db, async (trx) => {
      if (!(await redeemDeviceAuthorization(trx, approved, client.clientId, ctx.now))) return false;
      await insertGrantChain(trx, chain);
      return true;
    });
    if (!issued) throw new OAuthError('invalid_grant', 'The device_code was already used. Start again at the device authorization endpoint.', { detail: 'device code redeemed by another poll' });
    return tokensFor(ctx.hashKey, chain, 1, ctx.now, chain.scope);
  },
};
