// /account's profile: display name and picture (https only, or empty; userinfo shows the change at
// once, as it reads the account on every call), and a verification link for an unverified e-mail.
import type { FastifyPluginAsync } from 'fastify';
import { AccountError, MAX_NAME_LENGTH, updateAccount } from '../../accounts/accounts.ts';
import type { AccountLinkContext } from '../../accounts/account-tokens.ts';
import { requestEmailVerification } from '../../accounts/email-verification.ts';
import { SECOND } from '../../config/clock.ts';
import { waitText } from './signin-flow.ts';
import { showAccount, type AccountPageContext } from './account-page.ts';
import { field } from './forms.ts';
import { localeOf } from './view.ts';

export const accountProfileRoutes: FastifyPluginAsync<{ ctx: AccountPageContext; links: AccountLinkContext }> = async (app, { ctx, links }) => {
  app.post('/account/profile', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 303);
    const name = field(request.body, 'name').trim();
    const picture = field(request.body, 'picture').trim();
    if (name.length > MAX_NAME_LENGTH) {
      return showAccount(ctx, request, reply, session.sub, { status: 400, profile: { name, picture, field: 'name', error: (t) => t.nameTooLong(MAX_NAME_LENGTH) } });
    }
    try {
      await updateAccount(ctx.db, ctx.clock, session.sub, { name, picture });
    } catch (error) {
      if (error instanceof AccountError && error.code === 'invalid_picture') {
        return showAccount(ctx, request, reply, session.sub, { status: 400, profile: { name, picture, field: 'picture', error: (t) => t.profile.invalidPicture } });
      }
      throw error;
    }
    request.log.info({ event: 'profile_saved' }, 'profile saved');
    return reply.redirect('/account?saved=profile#profile-heading', 303);
  });

  app.post('/account/verify-email', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 303);
    const result = await requestEmailVerification(links, { sub: session.sub, locale: localeOf(request) });
    if (result.outcome === 'throttled') {
      const wait = result.retryAt - ctx.clock();
      reply.header('retry-after', String(Math.ceil(wait / SECOND)));
      return showAccount(ctx, request, reply, session.sub, { status: 429, verificationError: (t) => t.profile.verificationThrottled(waitText(t, wait)) });
    }
    // Already verified (another tab, the CLI): the page shows the state as it is now.
    return reply.redirect(result.outcome === 'queued' ? '/account?verification=sent#profile-heading' : '/account#profile-heading', 303);
  });
};
