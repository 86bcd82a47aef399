// /account's password and sessions. spec (issue): "Change password (current password required;
// argon2id; every other session of that person ends)" — the current one stays, with a new id — and
// "Sessions: where and when each session signed in, sign out any or all others".
import type { FastifyPluginAsync } from 'fastify';
import { changePassword } from '../../accounts/password-change.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../accounts/passwords.ts';
import { endOtherSessions, endSessionByHandle } from '../../accounts/sessions.ts';
import { recordAudit } from '../../audit/audit.ts';
import { SECOND } from '../../config/clock.ts';
import { waitText } from './signin-flow.ts';
import { showAccount, type AccountPageContext } from './account-page.ts';
import { field } from './forms.ts';

export const accountSecurityRoutes: FastifyPluginAsync<{ ctx: AccountPageContext }> = async (app, { ctx }) => {
  app.post('/account/password', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 303);
    const currentPassword = field(request.body, 'current_password');
    const newPassword = field(request.body, 'new_password');
    if (!currentPassword || !newPassword) {
      return showAccount(ctx, request, reply, session.sub, { status: 400, password: { field: currentPassword ? 'new' : 'current', error: (t) => t.password.missing } });
    }
    const result = await changePassword(ctx.db, ctx.clock, { sub: session.sub, currentPassword, newPassword, address: request.ip });
    if (result.outcome !== 'invalid_password') {
      const outcome = result.outcome === 'changed' ? 'success' : result.outcome === 'throttled' ? 'refused' : 'failure';
      await recordAudit(ctx.db, ctx.clock, { type: 'password.changed', sub: session.sub, ip: request.ip, outcome, detail: outcome === 'failure' ? { reason: 'wrong_password' } : undefined }, request.log);
    }
    switch (result.outcome) {
      case 'invalid_password': {
        const problem = result.problem;
        return showAccount(ctx, request, reply, session.sub, {
          status: 400,
          password: { field: 'new', error: (t) => (problem === 'too_short' ? t.passwordTooShort(MIN_PASSWORD_LENGTH) : t.passwordTooLong(MAX_PASSWORD_LENGTH)) },
        });
      }
      case 'throttled':
      case 'wrong_password': {
        const retryAt = result.retryAt;
        const wait = retryAt === undefined ? undefined : retryAt - ctx.clock();
        if (wait !== undefined) reply.header('retry-after', String(Math.ceil(wait / SECOND)));
        return showAccount(ctx, request, reply, session.sub, {
          status: result.outcome === 'throttled' ? 429 : 400,
          password: {
            field: 'current',
            error: (t) => [result.outcome === 'wrong_password' ? t.password.wrongCurrent : '', wait === undefined ? '' : t.password.throttled(waitText(t, wait))].filter(Boolean).join(' '),
          },
        });
      }
      case 'changed':
        // Every session ended with the old password; this browser gets a new one (a new id).
        await reply.signIn(session.sub);
        request.log.info({ event: 'password_changed' }, 'password changed; other sessions ended');
        return reply.redirect('/account?saved=password#password-heading', 303);
    }
  });

  app.post('/account/sessions/end', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 303);
    const ended = await endSessionByHandle(ctx.db, session.sub, field(request.body, 'session'));
    return reply.redirect(ended ? '/account?ended=session#sessions-heading' : '/account#sessions-heading', 303);
  });

  app.post('/account/sessions/end-others', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    const id = request.cookies[request.server.cookieNames.session];
    if (!session || !id) return reply.redirect('/signin?return=%2Faccount', 303);
    const ended = await endOtherSessions(ctx.db, ctx.sessionKey, session.sub, { id, origin: request.servedOrigin.origin });
    return reply.redirect(`/account?ended_others=${ended}#sessions-heading`, 303);
  });
};
