// /signup: self-registration. Registered only with SIGNET_SIGNUP=open; otherwise the address is a 404
// like any other that serves nothing. The answer to a well-formed form is always "check your e-mail"
// (see accounts/signup.ts): a new account gets a verification link, an existing address a note.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { MAX_NAME_LENGTH } from '../../accounts/accounts.ts';
import type { AccountLinkContext } from '../../accounts/account-tokens.ts';
import { MAX_PASSWORD_LENGTH, MIN_PASSWORD_LENGTH } from '../../accounts/passwords.ts';
import { signUp } from '../../accounts/signup.ts';
import { SECOND } from '../../config/clock.ts';
import type { Messages } from '../i18n/en.ts';
import { waitText } from './signin-flow.ts';
import { field } from './forms.ts';
import { localeOf, renderMessage, renderPage } from './view.ts';

type Form = { email: string; name: string };
type Failure = { status: number; field: 'email' | 'password' | 'name' | undefined; error: (t: Messages) => string };

export const signupRoutes: FastifyPluginAsync<{ ctx: AccountLinkContext }> = async (app, { ctx }) => {
  function show(request: FastifyRequest, reply: FastifyReply, form: Form, failure?: Failure) {
    return renderPage(
      ctx.db,
      request,
      reply,
      'signup',
      (t) => t.signup.title,
      (t) => ({ ...form, error: failure?.error(t), errorField: failure?.field, minLength: MIN_PASSWORD_LENGTH, maxLength: MAX_PASSWORD_LENGTH, nameMaxLength: MAX_NAME_LENGTH }),
      { status: failure?.status ?? 200, header: false, here: '/signup' },
    );
  }

  app.get('/signup', async (request, reply) => {
    if (await request.currentSession()) return reply.redirect('/account', 302);
    return show(request, reply, { email: '', name: '' });
  });

  app.post('/signup', { preHandler: app.csrfProtection }, async (request, reply) => {
    const form: Form = { email: field(request.body, 'email').trim().slice(0, 320), name: field(request.body, 'name') };
    const password = field(request.body, 'password');
    if (!form.email || !password) return show(request, reply, form, { status: 400, field: form.email ? 'password' : 'email', error: (t) => t.signup.missingFields });
    const result = await signUp(ctx, { email: form.email, password, name: form.name, address: request.ip, locale: localeOf(request) });
    switch (result.outcome) {
      case 'invalid_email':
        return show(request, reply, form, { status: 400, field: 'email', error: (t) => t.signup.invalidEmail });
      case 'invalid_password': {
        const problem = result.problem;
        return show(request, reply, form, { status: 400, field: 'password', error: (t) => (problem === 'too_short' ? t.passwordTooShort(MIN_PASSWORD_LENGTH) : t.passwordTooLong(MAX_PASSWORD_LENGTH)) });
      }
      case 'invalid_name':
        return show(request, reply, form, { status: 400, field: 'name', error: (t) => t.nameTooLong(MAX_NAME_LENGTH) });
      case 'throttled': {
        const wait = result.retryAt - ctx.clock();
        reply.header('retry-after', String(Math.ceil(wait / SECOND)));
        return show(request, reply, form, { status: 429, field: undefined, error: (t) => t.signup.throttled(waitText(t, wait)) });
      }
      case 'check_email':
        return renderMessage(ctx.db, request, reply, (t) => ({ title: t.signup.checkTitle, message: t.signup.check(result.email), link: { href: '/signin', text: t.signInButton } }), {
          header: false,
          here: '/signin',
        });
    }
  });
};
