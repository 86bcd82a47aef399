// /verify-email?token=…: the verification link's page. Opening it verifies the address (the link is
// single use and proves only the address it was sent to); a second opening says it is verified already.
import type { FastifyPluginAsync } from 'fastify';
import type { AccountLinkContext } from '../../accounts/account-tokens.ts';
import { verifyEmail } from '../../accounts/email-verification.ts';
import type { Messages } from '../i18n/en.ts';
import { field } from './forms.ts';
import { renderMessage } from './view.ts';

export const emailVerificationRoutes: FastifyPluginAsync<{ ctx: AccountLinkContext }> = async (app, { ctx }) => {
  app.get('/verify-email', async (request, reply) => {
    const result = await verifyEmail(ctx, field(request.query, 'token'));
    const message = (t: Messages): string => {
      switch (result.outcome) {
        case 'verified':
          return t.verify.verified(result.email);
        case 'already_verified':
          return t.verify.alreadyVerified(result.email);
        case 'stale':
          return t.verify.stale;
        case 'invalid_link':
          return t.verify.invalid;
      }
    };
    const failed = result.outcome === 'stale' || result.outcome === 'invalid_link';
    if (!failed) request.log.info({ event: 'email_verified' }, 'e-mail address verified by link');
    return renderMessage(ctx.db, request, reply, (t) => ({ title: t.verify.title, message: message(t), link: { href: '/account', text: t.backToAccount } }), {
      status: failed ? 400 : 200,
      here: '/account',
    });
  });
};
