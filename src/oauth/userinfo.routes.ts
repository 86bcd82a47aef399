// GET /oauth/userinfo — HTTP in and out only.
import type { FastifyInstance } from 'fastify';
import { allowOrigin, originAllowedByAnyClient, originAllowedFor, preflightRoute, requestOrigin, varyOnOrigin } from './cors.ts';
import { DETAIL_NO_TOKEN, OAuthError } from './errors.ts';
import { userinfoLimits } from './rate-limits.ts';
import { noStore, type OAuthEndpointContext } from './token/token.routes.ts';
import { bearerToken, readUserinfo } from './userinfo.ts';

const REALM = 'Bearer realm="signet"';

export async function userinfoRoutes(app: FastifyInstance, { ctx }: { ctx: OAuthEndpointContext }): Promise<void> {
  preflightRoute(app, ctx.db, '/oauth/userinfo', 'GET');
  const limits = userinfoLimits(ctx.db, ctx.clock);

  app.get('/oauth/userinfo', async (request, reply) => {
    noStore(reply);
    varyOnOrigin(reply);
    // An address past its limit is refused before any database work: a 429 without a Bearer challenge
    // (the token may be fine; see rate-limits.ts) and without CORS headers.
    limits.refuseBlockedAddress(request.ip);
    const origin = requestOrigin(request);
    const token = bearerToken(request.headers.authorization);
    try {
      if (token === undefined) {
        throw new OAuthError('invalid_token', 'An access token is required: send it as "Authorization: Bearer <token>" (the word Bearer with a capital B).', {
          detail: DETAIL_NO_TOKEN,
        });
      }
      const { claims, client } = await readUserinfo(ctx.db, ctx.hashKey, ctx.clock(), token);
      if (originAllowedFor(client, origin)) allowOrigin(reply, origin);
      return reply.code(200).type('application/json; charset=utf-8').send(claims);
    } catch (caught) {
      // Only a refusal is counted: a request that succeeds touches no counter.
      const error = await limits.afterRefusal(caught, { address: request.ip });
      if (error instanceof OAuthError && error.error === 'invalid_token') {
        // RFC 6750 §3.1: a request without a token gets the challenge without an error code.
        reply.header('www-authenticate', token === undefined ? REALM : `${REALM}, error="invalid_token", error_description="The access token is unknown, expired or revoked"`);
        // Let an allowlisted browser application read the 401, so it knows to refresh.
        if (await originAllowedByAnyClient(ctx.db, origin)) allowOrigin(reply, origin!);
      }
      throw error;
    }
  });
}
