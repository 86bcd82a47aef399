// Admin keys: list, create (the key shown once), revoke — audited as the CLI's are.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { AdminKeyError, listAdminKeys } from '../admin-keys.ts';
import { field } from '../../web/pages/forms.ts';
import * as changes from '../operator-changes.ts';
import { operatorOf, requireOperator, stepUpNeeded, type ConsoleContext } from './console-auth.ts';
import { consoleLocale, consoleMessages, renderConsole } from './render.ts';

export async function consoleAdminKeyRoutes(app: FastifyInstance, { ctx }: { ctx: ConsoleContext }): Promise<void> {
  const guard = requireOperator(ctx);

  async function show(request: FastifyRequest, reply: FastifyReply, extra: { created?: { id: string; key: string }; status?: number; error?: string } = {}) {
    const c = consoleMessages(consoleLocale(request));
    const keys = await listAdminKeys(ctx.db);
    const notice = field(request.query, 'notice') === 'revoked' ? c.keys.revokedDone : field(request.query, 'notice') === 'confirmed' ? c.confirmed : undefined;
    return renderConsole(request, reply, 'keys', { status: extra.status ?? 200, title: () => c.keys.title, operator: operatorOf(request).label, nav: 'keys', notice, error: extra.error, data: () => ({ keys, created: extra.created }) }, ctx.productName);
  }

  app.get('/admin/keys', { preHandler: guard }, (request, reply) => show(request, reply));

  app.post('/admin/keys', { preHandler: [app.csrfProtection, guard] }, async (request, reply) => {
    try {
      const created = await changes.createAdminKeyAsOperator(operatorOf(request).op, field(request.body, 'name'));
      return show(request, reply, { created, status: 201 });
    } catch (error) {
      if (error instanceof AdminKeyError) return show(request, reply, { status: 400, error: error.message });
      throw error;
    }
  });

  app.post<{ Params: { id: string } }>('/admin/keys/:id/revoke', { preHandler: [app.csrfProtection, guard] }, async (request, reply) => {
    if (stepUpNeeded(ctx, request, reply, '/admin/keys')) return reply;
    try {
      await changes.revokeAdminKeyAsOperator(operatorOf(request).op, request.params.id);
    } catch (error) {
      if (error instanceof AdminKeyError) return show(request, reply, { status: 404, error: error.message });
      throw error;
    }
    return reply.redirect('/admin/keys?notice=revoked', 303);
  });
}
