// POST /oauth/revoke — HTTP in and out only.
import type { FastifyInstance } from 'fastify';
import { acceptFormBodiesOnly, clientIdIn, OAuthParams } from './form-params.ts';
import { clientEndpointLimits } from './rate-limits.ts';
import { revokeToken, type RevokeOutcome } from './revoke.ts';
import { noStore, postOnly, type OAuthEndpointContext } from './token/token.routes.ts';

export async function revokeRoutes(app: FastifyInstance, { ctx }: { ctx: OAuthEndpointContext }): Promise<void> {
  acceptFormBodiesOnly(app);
  postOnly(app, '/oauth/revoke');
  // The same counters as the token endpoint: a client authenticates the same way at both.
  const limits = clientEndpointLimits(ctx.db, ctx.clock);

  app.post('/oauth/revoke', async (request, reply) => {
    noStore(reply);
    limits.refuseBlockedAddress(request.ip);
    let params: OAuthParams;
    let outcome: RevokeOutcome;
    try {
      params = OAuthParams.from(request.body);
      outcome = await revokeToken(ctx.db, ctx.hashKey, ctx.clock(), params);
    } catch (error) {
      // Only a refusal is counted: a request that succeeds touches no counter.
      throw await limits.afterRefusal(error, { address: request.ip, clientId: clientIdIn(request.body) });
    }
    const clientId = params.optional('client_id');
    if (outcome === 'refresh_token_without_hint') {
      // spec: "must be `refresh_token` to revoke a refresh token; without it the token is looked up among
      // access tokens only" — the application believes it revoked a refresh token that stays valid.
      request.log.warn(
        { event: 'refresh_token_revoked_without_hint', clientId, tokenTypeHint: params.optional('token_type_hint') ?? null },
        'a refresh token was sent to /oauth/revoke without token_type_hint=refresh_token, so it was not revoked (spec); tell the developers of this application to send the hint',
      );
    }
    request.log.info({ revoked: outcome === 'revoked', clientId }, 'revocation request');
    return reply.code(200).type('application/json; charset=utf-8').send({});
  });
}
