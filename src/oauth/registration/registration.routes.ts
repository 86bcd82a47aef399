// POST /oauth/register (RFC 7591) — HTTP in and out only; the rules are in registration.ts.
import type { FastifyInstance } from 'fastify';
import { OAuthError } from '../errors.ts';
import { noStore, postOnly } from '../token/token.routes.ts';
import { REGISTRATION_ENDPOINT_PATH } from '../resources.ts';
import { registerDynamicClient, REGISTRATION_BODY_LIMIT, type RegistrationContext } from './registration.ts';

export async function registrationRoutes(app: FastifyInstance, { ctx }: { ctx: RegistrationContext }): Promise<void> {
  // RFC 7591 §3.1: the metadata is a JSON object. Anything else — another content type, JSON that does
  // not parse — is invalid_client_metadata (§3.2.2), never a framework error.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'string', bodyLimit: REGISTRATION_BODY_LIMIT }, (request, body, done) => {
    const type = String(request.headers['content-type'] ?? '').split(';', 1)[0]!.trim().toLowerCase();
    if (type !== 'application/json') return done(new OAuthError('invalid_client_metadata', 'Send the client metadata as JSON with Content-Type: application/json (RFC 7591 §3.1).'), undefined);
    try {
      done(null, JSON.parse(typeof body === 'string' ? body : body.toString('utf8')));
    } catch {
      done(new OAuthError('invalid_client_metadata', 'The body is not valid JSON. Send the client metadata as a JSON object (RFC 7591 §3.1).'), undefined);
    }
  });
  postOnly(app, REGISTRATION_ENDPOINT_PATH);

  // Agents running in a browser (e.g. an MCP inspector) register from another origin: the endpoint takes
  // no cookie and no credential, so any origin may call it.
  app.options(REGISTRATION_ENDPOINT_PATH, async (_request, reply) =>
    reply.code(204).header('access-control-allow-origin', '*').header('access-control-allow-methods', 'POST').header('access-control-allow-headers', 'content-type').header('access-control-max-age', '600').send(),
  );

  app.post(REGISTRATION_ENDPOINT_PATH, { bodyLimit: REGISTRATION_BODY_LIMIT }, async (request, reply) => {
    noStore(reply);
    reply.header('access-control-allow-origin', '*');
    const answer = await registerDynamicClient(ctx, request.body, { ip: request.ip, log: request.log });
    // Never the secret: which application, how it authenticates.
    request.log.info({ clientId: answer.client_id, authMethod: answer.token_endpoint_auth_method }, 'application registered itself');
    return reply.code(201).type('application/json; charset=utf-8').send(answer);
  });
}
