// Applications: search and list, New application (Name, Redirect URIs one per line, Scopes, Public,
// allowed origins) with the secret shown once inside `data-client-secret`; an application's page with
// edit, Rotate secret, Disable / Enable and Delete after typing its name — through operator-changes.ts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ClientError, findClient, listClients, type Client } from '../../clients/clients.ts';
import { field, fields } from '../../web/pages/forms.ts';
import * as changes from '../operator-changes.ts';
import { operatorOf, requireOperator, stepUpNeeded, type ConsoleContext } from './console-auth.ts';
import { consoleLocale, consoleMessages, renderConsole } from './render.ts';

const PAGE = 25;

/** Lines of a textarea, trimmed, empty ones dropped. */
export function lines(value: string): string[] {
  return value.split(/\r?\n/).map((l) => l.trim()).filter((l) => l.length > 0);
}

export async function consoleApplicationRoutes(app: FastifyInstance, { ctx }: { ctx: ConsoleContext }): Promise<void> {
  const guard = requireOperator(ctx);
  const changing = { preHandler: [app.csrfProtection, guard] };
  const wordsOf = (request: FastifyRequest) => consoleMessages(consoleLocale(request));

  async function showList(request: FastifyRequest, reply: FastifyReply, extra: { status?: number; error?: string; form?: Record<string, string | boolean | string[]> } = {}) {
    const q = field(request.query, 'q').trim().toLowerCase();
    const page = Math.max(0, Math.min(10_000, Number(field(request.query, 'page')) || 0));
    const all = (await listClients(ctx.db)).filter((cl) => !q || cl.name.toLowerCase().includes(q) || cl.clientId === q);
    const apps = all.slice(page * PAGE, (page + 1) * PAGE);
    const c = wordsOf(request);
    return renderConsole(
      request,
      reply,
      'applications',
      {
        status: extra.status ?? 200,
        title: () => c.apps.title,
        operator: operatorOf(request).label,
        nav: 'applications',
        error: extra.error,
        notice: field(request.query, 'notice') === 'deleted' ? c.apps.deleted : undefined,
        data: () => ({ q, apps, page, next: all.length > (page + 1) * PAGE, form: extra.form ?? { name: '', redirectUris: '', scopes: 'openid profile email', isPublic: false, allowedOrigins: '', grants: [] } }),
      },
      ctx.productName,
    );
  }

  app.get('/admin/applications', { preHandler: guard }, (request, reply) => showList(request, reply));

  async function showApplication(request: FastifyRequest, reply: FastifyReply, client: Client, extra: { secret?: string; notice?: string; error?: string; status?: number } = {}) {
    const c = wordsOf(request);
    const notices: Record<string, string> = { confirmed: c.confirmed, saved: c.apps.saved, disabled: c.apps.disabledDone, enabled: c.apps.enabledDone, delete_mismatch: c.apps.deleteMismatch };
    return renderConsole(
      request,
      reply,
      'application',
      {
        status: extra.status ?? 200,
        title: () => client.name,
        operator: operatorOf(request).label,
        nav: 'applications',
        notice: extra.notice ?? notices[field(request.query, 'notice')],
        error: extra.error,
        data: () => ({ app: client, secret: extra.secret, base: `/admin/applications/${encodeURIComponent(client.clientId)}` }),
      },
      ctx.productName,
    );
  }

  app.post('/admin/applications', changing, async (request, reply) => {
    const form = {
      name: field(request.body, 'name').slice(0, 300),
      redirectUris: field(request.body, 'redirect_uris').slice(0, 10_000),
      scopes: field(request.body, 'scopes').slice(0, 500),
      isPublic: field(request.body, 'public') === '1',
      allowedOrigins: field(request.body, 'allowed_origins').slice(0, 5_000),
      grants: fields(request.body, 'grant').slice(0, 5),
    };
    try {
      const scopes = form.scopes.split(/\s+/).filter(Boolean);
      const origins = lines(form.allowedOrigins);
      const created = await changes.createClientAsOperator(operatorOf(request).op, {
        name: form.name,
        redirectUris: lines(form.redirectUris),
        ...(scopes.length > 0 ? { scopes } : {}),
        isPublic: form.isPublic,
        ...(origins.length > 0 ? { allowedOrigins: origins } : {}),
        grants: form.grants,
      });
      // spec: "the secret shown once" — on this answer only, never stored or shown again.
      return showApplication(request, reply, created.client, { status: 201, secret: created.clientSecret, notice: wordsOf(request).apps.created });
    } catch (error) {
      if (error instanceof ClientError) return showList(request, reply, { status: 400, error: error.message, form });
      throw error;
    }
  });

  type ById = { Params: { clientId: string } };
  const found = async (request: FastifyRequest<ById>) => findClient(ctx.db, request.params.clientId);
  const notFound = (request: FastifyRequest, reply: FastifyReply) =>
    renderConsole(request, reply, 'message', { status: 404, title: () => wordsOf(request).apps.title, operator: operatorOf(request).label, nav: 'applications', data: () => ({ message: wordsOf(request).errors.notFound, failed: true }) }, ctx.productName);
  const back = (clientId: string, notice: string) => `/admin/applications/${encodeURIComponent(clientId)}?notice=${notice}`;
  const pagePath = (clientId: string) => `/admin/applications/${encodeURIComponent(clientId)}`;

  app.get<ById>('/admin/applications/:clientId', { preHandler: guard }, async (request, reply) => {
    const client = await found(request);
    return client ? showApplication(request, reply, client) : notFound(request, reply);
  });

  app.post<ById>('/admin/applications/:clientId/update', changing, async (request, reply) => {
    const client = await found(request);
    if (!client) return notFound(request, reply);
    try {
      await changes.updateClientAsOperator(operatorOf(request).op, client.clientId, {
        name: field(request.body, 'name').slice(0, 300),
        redirectUris: lines(field(request.body, 'redirect_uris').slice(0, 10_000)),
        scopes: field(request.body, 'scopes').slice(0, 500).split(/\s+/).filter(Boolean),
        allowedOrigins: lines(field(request.body, 'allowed_origins').slice(0, 5_000)),
        grants: fields(request.body, 'grant').slice(0, 5),
      });
    } catch (error) {
      if (error instanceof ClientError) return showApplication(request, reply, client, { status: 400, error: error.message });
      throw error;
    }
    return reply.redirect(back(client.clientId, 'saved'), 303);
  });

  app.post<ById>('/admin/applications/:clientId/rotate-secret', changing, async (request, reply) => {
    if (stepUpNeeded(ctx, request, reply, pagePath(request.params.clientId))) return reply;
    try {
      const rotated = await changes.rotateClientSecretAsOperator(operatorOf(request).op, request.params.clientId);
      return showApplication(request, reply, rotated.client, { secret: rotated.clientSecret, notice: wordsOf(request).apps.rotated });
    } catch (error) {
      const client = await found(request);
      if (error instanceof ClientError && client) return showApplication(request, reply, client, { status: 400, error: error.message });
      throw error;
    }
  });

  app.post<ById>('/admin/applications/:clientId/disable', changing, async (request, reply) => {
    if (stepUpNeeded(ctx, request, reply, pagePath(request.params.clientId))) return reply;
    await changes.updateClientAsOperator(operatorOf(request).op, request.params.clientId, { enabled: false });
    return reply.redirect(back(request.params.clientId, 'disabled'), 303);
  });

  app.post<ById>('/admin/applications/:clientId/enable', changing, async (request, reply) => {
    await changes.updateClientAsOperator(operatorOf(request).op, request.params.clientId, { enabled: true });
    return reply.redirect(back(request.params.clientId, 'enabled'), 303);
  });

  app.post<ById>('/admin/applications/:clientId/delete', changing, async (request, reply) => {
    if (stepUpNeeded(ctx, request, reply, pagePath(request.params.clientId))) return reply;
    const client = await found(request);
    if (!client) return notFound(request, reply);
    // spec (issue 27): "delete after typing its name".
    if (field(request.body, 'confirm').trim() !== client.name) return reply.redirect(back(client.clientId, 'delete_mismatch'), 303);
    await changes.deleteClientAsOperator(operatorOf(request).op, client.clientId);
    return reply.redirect('/admin/applications?notice=deleted', 303);
  });
}
