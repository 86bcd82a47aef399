// POST /oauth/token — HTTP in and out only; the rules are in grants.ts and the handlers.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { countTokensIssued } from '../../audit/audit-metrics.ts';
import { findClientCached } from '../../clients/clients.ts';
import type { Clock } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import { allowOrigin, originAllowedFor, preflightRoute, requestOrigin, varyOnOrigin } from '../cors.ts';
import { acceptFormBodiesOnly, clientIdIn, OAuthParams } from '../form-params.ts';
import { clientEndpointLimits } from '../rate-limits.ts';
import type { IdTokenSigning } from '../oidc/id-token.ts';
import { handleTokenRequest } from './grants.ts';
import { DEVICE_CODE_GRANT_TYPE } from '../device/device-authorizations.ts';

/** What the token, revocation and userinfo endpoints need: the database, the clock and the key of keyed hashes (keys.tokenHash). */
export type OAuthEndpointContext = { db: Db; clock: Clock; hashKey: Buffer };

/** RFC 6749 §5.1: token responses must not be cached. */
export function noStore(reply: FastifyReply): void {
  reply.header('cache-control', 'no-store');
  reply.header('pragma', 'no-cache');
}

/**
 * A POST-only OAuth endpoint answers every other method (GET, HEAD, PUT, PATCH, DELETE) with `405` and
 * `Allow: POST` (RFC 9110 §15.5.6), in the OAuth error shape — not a 404 that suggests a wrong path.
 */
export function postOnly(app: FastifyInstance, url: string): void {
  app.route({
    method: ['GET', 'PUT', 'PATCH', 'DELETE'],
    url,
    handler: async (_request, reply) => {
      noStore(reply);
      return reply
        .code(405)
        .header('allow', 'POST')
        .type('application/json; charset=utf-8')
        .send({ error: 'invalid_request', error_description: `${url} accepts only POST, with an application/x-www-form-urlencoded body.` });
    },
  });
}

/** CORS headers for an allowlisted browser origin of the application the body names (so it can read errors too). */
async function corsForTokenRequest(ctx: OAuthEndpointContext, request: FastifyRequest, reply: FastifyReply): Promise<void> {
  varyOnOrigin(reply);
  const origin = requestOrigin(request);
  const clientId = clientIdIn(request.body);
  if (origin === undefined || clientId === undefined) return;
  const client = await findClientCached(ctx.db, clientId);
  if (originAllowedFor(client, origin)) allowOrigin(reply, origin);
}

/** The token endpoint's options: the shared endpoint context, and how id_tokens are signed (issue 28). */
export async function tokenRoutes(app: FastifyInstance, { ctx, idTokens }: { ctx: OAuthEndpointContext; idTokens: IdTokenSigning }): Promise<void> {
  acceptFormBodiesOnly(app);
  preflightRoute(app, ctx.db, '/oauth/token', 'POST');
  postOnly(app, '/oauth/token');
  const limits = clientEndpointLimits(ctx.db, ctx.clock);

  app.post('/oauth/token', async (request, reply) => {
    noStore(reply);
    // An address past its limit is refused before any database work (and so without CORS headers).
    limits.refuseBlockedAddress(request.ip);
    await corsForTokenRequest(ctx, request, reply);
    try {
      const params = OAuthParams.from(request.body);
      const response = await handleTokenRequest({ db: ctx.db, hashKey: ctx.hashKey, now: ctx.clock(), origin: requestOrigin(request), issuer: request.servedOrigin.origin, ip: request.ip, log: request.log, idTokens }, params);
      // Never the tokens themselves: which grant, for which application.
      const grantType = params.optional('grant_type');
      request.log.info({ grantType, clientId: params.optional('client_id') }, 'tokens issued');
      const counted = grantType === DEVICE_CODE_GRANT_TYPE ? 'device_code' : grantType;
      if (counted === 'authorization_code' || counted === 'refresh_token' || counted === 'client_credentials' || counted === 'device_code') countTokensIssued(counted);
      return reply.code(200).type('application/json; charset=utf-8').send(response);
    } catch (error) {
      // Only a refusal is counted: a request that succeeds touches no counter.
      throw await limits.afterRefusal(error, { address: request.ip, clientId: clientIdIn(request.body) });
    }
  });
}
