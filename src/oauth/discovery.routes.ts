// GET /.well-known/openid-configuration — HTTP in and out only.
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../config/clock.ts';
import { servedOrigins, type Settings } from '../config/settings.ts';
import type { Db } from '../db/database.ts';
import { accurateDiscovery, legacyDiscovery } from './discovery.ts';
import { ensureSigningKeys, jwks } from './oidc/keys.ts';

/** The signing keys' store, for the JWKS: the database, the key that seals private keys, the clock. */
export type SigningKeysContext = { db: Db; sealKey: Buffer; clock: Clock };

export async function discoveryRoutes(app: FastifyInstance, { settings, signing }: { settings: Pick<Settings, 'baseUrl' | 'altBaseUrl' | 'compat'>; signing: SigningKeysContext }): Promise<void> {
  const origins = servedOrigins(settings).map((url) => url.origin);
  app.get('/.well-known/openid-configuration', async (request, reply) => {
    const served = request.servedOrigin.origin;
    const document = settings.compat === 'legacy' ? legacyDiscovery(served, origins) : accurateDiscovery(served);
    // Varies by Host; short caching is fine, the document changes only with the settings.
    return reply.header('cache-control', 'public, max-age=300').header('vary', 'Host').type('application/json; charset=utf-8').send(document);
  });

  // issue 28: the public halves of the id_token signing keys (RFC 7517), every one a relying party may
  // still meet. Cacheable briefly: a rotation's new key signs at once, and relying parties fetch the set
  // again when they meet a kid they do not know.
  let ensured: Promise<unknown> | undefined;
  app.get('/oauth/jwks', async (_request, reply) => {
    // The keys are made at first start (server.ts); an app built without it makes them here once.
    ensured ??= ensureSigningKeys(signing.db, signing.sealKey, signing.clock).catch((error: unknown) => {
      ensured = undefined;
      throw error;
    });
    await ensured;
    return reply.header('cache-control', 'public, max-age=300').type('application/json; charset=utf-8').send(await jwks(signing.db));
  });
}
