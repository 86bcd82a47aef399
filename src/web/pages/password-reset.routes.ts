// Forgotten passwords: /forgot-password asks for a link (the same answer whether or not an account has
// the address), /reset-password?token=… is the link's page. The e-mail itself goes out through
// `signet worker` (accounts/mail/).
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AccountLinkContext } from '../../accounts/account-tokens.ts';
import { requestPasswordReset, resetLinkUsable, resetPassword } from '../../accounts/password-reset.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../accounts/passwords.ts';
import { recordAudit } from '../../audit/audit.ts';
import { SECOND } from '../../config/clock.ts';
import type { Messages } from '../i18n/en.ts';
import { waitText } from './signin-flow.ts';
import { field } from './forms.ts';
import { localeOf, renderMessage, renderPage } from './view.ts';

type Text = (t: Messages) => string;

export const passwordResetRoutes: FastifyPluginAsync<{ ctx: AccountLinkContext }> = async (app, { ctx }) => {
  const { db } = ctx;

  function showRequest(request: FastifyRequest, reply: FastifyReply, state: { email: string; sent?: boolean; error?: Text; status?: number }) {
    return renderPage(db, request, reply, 'forgot-password', (t) => t.reset.requestTitle, (t) => ({ email: state.email, sent: state.sent ?? false, error: state.error?.(t) }), {
      status: state.status ?? 200,
      here: '/forgot-password',
    });
  }

  function showResetForm(request: FastifyRequest, reply: FastifyReply, token: string, state: { error?: Text; status?: number } = {}) {
    return renderPage(
      db,
      request,
      reply,
      'reset-password',
      (t) => t.reset.title,
      (t) => ({ token, error: state.error?.(t), minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH }),
      // The language switch comes back to this form (request logs never hold a query string).
      { status: state.status ?? 200, here: `/reset-password?token=${encodeURIComponent(token)}` },
    );
  }

  /** spec (issue): "a used or expired reset link is refused". */
  function linkRefused(request: FastifyRequest, reply: FastifyReply) {
    return renderMessage(db, request, reply, (t) => ({ title: t.reset.title, message: t.reset.linkInvalid, link: { href: '/forgot-password', text: t.reset.askAgain } }), {
      status: 400,
      here: '/forgot-password',
    });
  }

  app.get('/forgot-password', async (request, reply) => showRequest(request, reply, { email: '' }));

  app.post('/forgot-password', { preHandler: app.csrfProtection }, async (request, reply) => {
    const email = field(request.body, 'email').trim().slice(0, 320);
    if (!email) return showRequest(request, reply, { email, status: 400, error: (t) => t.reset.missingEmail });
    const result = await requestPasswordReset(ctx, { email, address: request.ip, locale: localeOf(request) });
    if (result.outcome === 'invalid_email') return showRequest(request, reply, { email, status: 400, error: (t) => t.reset.invalidEmail });
    if (result.outcome === 'throttled') {
      const wait = result.retryAt - ctx.clock();
      reply.header('retry-after', String(Math.ceil(wait / SECOND)));
      return showRequest(request, reply, { email, status: 429, error: (t) => t.reset.throttled(waitText(t, wait)) });
    }
    // spec (issue): "the same answer whether or not the account exists".
    return showRequest(request, reply, { email, sent: true });
  });

  app.get('/reset-password', async (request, reply) => {
    const token = field(request.query, 'token');
    if (!(await resetLinkUsable(ctx, token))) return linkRefused(request, reply);
    return showResetForm(request, reply, token);
  });

  app.post('/reset-password', { preHandler: app.csrfProtection }, async (request, reply) => {
    const token = field(request.body, 'token');
    const result = await resetPassword(ctx, { token, password: field(request.body, 'password') });
    if (result.outcome === 'invalid_link') return linkRefused(request, reply);
    if (result.outcome === 'invalid_password') {
      const problem = result.problem;
      return showResetForm(request, reply, token, { status: 400, error: (t) => (problem === 'too_short' ? t.passwordTooShort(MIN_PASSWORD_LENGTH) : t.passwordTooLong(MAX_PASSWORD_LENGTH)) });
    }
    await recordAudit(db, ctx.clock, { type: 'password.reset', sub: result.sub, ip: request.ip, outcome: 'success' }, request.log);
    // spec (issue): "a reset ends every session" — this browser's cookie too.
    await reply.signOut();
    request.log.info({ event: 'password_reset' }, 'password reset by link; every session ended');
    return renderMessage(db, request, reply, (t) => ({ title: t.reset.doneTitle, message: t.reset.done, link: { href: '/signin', text: t.reset.signIn } }), {
      header: false,
      here: '/signin',
    });
  });
};
