// /admin/v1/identity-providers…: upstream identity providers (issue 33), shaped as `signet idp add`
// prints them (the client secret is accepted on creation and change, never answered); and a person's
// linked identities under /admin/v1/accounts/:sub/links. Changes go through operator-changes.ts (audited).
import type { FastifyInstance } from 'fastify';
import { findAccount } from '../accounts/accounts.ts';
import { listLinks, LinkError } from '../accounts/upstream/links.ts';
import { findProvider, listProviders, ProviderError, toProviderView } from '../accounts/upstream/providers.ts';
import { AdminNotFound } from './errors.ts';
import { operatorOf, type AdminContext } from './operator-auth.ts';
import * as changes from './operator-changes.ts';
import { errorResponses, ref, subParams } from './schemas.ts';

const tags = ['identity-providers'];
const slugParams = { type: 'object', required: ['slug'], properties: { slug: { type: 'string', minLength: 1, maxLength: 40 } } } as const;
const linkParams = { type: 'object', required: ['sub', 'slug'], properties: { sub: subParams.properties.sub, slug: slugParams.properties.slug } } as const;
const notFound = { 404: { ...ref('Error'), description: 'no such provider (or account, or link)' } } as const;
const conflict = { 409: { ...ref('Error'), description: 'the slug is taken, or the unlink would leave no way to sign in' } } as const;
const secret = { type: 'string', minLength: 1, maxLength: 2000, writeOnly: true, description: 'sealed at rest, never answered' } as const;

const createBody = {
  type: 'object',
  additionalProperties: false,
  required: ['slug', 'client_id', 'client_secret'],
  properties: {
    slug: { type: 'string', maxLength: 40, description: 'lower-case letters, digits, hyphens; part of the redirect URI' },
    name: { type: 'string', maxLength: 80 },
    issuer: { type: 'string', maxLength: 400, description: 'an OpenID Provider\'s issuer (or, for the github preset, a GitHub Enterprise Server address)' },
    preset: { type: 'string', enum: ['github', 'google', 'entra', 'microsoft', 'gitlab', 'keycloak'] },
    tenant: { type: 'string', maxLength: 100, description: 'Microsoft Entra ID: the tenant id or domain' },
    client_id: { type: 'string', maxLength: 400 },
    client_secret: secret,
    scope: { type: 'string', maxLength: 400 },
  },
} as const;

const patchBody = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    name: { type: 'string', maxLength: 80 },
    issuer: { type: 'string', maxLength: 400 },
    client_id: { type: 'string', maxLength: 400 },
    client_secret: secret,
    scope: { type: 'string', maxLength: 400 },
    enabled: { type: 'boolean', description: 'false: its button is hidden and its sign-ins refused (links are kept)' },
  },
} as const;

type CreateBody = { slug: string; name?: string; issuer?: string; preset?: string; tenant?: string; client_id: string; client_secret: string; scope?: string };
type PatchBody = { name?: string; issuer?: string; client_id?: string; client_secret?: string; scope?: string; enabled?: boolean };

/** Provider and link errors in the admin API's shape. */
function answerError(error: unknown): never {
  if (error instanceof ProviderError || error instanceof LinkError) {
    const status = error.code === 'not_found' ? 404 : error.code === 'slug_taken' || error.code === 'last_way_in' || error.code === 'linked_elsewhere' || error.code === 'already_linked' ? 409 : 400;
    throw Object.assign(new Error(error.message), { statusCode: status, code: error.code });
  }
  throw error;
}

export async function identityProviderRoutes(app: FastifyInstance, { ctx }: { ctx: AdminContext }): Promise<void> {
  const view = (p: Parameters<typeof toProviderView>[0]) => toProviderView(p, ctx.baseUrl);
  // Domain errors carry their own status and code here.
  app.setErrorHandler((error: Error & { statusCode?: number; code?: string }, _request, reply) => {
    if (typeof error.statusCode === 'number' && error.statusCode < 500 && typeof error.code === 'string' && /^[a-z_]+$/.test(error.code)) return reply.code(error.statusCode).send({ error: error.code, message: error.message });
    throw error;
  });

  app.get('/admin/v1/identity-providers', { schema: { tags, summary: 'Every upstream identity provider, by slug', response: { 200: { type: 'object', required: ['providers'], properties: { providers: { type: 'array', items: ref('IdentityProvider') } } }, ...errorResponses } } }, async () => ({
    providers: (await listProviders(ctx.db)).map(view),
  }));

  app.post<{ Body: CreateBody }>(
    '/admin/v1/identity-providers',
    { schema: { tags, summary: 'Add an upstream identity provider (as `signet idp add`); register the answer\'s redirect_uri at the upstream', body: createBody, response: { 201: ref('IdentityProvider'), ...errorResponses, ...conflict } } },
    async (request, reply) => {
      const b = request.body;
      const added = await changes.addProviderAsOperator(operatorOf(request), ctx.upstreamKey, { slug: b.slug, name: b.name, issuer: b.issuer, preset: b.preset, tenant: b.tenant, clientId: b.client_id, clientSecret: b.client_secret, scope: b.scope }).catch(answerError);
      return reply.code(201).send(view(added));
    },
  );

  app.get<{ Params: { slug: string } }>('/admin/v1/identity-providers/:slug', { schema: { tags, summary: 'One provider (never its secret)', params: slugParams, response: { 200: ref('IdentityProvider'), ...errorResponses, ...notFound } } }, async (request) => {
    const provider = await findProvider(ctx.db, request.params.slug);
    if (!provider) throw new AdminNotFound(`no identity provider with the slug ${request.params.slug}`);
    return view(provider);
  });

  app.patch<{ Params: { slug: string }; Body: PatchBody }>(
    '/admin/v1/identity-providers/:slug',
    { schema: { tags, summary: 'Change a provider (as `signet idp update`), or disable / enable it', params: slugParams, body: patchBody, response: { 200: ref('IdentityProvider'), ...errorResponses, ...notFound } } },
    async (request) => {
      const b = request.body;
      const changed = await changes.updateProviderAsOperator(operatorOf(request), ctx.upstreamKey, request.params.slug, { name: b.name, issuer: b.issuer, clientId: b.client_id, clientSecret: b.client_secret, scope: b.scope, enabled: b.enabled }).catch(answerError);
      return view(changed);
    },
  );

  app.delete<{ Params: { slug: string } }>(
    '/admin/v1/identity-providers/:slug',
    { schema: { tags, summary: 'Remove a provider with every identity linked through it', params: slugParams, response: { 204: { type: 'null', description: 'removed' }, ...errorResponses, ...notFound } } },
    async (request, reply) => {
      await changes.removeProviderAsOperator(operatorOf(request), request.params.slug).catch(answerError);
      return reply.code(204).send();
    },
  );

  app.get<{ Params: { sub: string } }>(
    '/admin/v1/accounts/:sub/links',
    { schema: { tags, summary: 'A person\'s linked upstream identities (as `signet user links`)', params: subParams, response: { 200: { type: 'object', required: ['links'], properties: { links: { type: 'array', items: ref('IdentityLink') } } }, ...errorResponses, ...notFound } } },
    async (request) => {
      if (!(await findAccount(ctx.db, request.params.sub))) throw new AdminNotFound(`no account with sub ${request.params.sub}`);
      return { links: await listLinks(ctx.db, request.params.sub) };
    },
  );

  app.delete<{ Params: { sub: string; slug: string } }>(
    '/admin/v1/accounts/:sub/links/:slug',
    { schema: { tags, summary: 'Remove a linked identity (as `signet user unlink`)', params: linkParams, response: { 204: { type: 'null', description: 'unlinked' }, ...errorResponses, ...notFound } } },
    async (request, reply) => {
      await changes.unlinkIdentityAsOperator(operatorOf(request), request.params.sub, request.params.slug).catch(answerError);
      return reply.code(204).send();
    },
  );
}
