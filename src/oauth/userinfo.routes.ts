// GET /oauth/userinfo — HTTP in and out only.
import type { FastifyInstance } from 'fastify';
import type { AppDeps } from '../web/app.ts';
import { allowOrigin, originAllowedByAnyClient, originAllowedFor, preflightRoute, requestOrigin, varyOnOrigin } from './cors.ts';
import { OAuthError } from './errors.ts';
import { noStore } from './token/token.routes.ts';
import { bearerToken, readUserinfo } from './userinfo.ts';

const REALM = 'Bearer realm="signet"';

export async function userinfoRoutes(app: FastifyInstance, { deps }: { deps: AppDeps }): Promise<void> {
  preflightRoute(app, deps.db, '/oauth/userinfo', 'GET');

  app.get('/oauth/userinfo', async (request, reply) => {
    noStore(reply);
    varyOnOrigin(reply);
    const origin = requestOrigin(request);
    const token = bearerToken(request.headers.authorization);
    try {
      if (token === undefined) {
        // RFC 6750 §3.1: a request without a token gets the challenge without an error code.
        reply.header('www-authenticate', REALM);
        throw new OAuthError('invalid_token', 'An access token is required: send it as "Authorization: Bearer <token>" (the word Bearer with a capital B).', {
          detail: 'no bearer token',
        });
      }
      const { claims, client } = await readUserinfo(deps.db, deps.keys.tokenHash, deps.clock(), token);
      if (originAllowedFor(client, origin)) allowOrigin(reply, origin);
      return reply.code(200).type('application/json; charset=utf-8').send(claims);
    } catch (error) {
      if (error instanceof OAuthError && error.error === 'invalid_token') {
        if (token !== undefined) reply.header('www-authenticate', `${REALM}, error="invalid_token", error_description="The access token is unknown, expired or revoked"`);
        // Let an allowlisted browser application read the 401, so it knows to refresh.
        if (await originAllowedByAnyClient(deps.db, origin)) allowOrigin(reply, origin!);
      }
      throw error;
    }
  });
}
