// GET /.well-known/openid-configuration — HTTP in and out only.
import type { FastifyInstance } from 'fastify';
import { servedOrigins } from '../config/settings.ts';
import type { AppDeps } from '../web/app.ts';
import { accurateDiscovery, legacyDiscovery } from './discovery.ts';

export async function discoveryRoutes(app: FastifyInstance, { deps }: { deps: AppDeps }): Promise<void> {
  const origins = servedOrigins(deps.settings).map((url) => url.origin);
  app.get('/.well-known/openid-configuration', async (request, reply) => {
    const served = request.servedOrigin.origin;
    const document = deps.settings.compat === 'legacy' ? legacyDiscovery(served, origins) : accurateDiscovery(served);
    // Varies by Host; short caching is fine, the document changes only with the settings.
    return reply.header('cache-control', 'public, max-age=300').header('vary', 'Host').type('application/json; charset=utf-8').send(document);
  });
}
