// /account → API keys (issue 40): create a key (shown once, on the page this form's answer draws — never
// in a URL), revoke one (after a confirmation). The rules are in accounts/api-keys/.
import type { FastifyPluginAsync } from 'fastify';
import { ApiKeyError, createApiKey, revokeApiKey } from '../../accounts/api-keys/api-keys.ts';
import { recordAudit } from '../../audit/audit.ts';
import { API_KEY_EXPIRY_CHOICES, showAccount, type AccountPageContext } from './account-page.ts';
import { field } from './forms.ts';

export const accountApiKeyRoutes: FastifyPluginAsync<{ ctx: AccountPageContext & { hashKey: Buffer } }> = async (app, { ctx }) => {
  const { db, clock } = ctx;

  app.post('/account/api-keys', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 303);
    const name = field(request.body, 'name');
    const expiry = field(request.body, 'expires_in');
    const days = expiry === '' ? undefined : (API_KEY_EXPIRY_CHOICES as readonly number[]).includes(Number(expiry)) ? Number(expiry) : Number.NaN;
    try {
      const created = await createApiKey(db, clock, ctx.hashKey, { sub: session.sub, name, expiresInDays: days });
      await recordAudit(db, clock, { type: 'api_key.created', sub: session.sub, ip: request.ip, outcome: 'success', detail: { api_key_id: created.id } }, request.log);
      // The key is on this page only: the answer is never stored by the browser or a proxy.
      reply.header('cache-control', 'no-store');
      return showAccount(ctx, request, reply, session.sub, { createdApiKey: { name: created.name, key: created.key } });
    } catch (error) {
      if (!(error instanceof ApiKeyError)) throw error;
      return showAccount(ctx, request, reply, session.sub, { status: 400, apiKeyError: (t) => t.apiKeys.errors[error.code], apiKeyName: name });
    }
  });

  app.post('/account/api-keys/revoke', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 303);
    try {
      const revoked = await revokeApiKey(db, clock, field(request.body, 'id'), session.sub);
      await recordAudit(db, clock, { type: 'api_key.revoked', sub: session.sub, ip: request.ip, outcome: 'success', detail: { api_key_id: revoked.id } }, request.log);
      return showAccount(ctx, request, reply, session.sub, { notice: (t) => t.apiKeys.revokedNotice(revoked.name) });
    } catch (error) {
      if (!(error instanceof ApiKeyError)) throw error;
      return showAccount(ctx, request, reply, session.sub, { status: 404, apiKeyError: (t) => t.apiKeys.errors[error.code] });
    }
  });
};
