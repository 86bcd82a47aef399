// GET /.well-known/openid-configuration — HTTP in and out only.
import type { FastifyInstance } from 'fastify';
import { servedOrigins, type Settings } from '../config/settings.ts';
import { accurateDiscovery, legacyDiscovery } from './discovery.ts';

export async function discoveryRoutes(app: FastifyInstance, { settings }: { settings: Pick<Settings, 'baseUrl' | 'altBaseUrl' | 'compat'> }): Promise<void> {
  const origins = servedOrigins(settings).map((url) => url.origin);
  app.get('/.well-known/openid-configuration', async (request, reply) => {
    const served = request.servedOrigin.origin;
    const document = settings.compat === 'legacy' ? legacyDiscovery(served, origins) : accurateDiscovery(served);
    // Varies by Host; short caching is fine, the document changes only with the settings.
    return reply.header('cache-control', 'public, max-age=300').header('vary', 'Host').type('application/json; charset=utf-8').send(document);
  });
}
