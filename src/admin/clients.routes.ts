// /admin/v1/clients…: applications, shaped as `signet client create` prints them (toView); the
// secret only in the answer to a creation. Changes go through operator-changes.ts (audited).
import type { FastifyInstance } from 'fastify';
import { findClient, listClients, toView } from '../clients/clients.ts';
import { AdminNotFound } from './errors.ts';
import { operatorOf, type AdminContext } from './operator-auth.ts';
import * as changes from './operator-changes.ts';
import { clientCreateBody, clientIdParams, clientList, clientPatchBody, errorResponses, ref } from './schemas.ts';

type ClientParams = { Params: { client_id: string } };
type OidcFields = { oidc?: boolean; post_logout_redirect_uris?: string[]; id_token_signed_response_alg?: 'ES256' | 'RS256' | null; grants?: string[] };
type CreateBody = { name: string; redirect_uris: string[]; scopes?: string[]; public?: boolean; allowed_origins?: string[] } & OidcFields;
type PatchBody = { name?: string; redirect_uris?: string[]; scopes?: string[]; allowed_origins?: string[]; enabled?: boolean } & OidcFields;
const notFound = { 404: { ...ref('Error'), description: 'no application with this client_id' } } as const;
const tags = ['clients'];

export async function clientRoutes(app: FastifyInstance, { ctx }: { ctx: AdminContext }): Promise<void> {
  app.get(
    '/admin/v1/clients',
    { schema: { tags, summary: 'Every application, oldest first', response: { 200: clientList, ...errorResponses } } },
    async () => ({ clients: (await listClients(ctx.db)).map((c) => toView(c)) }),
  );

  app.post<{ Body: CreateBody }>(
    '/admin/v1/clients',
    {
      schema: {
        tags,
        summary: 'Register an application; a confidential one gets its client_secret in this answer only',
        body: clientCreateBody,
        response: { 201: ref('Client'), ...errorResponses },
      },
      // The schema documents the answer; JSON.stringify keeps toView's order, `client create`'s
      // ("client_id","client_secret",…), where the schema serializer would put required fields first.
      serializerCompiler: () => (data) => JSON.stringify(data),
    },
    async (request, reply) => {
      const b = request.body;
      const { client, clientSecret } = await changes.createClientAsOperator(operatorOf(request), {
        name: b.name,
        redirectUris: b.redirect_uris,
        scopes: b.scopes,
        isPublic: b.public,
        allowedOrigins: b.allowed_origins,
        oidc: b.oidc,
        postLogoutRedirectUris: b.post_logout_redirect_uris,
        idTokenAlg: b.id_token_signed_response_alg,
        grants: b.grants,
      });
      return reply.code(201).send(toView(client, clientSecret));
    },
  );

  app.get<ClientParams>(
    '/admin/v1/clients/:client_id',
    { schema: { tags, summary: 'One application (never its secret)', params: clientIdParams, response: { 200: ref('Client'), ...errorResponses, ...notFound } } },
    async (request) => {
      const client = await findClient(ctx.db, request.params.client_id);
      if (!client) throw new AdminNotFound(`no application with client_id ${request.params.client_id}`);
      return toView(client);
    },
  );

  app.patch<ClientParams & { Body: PatchBody }>(
    '/admin/v1/clients/:client_id',
    {
      schema: {
        tags,
        summary: 'Change an application (as `signet client update`), or disable / enable it',
        params: clientIdParams,
        body: clientPatchBody,
        response: { 200: ref('Client'), ...errorResponses, ...notFound },
      },
    },
    async (request) => {
      const b = request.body;
      const client = await changes.updateClientAsOperator(operatorOf(request), request.params.client_id, {
        name: b.name,
        redirectUris: b.redirect_uris,
        scopes: b.scopes,
        allowedOrigins: b.allowed_origins,
        enabled: b.enabled,
        oidc: b.oidc,
        postLogoutRedirectUris: b.post_logout_redirect_uris,
        idTokenAlg: b.id_token_signed_response_alg,
        grants: b.grants,
      });
      return toView(client);
    },
  );

  app.delete<ClientParams>(
    '/admin/v1/clients/:client_id',
    {
      schema: {
        tags,
        summary: 'Remove an application with its grants, codes and tokens',
        params: clientIdParams,
        response: { 204: { type: 'null', description: 'deleted' }, ...errorResponses, ...notFound },
      },
    },
    async (request, reply) => {
      await changes.deleteClientAsOperator(operatorOf(request), request.params.client_id);
      return reply.code(204).send();
    },
  );
}
