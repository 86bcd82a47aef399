// Browser-only applications: /oauth/token and /oauth/userinfo answer cross-origin requests only for
// origins on the calling application's allowlist (spec Authentication 3: "A browser-only application
// cannot complete the token exchange unless an operator allowlist entry exists").
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { listClients, type Client } from '../clients/clients.ts';
import type { Db } from '../db/database.ts';

/** The request's Origin header, when a browser sent one. */
export function requestOrigin(request: FastifyRequest): string | undefined {
  const origin = request.headers.origin;
  return typeof origin === 'string' && origin !== '' ? origin : undefined;
}

/** Whether a response to `origin` may be read by the page of that origin, for this application. */
export function originAllowedFor(client: Client | undefined, origin: string | undefined): origin is string {
  return origin !== undefined && client !== undefined && client.enabled && client.allowedOrigins.includes(origin);
}

/**
 * A preflight carries no client_id and no token, so it is answered for an origin that at least one
 * enabled application lists; the real request is then checked against its own application.
 */
export async function originAllowedByAnyClient(db: Db, origin: string | undefined): Promise<boolean> {
  if (origin === undefined) return false;
  return (await listClients(db)).some((client) => originAllowedFor(client, origin));
}

/** Every answer of these endpoints depends on Origin, so caches must key on it. */
export function varyOnOrigin(reply: FastifyReply): void {
  reply.header('vary', 'Origin');
}

export function allowOrigin(reply: FastifyReply, origin: string): void {
  reply.header('access-control-allow-origin', origin);
  reply.header('access-control-expose-headers', 'WWW-Authenticate');
  varyOnOrigin(reply);
}

/** Answers OPTIONS preflights for one path: CORS headers only for an allowlisted origin, never a body. */
export function preflightRoute(app: FastifyInstance, db: Db, url: string, methods: string): void {
  app.options(url, async (request, reply) => {
    varyOnOrigin(reply);
    const origin = requestOrigin(request);
    if (await originAllowedByAnyClient(db, origin)) {
      allowOrigin(reply, origin!);
      reply.header('access-control-allow-methods', methods);
      reply.header('access-control-allow-headers', 'Authorization, Content-Type');
      reply.header('access-control-max-age', '600');
    }
    return reply.code(204).send();
  });
}
