// /admin/v1/accounts…: HTTP in and out only. Reads call the accounts domain; changes go through
// operator-changes.ts, which records each one in the audit trail.
import type { FastifyInstance } from 'fastify';
import { findAccount, findAccountByEmail, findAccountByPhone, type Profile } from '../accounts/accounts.ts';
import { listAccountsPage, listSessionsOf } from '../accounts/account-admin.ts';
import { factorView, listFactors } from '../accounts/factors/factors.ts';
import { listApiKeys } from '../accounts/api-keys/api-keys.ts';
import { ROLES, rolesOf } from '../accounts/roles.ts';
import { AdminNotFound } from './errors.ts';
import { operatorOf, type AdminContext } from './operator-auth.ts';
import * as changes from './operator-changes.ts';
import { apiKeyCreateBody, apiKeyCreated, apiKeyList, apiKeyParams, factorList, accountCreateBody, accountPage, accountPatchBody, accountsQuery, errorResponses, ref, sessionList, sessionParams, sessionsEnded, subParams } from './schemas.ts';

type SubParams = { Params: { sub: string } };
const notFound = { 404: { ...ref('Error'), description: 'no account with this sub' } } as const;
const noContent = (description: string) => ({ 204: { type: 'null', description } }) as const;
const tags = ['accounts'];

async function existing(ctx: AdminContext, sub: string): Promise<Profile> {
  const account = await findAccount(ctx.db, sub);
  if (!account) throw new AdminNotFound(`no account with sub ${sub}`);
  return account;
}

export async function accountRoutes(app: FastifyInstance, { ctx }: { ctx: AdminContext }): Promise<void> {
  app.get<{ Querystring: { email?: string; phone?: string; cursor?: string; limit?: string } }>(
    '/admin/v1/accounts',
    {
      schema: {
        tags,
        summary: 'List accounts (oldest first), or find one by e-mail or phone',
        description: 'Give at most one of `email`, `phone` and `cursor`. A search answers the matching account (or none) and no cursor.',
        querystring: accountsQuery,
        response: { 200: accountPage, ...errorResponses },
      },
    },
    async (request, reply) => {
      const { email, phone, cursor, limit } = request.query;
      if ([email, phone, cursor].filter((v) => v !== undefined).length > 1) {
        return reply.code(400).send({ error: 'bad_request', message: 'give one of email, phone or cursor, not several' });
      }
      if (email !== undefined || phone !== undefined) {
        const found = email !== undefined ? await findAccountByEmail(ctx.db, email) : await findAccountByPhone(ctx.db, phone!);
        return { accounts: found ? [found] : [], next_cursor: null };
      }
      return listAccountsPage(ctx.db, { cursor, limit: limit === undefined ? undefined : Number(limit) });
    },
  );

  app.post<{ Body: { email?: string; phone_number?: string; name?: string; picture?: string; email_verified?: boolean; phone_number_verified?: boolean; password: string; legacy_numeric_id?: boolean } }>(
    '/admin/v1/accounts',
    {
      schema: {
        tags,
        summary: 'Create an account (as `signet user create`)',
        body: accountCreateBody,
        response: { 201: ref('Account'), ...errorResponses, 409: { ...ref('Error'), description: 'the e-mail or phone number belongs to another account' } },
      },
    },
    async (request, reply) => {
      const b = request.body;
      const profile = await changes.createAccountAsOperator(operatorOf(request), {
        email: b.email,
        phone: b.phone_number,
        name: b.name,
        picture: b.picture,
        emailVerified: b.email_verified,
        phoneVerified: b.phone_number_verified,
        legacyNumericId: b.legacy_numeric_id,
        password: b.password,
      });
      return reply.code(201).send(profile);
    },
  );

  app.get<SubParams>(
    '/admin/v1/accounts/:sub',
    { schema: { tags, summary: 'One account', params: subParams, response: { 200: ref('Account'), ...errorResponses, ...notFound } } },
    async (request) => existing(ctx, request.params.sub),
  );

  app.patch<SubParams & { Body: changes.AccountPatch }>(
    '/admin/v1/accounts/:sub',
    {
      schema: {
        tags,
        summary: 'Change an account: the `signet user update` fields, and `disabled`',
        params: subParams,
        body: accountPatchBody,
        response: { 200: ref('Account'), ...errorResponses, ...notFound, 409: { ...ref('Error'), description: 'the e-mail or phone number belongs to another account' } },
      },
    },
    async (request) => changes.updateAccountAsOperator(operatorOf(request), request.params.sub, request.body),
  );

  app.delete<SubParams>(
    '/admin/v1/accounts/:sub',
    {
      schema: {
        tags,
        summary: 'Delete an account: its grants, tokens, sessions, tasks and notifications go with it',
        params: subParams,
        response: { ...noContent('deleted; every token it held stops working at once'), ...errorResponses, ...notFound },
      },
    },
    async (request, reply) => {
      await changes.deleteAccountAsOperator(operatorOf(request), request.params.sub);
      return reply.code(204).send();
    },
  );

  app.post<SubParams & { Querystring: { address?: string } }>(
    '/admin/v1/accounts/:sub/unlock',
    {
      schema: {
        tags,
        summary: 'Lift sign-in throttling for the account (from every address)',
        description:
          'With `address`, the failures counted against that client address over every account are forgotten too — for a person who shares the address with whoever was failing.',
        params: subParams,
        querystring: { type: 'object', additionalProperties: false, properties: { address: { type: 'string', minLength: 1, maxLength: 64, description: 'a client IP address' } } },
        response: { ...noContent('unlocked'), ...errorResponses, ...notFound },
      },
    },
    async (request, reply) => {
      await changes.unlockAccountAsOperator(operatorOf(request), request.params.sub, { address: request.query.address });
      return reply.code(204).send();
    },
  );

  app.get<SubParams>(
    '/admin/v1/accounts/:sub/sessions',
    { schema: { tags, summary: "The person's live sessions, newest first", params: subParams, response: { 200: sessionList, ...errorResponses, ...notFound } } },
    async (request) => ({ sessions: await listSessionsOf(ctx.db, ctx.clock, request.params.sub) }),
  );

  app.delete<SubParams>(
    '/admin/v1/accounts/:sub/sessions',
    {
      schema: {
        tags,
        summary: 'End every session of the person (they sign in again everywhere)',
        params: subParams,
        response: { 200: sessionsEnded, ...errorResponses, ...notFound },
      },
    },
    async (request) => ({ ended: await changes.endSessionsAsOperator(operatorOf(request), request.params.sub) }),
  );

  app.delete<{ Params: { sub: string; id: string } }>(
    '/admin/v1/accounts/:sub/sessions/:id',
    {
      schema: {
        tags,
        summary: 'End one session of the person (that browser signs in again; the others go on)',
        params: sessionParams,
        response: { ...noContent('the session ended'), ...errorResponses, 404: { ...ref('Error'), description: 'no account with this sub, or no live session with this id' } },
      },
    },
    async (request, reply) => {
      await changes.endSessionAsOperator(operatorOf(request), request.params.sub, request.params.id);
      return reply.code(204).send();
    },
  );

  app.get<SubParams>(
    '/admin/v1/accounts/:sub/factors',
    { schema: { tags, summary: "The person's second factors: kinds, names, dates — never secrets", params: subParams, response: { 200: factorList, ...errorResponses, ...notFound } } },
    async (request) => {
      await existing(ctx, request.params.sub);
      const { factors, recoveryCodesLeft } = await listFactors(ctx.db, request.params.sub);
      return { factors: factors.map(factorView), recovery_codes_left: recoveryCodesLeft };
    },
  );

  app.delete<SubParams>(
    '/admin/v1/accounts/:sub/factors',
    {
      schema: {
        tags,
        summary: 'Remove every second factor and recovery code of the person, and end their sessions',
        description: 'For a person who lost their phone and their recovery codes: they sign in with the password alone (or set a factor up again when SIGNET_MFA=required).',
        params: subParams,
        response: { ...noContent('removed; every session ended'), ...errorResponses, ...notFound },
      },
    },
    async (request, reply) => {
      await changes.resetFactorsAsOperator(operatorOf(request), request.params.sub);
      return reply.code(204).send();
    },
  );

  // issue 40: a person's API keys for the document APIs (as `signet api-key create|list|revoke`).
  app.get<SubParams>(
    '/admin/v1/accounts/:sub/api-keys',
    { schema: { tags, summary: "The person's API keys: names, dates — never the keys", params: subParams, response: { 200: apiKeyList, ...errorResponses, ...notFound } } },
    async (request) => {
      await existing(ctx, request.params.sub);
      return { api_keys: await listApiKeys(ctx.db, request.params.sub) };
    },
  );

  app.post<SubParams & { Body: { name: string; expires_in_days?: number } }>(
    '/admin/v1/accounts/:sub/api-keys',
    {
      schema: {
        tags,
        summary: 'Create an API key for the person (the key is in this answer only)',
        params: subParams,
        body: apiKeyCreateBody,
        response: { 201: apiKeyCreated, ...errorResponses, ...notFound },
      },
    },
    async (request, reply) => {
      const created = await changes.createApiKeyAsOperator(operatorOf(request), request.params.sub, { name: request.body.name, expiresInDays: request.body.expires_in_days });
      return reply.code(201).send(created);
    },
  );

  app.delete<{ Params: { sub: string; id: string } }>(
    '/admin/v1/accounts/:sub/api-keys/:id',
    {
      schema: {
        tags,
        summary: 'Revoke one of the person\'s API keys, at once',
        params: apiKeyParams,
        response: { 200: ref('ApiKey'), ...errorResponses, 404: { ...ref('Error'), description: 'no account with this sub, or no API key of theirs with this id' } },
      },
    },
    async (request) => changes.revokeApiKeyAsOperator(operatorOf(request), request.params.sub, request.params.id),
  );

  // issue 27: "`signet user role add SUB operator` / `role remove`, and the same in the admin API".
  const roleParams = { type: 'object', required: ['sub', 'role'], properties: { sub: subParams.properties.sub, role: { type: 'string', enum: [...ROLES] } } } as const;
  const roleList = { type: 'object', required: ['roles'], additionalProperties: false, properties: { roles: { type: 'array', items: { type: 'string' } } } } as const;

  app.get<SubParams>(
    '/admin/v1/accounts/:sub/roles',
    { schema: { tags, summary: "The person's roles (`operator` opens the admin console)", params: subParams, response: { 200: roleList, ...errorResponses, ...notFound } } },
    async (request) => {
      await existing(ctx, request.params.sub);
      return { roles: await rolesOf(ctx.db, request.params.sub) };
    },
  );

  app.put<{ Params: { sub: string; role: string } }>(
    '/admin/v1/accounts/:sub/roles/:role',
    { schema: { tags, summary: 'Give the person a role (as `signet user role add SUB operator`)', params: roleParams, response: { 200: roleList, ...errorResponses, ...notFound } } },
    async (request) => {
      await changes.addRoleAsOperator(operatorOf(request), request.params.sub, request.params.role);
      return { roles: await rolesOf(ctx.db, request.params.sub) };
    },
  );

  app.delete<{ Params: { sub: string; role: string } }>(
    '/admin/v1/accounts/:sub/roles/:role',
    { schema: { tags, summary: 'Take a role from the person (as `signet user role remove SUB operator`)', params: roleParams, response: { 200: roleList, ...errorResponses, ...notFound } } },
    async (request) => {
      await changes.removeRoleAsOperator(operatorOf(request), request.params.sub, request.params.role);
      return { roles: await rolesOf(ctx.db, request.params.sub) };
    },
  );
}
