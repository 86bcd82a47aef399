// The admin API's routes: the OpenAPI document for anyone who can reach the listener, everything else
// only with an operator key (requireOperatorKey runs first on every route registered inside).
import type { FastifyInstance } from 'fastify';
import '@fastify/swagger';
import { accountRoutes } from './accounts.routes.ts';
import { auditEventRoutes } from './audit-events.routes.ts';
import { clientRoutes } from './clients.routes.ts';
import { portabilityRoutes } from './portability.routes.ts';
import { identityProviderRoutes } from './identity-providers.routes.ts';
import { requireOperatorKey, type AdminContext } from './operator-auth.ts';

export const OPENAPI_PATH = '/admin/v1/openapi.json';

export async function adminRoutes(app: FastifyInstance, { ctx }: { ctx: AdminContext }): Promise<void> {
  // Built by @fastify/swagger from the routes' schemas (no key: it holds no data).
  app.get(OPENAPI_PATH, { schema: { hide: true } }, async (_request, reply) => reply.header('cache-control', 'no-store').send(app.swagger()));

  await app.register(async (operatorOnly) => {
    operatorOnly.addHook('onRequest', requireOperatorKey(ctx));
    await operatorOnly.register(accountRoutes, { ctx });
    await operatorOnly.register(clientRoutes, { ctx });
    await operatorOnly.register(auditEventRoutes, { ctx });
    await operatorOnly.register(portabilityRoutes, { ctx });
    await operatorOnly.register(identityProviderRoutes, { ctx });
  });
}
