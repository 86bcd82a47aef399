// POST /oauth/introspect (RFC 7662) — HTTP in and out only; the rules are in introspect.ts.
import type { FastifyInstance } from 'fastify';
import { acceptFormBodiesOnly, clientIdIn, OAuthParams } from './form-params.ts';
import { introspectToken, type Introspection } from './introspect.ts';
import { clientEndpointLimits } from './rate-limits.ts';
import { noStore, postOnly, type OAuthEndpointContext } from './token/token.routes.ts';

export const INTROSPECTION_ENDPOINT_PATH = '/oauth/introspect';

export async function introspectRoutes(app: FastifyInstance, { ctx }: { ctx: OAuthEndpointContext }): Promise<void> {
  acceptFormBodiesOnly(app);
  postOnly(app, INTROSPECTION_ENDPOINT_PATH);
  // The token endpoint's failure limits: a caller authenticates the same way here, so a secret cannot be
  // guessed faster through this door; an address flooding it with refusals gets 429 with Retry-After.
  const limits = clientEndpointLimits(ctx.db, ctx.clock);

  app.post(INTROSPECTION_ENDPOINT_PATH, async (request, reply) => {
    noStore(reply);
    limits.refuseBlockedAddress(request.ip);
    let answer: Introspection;
    try {
      answer = await introspectToken(ctx.db, ctx.hashKey, ctx.clock(), OAuthParams.from(request.body), request.servedOrigin.origin);
    } catch (error) {
      throw await limits.afterRefusal(error, { address: request.ip, clientId: clientIdIn(request.body) });
    }
    // Never the token: who asked, and whether it was live.
    request.log.info({ clientId: clientIdIn(request.body), active: answer.active }, 'introspection request');
    return reply.code(200).type('application/json; charset=utf-8').send(answer);
  });
}
