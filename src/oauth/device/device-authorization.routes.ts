// POST /oauth/device_authorization (RFC 8628 §3.1–3.2; issue 43) — HTTP in and out only; the rules are
// in device-authorizations.ts. The application authenticates as at the token endpoint: a confidential
// one with client_secret in the body (client_secret_post), a public one by its client_id alone.
import type { FastifyInstance } from 'fastify';
import { checkClientSecret, checkTokenEndpointClient } from '../client-auth.ts';
import { OAuthError } from '../errors.ts';
import { acceptFormBodiesOnly, clientIdIn, OAuthParams } from '../form-params.ts';
import { requestOrigin } from '../cors.ts';
import { clientEndpointLimits } from '../rate-limits.ts';
import { noStore, postOnly, type OAuthEndpointContext } from '../token/token.routes.ts';
import { deviceScope, startDeviceAuthorization } from './device-authorizations.ts';

export const DEVICE_AUTHORIZATION_PATH = '/oauth/device_authorization';

export async function deviceAuthorizationRoutes(app: FastifyInstance, { ctx }: { ctx: OAuthEndpointContext }): Promise<void> {
  acceptFormBodiesOnly(app);
  postOnly(app, DEVICE_AUTHORIZATION_PATH);
  // The token endpoint's counters: an application authenticates the same way here.
  const limits = clientEndpointLimits(ctx.db, ctx.clock);

  app.post(DEVICE_AUTHORIZATION_PATH, async (request, reply) => {
    noStore(reply);
    limits.refuseBlockedAddress(request.ip);
    try {
      const params = OAuthParams.from(request.body);
      const client = await checkTokenEndpointClient(ctx.db, params.required('client_id'), requestOrigin(request));
      if (!client.isPublic) checkClientSecret(ctx.hashKey, client, params.optional('client_secret'));
      // RFC 8628 §3.2 (errors as RFC 6749 §5.2): "unauthorized_client — The authenticated client is not
      // authorized to use this authorization grant type."
      if (!client.grants.includes('device_code')) {
        throw new OAuthError('unauthorized_client', 'This application is not registered for the device grant. Ask the operator to add it (signet client update ID --grant device_code).', { detail: 'device_code not opted in' });
      }
      const scope = deviceScope(client, params.optional('scope'));
      const now = ctx.clock();
      const answer = await startDeviceAuthorization({ db: ctx.db, hashKey: ctx.hashKey, now, clock: ctx.clock }, client, scope, request.servedOrigin.origin, request.ip);
      request.log.info({ clientId: client.clientId }, 'device authorization started');
      return reply.code(200).type('application/json; charset=utf-8').send(answer);
    } catch (error) {
      throw await limits.afterRefusal(error, { address: request.ip, clientId: clientIdIn(request.body) });
    }
  });
}
