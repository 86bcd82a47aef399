// Identity providers (issue 33): the list with each redirect URI, Disable / Enable and Remove; the add form
// (a preset or an issuer, client id and secret — the secret never shown again); and a person's linked
// identities with Unlink on their page — all through operator-changes.ts, as the API and the CLI.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { listLinks, LinkError } from '../../accounts/upstream/links.ts';
import { listProviders, ProviderError, toProviderView } from '../../accounts/upstream/providers.ts';
import { field } from '../../web/pages/forms.ts';
import * as changes from '../operator-changes.ts';
import { operatorOf, requireOperator, stepUpNeeded, type ConsoleContext } from './console-auth.ts';
import { consoleLocale, consoleMessages, renderConsole } from './render.ts';

export async function consoleIdentityProviderRoutes(app: FastifyInstance, { ctx }: { ctx: ConsoleContext }): Promise<void> {
  const guard = requireOperator(ctx);
  const changing = { preHandler: [app.csrfProtection, guard] };
  const empty = { slug: '', name: '', preset: '', issuer: '', clientId: '', scope: '' };

  async function show(request: FastifyRequest, reply: FastifyReply, extra: { status?: number; error?: string; form?: typeof empty } = {}) {
    const c = consoleMessages(consoleLocale(request));
    const providers = (await listProviders(ctx.db)).map((p) => toProviderView(p, ctx.baseUrl));
    const notices: Record<string, string> = { added: c.idps.added, removed: c.idps.removed, changed: c.idps.changed, confirmed: c.confirmed };
    return renderConsole(
      request,
      reply,
      'identity-providers',
      { status: extra.status ?? 200, title: () => c.idps.title, operator: operatorOf(request).label, nav: 'identityProviders', notice: notices[field(request.query, 'notice')], error: extra.error, data: () => ({ providers, form: extra.form ?? empty }) },
      ctx.productName,
    );
  }

  app.get('/admin/identity-providers', { preHandler: guard }, (request, reply) => show(request, reply));

  app.post('/admin/identity-providers', changing, async (request, reply) => {
    const form = {
      slug: field(request.body, 'slug').trim().slice(0, 60),
      name: field(request.body, 'name').slice(0, 100),
      preset: field(request.body, 'preset'),
      issuer: field(request.body, 'issuer').trim().slice(0, 400),
      clientId: field(request.body, 'client_id').trim().slice(0, 400),
      scope: field(request.body, 'scope').slice(0, 400),
    };
    try {
      await changes.addProviderAsOperator(operatorOf(request).op, ctx.upstreamKey, {
        slug: form.slug,
        name: form.name || undefined,
        preset: form.preset || undefined,
        issuer: form.issuer || undefined,
        clientId: form.clientId,
        clientSecret: field(request.body, 'client_secret').slice(0, 2000),
        scope: form.scope || undefined,
      });
    } catch (error) {
      if (error instanceof ProviderError) return show(request, reply, { status: 400, error: error.message, form });
      throw error;
    }
    return reply.redirect('/admin/identity-providers?notice=added', 303);
  });

  for (const [action, enabled] of [
    ['disable', false],
    ['enable', true],
  ] as const) {
    app.post<{ Params: { slug: string } }>(`/admin/identity-providers/:slug/${action}`, changing, async (request, reply) => {
      try {
        await changes.updateProviderAsOperator(operatorOf(request).op, ctx.upstreamKey, request.params.slug, { enabled });
      } catch (error) {
        if (error instanceof ProviderError) return show(request, reply, { status: 404, error: error.message });
        throw error;
      }
      return reply.redirect('/admin/identity-providers?notice=changed', 303);
    });
  }

  app.post<{ Params: { slug: string } }>('/admin/identity-providers/:slug/remove', changing, async (request, reply) => {
    // Removing a provider removes every identity linked through it: a fresh second-factor check first.
    if (stepUpNeeded(ctx, request, reply, '/admin/identity-providers')) return reply;
    try {
      await changes.removeProviderAsOperator(operatorOf(request).op, request.params.slug);
    } catch (error) {
      if (error instanceof ProviderError) return show(request, reply, { status: 404, error: error.message });
      throw error;
    }
    return reply.redirect('/admin/identity-providers?notice=removed', 303);
  });

  // A person's linked identities (linked from their page).
  app.get<{ Params: { sub: string } }>('/admin/people/:sub/links', { preHandler: guard }, async (request, reply) => {
    const c = consoleMessages(consoleLocale(request));
    const links = await listLinks(ctx.db, request.params.sub);
    return renderConsole(
      request,
      reply,
      'identity-links',
      { title: () => c.idps.links, operator: operatorOf(request).label, nav: 'people', notice: field(request.query, 'notice') === 'unlinked' ? c.idps.unlinked : undefined, data: () => ({ sub: request.params.sub, links }) },
      ctx.productName,
    );
  });

  app.post<{ Params: { sub: string; slug: string } }>('/admin/people/:sub/links/:slug/unlink', changing, async (request, reply) => {
    const back = `/admin/people/${encodeURIComponent(request.params.sub)}/links`;
    try {
      await changes.unlinkIdentityAsOperator(operatorOf(request).op, request.params.sub, request.params.slug);
    } catch (error) {
      if (!(error instanceof LinkError)) throw error;
    }
    return reply.redirect(`${back}?notice=unlinked`, 303);
  });
}
