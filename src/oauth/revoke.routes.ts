// POST /oauth/revoke — HTTP in and out only.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../web/app.ts';
import { acceptFormBodiesOnly, OAuthParams } from './form-params.ts';
import { revokeToken } from './revoke.ts';
import { noStore } from './token/token.routes.ts';

export async function revokeRoutes(app: FastifyInstance, { deps }: { deps: AppDeps }): Promise<void> {
  acceptFormBodiesOnly(app);

  app.post('/oauth/revoke', async (request, reply) => {
    noStore(reply);
    const revoked = await revokeToken(deps.db, deps.keys.tokenHash, deps.clock(), OAuthParams.from(request.body));
    request.log.info({ revoked }, 'revocation request');
    return reply.code(200).type('application/json; charset=utf-8').send({});
  });
}
