// The server-rendered pages: sign-in (password, passkey or an upstream identity provider), consent, /device (issue 43), account (with passkeys), forgotten password, e-mail verification,
// sign-up (when open), tasks, inbox, language switch, and their stylesheet.
// Errors on these routes are pages that say what to do next; the CSRF check failing is a 403 page.
import { fileURLToPath } from 'node:url';
import type { FastifyError, FastifyPluginAsync } from 'fastify';
import { answerGoneClient, clientWentAway } from '../client-gone.ts';
import { webauthnBrowserFiles } from '../webauthn-browser-files.ts';
import { isDatabaseUnavailable } from '../../db/errors.ts';
import type { AccountLinkContext } from '../../accounts/account-tokens.ts';
import type { FlowContext } from '../../oauth/authorization-requests.ts';
import type { TaskContext } from '../../tasks/tasks.ts';
import { accountFactorRoutes } from './account-factors.routes.ts';
import { accountRoutes } from './account.routes.ts';
import { consentRoutes } from './consent.routes.ts';
import { deviceRoutes } from './device.routes.ts';
import { emailVerificationRoutes } from './email-verification.routes.ts';
import { endSessionRoutes } from './end-session.routes.ts';
import { inboxRoutes } from './inbox.routes.ts';
import { homeRoutes } from './home.routes.ts';
import { languageRoutes } from './language.routes.ts';
import { passkeyRoutes } from './passkeys.routes.ts';
import { passwordResetRoutes } from './password-reset.routes.ts';
import { secondStepRoutes, type SecondStepPageContext } from './second-step.routes.ts';
import { signinRoutes } from './signin.routes.ts';
import { signupRoutes } from './signup.routes.ts';
import { tasksRoutes } from './tasks.routes.ts';
import { upstreamLinkRoutes } from './upstream-link.routes.ts';
import { upstreamSigninRoutes, type UpstreamPageContext } from './upstream-signin.routes.ts';
import { taskViewRoutes } from './task-view.routes.ts';
import { renderError } from './view.ts';

const CSRF_ERRORS = new Set(['FST_CSRF_INVALID_TOKEN', 'FST_CSRF_MISSING_SECRET']);

/** `deviceKey`: keys.deviceCookie, for the sign-in page's device cookies; `factors`: second factors and the second step. */
export const pageRoutes: FastifyPluginAsync<{
  ctx: FlowContext;
  tasks: TaskContext;
  accounts: AccountLinkContext & { signupOpen: boolean };
  deviceKey: Buffer;
  factors: SecondStepPageContext;
  /** issue 33: signing in through upstream identity providers */
  upstream: Pick<UpstreamPageContext, 'sealKey' | 'client'>;
}> = async (app, { ctx, tasks, accounts, deviceKey, factors, upstream }) => {
  const { db } = ctx;

  // Loaded here, not at module load: CLI commands import the app's modules but never serve pages.
  const { default: fastifyStatic } = await import('@fastify/static');
  await app.register(fastifyStatic, {
    root: fileURLToPath(new URL('../static', import.meta.url)),
    prefix: '/static/',
    decorateReply: false,
    index: false,
    maxAge: '1h',
  });
  // @simplewebauthn/browser's ES modules, served from our own origin (no CDN; CSP script-src 'self'),
  // imported by static/passkeys.js.
  await app.register(fastifyStatic, webauthnBrowserFiles('/static/vendor/simplewebauthn/'));

  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (clientWentAway(request, error)) return answerGoneClient(request, reply);
    if (CSRF_ERRORS.has(error.code)) {
      request.log.warn({ event: 'csrf_rejected' }, 'form without a valid CSRF token');
      return renderError(db, request, reply, 403, (t) => t.csrfFailed);
    }
    if (isDatabaseUnavailable(error)) {
      request.log.error({ err: error }, 'database unavailable');
      reply.header('retry-after', '5');
      return renderError(db, request, reply, 503, (t) => t.unavailable);
    }
    const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'unexpected error on a page');
    return renderError(db, request, reply, status, (t) => (status === 500 ? t.serverError : t.csrfFailed));
  });

  await app.register(signinRoutes, { ctx, deviceKey, factors });
  await app.register(secondStepRoutes, { ctx: factors });
  await app.register(consentRoutes, { ctx, factors });
  // issue 43: the device grant's page (RFC 8628), then the same sign-in and consent
  await app.register(deviceRoutes, { ctx, factors });
  await app.register(endSessionRoutes, { ctx });
  await app.register(accountFactorRoutes, { ctx: factors });
  await app.register(passkeyRoutes, { ctx, deviceKey, factors, account: { db, clock: ctx.clock, sessionKey: accounts.hashKey } });
  await app.register(accountRoutes, { ctx: { db, clock: ctx.clock, sessionKey: accounts.hashKey }, links: accounts });
  const upstreamCtx: UpstreamPageContext = { flow: ctx, factors, sealKey: upstream.sealKey, client: upstream.client, signupOpen: accounts.signupOpen };
  await app.register(upstreamSigninRoutes, { ctx: upstreamCtx });
  await app.register(upstreamLinkRoutes, { ctx: upstreamCtx, account: { db, clock: ctx.clock, sessionKey: accounts.hashKey }, deviceKey });
  await app.register(passwordResetRoutes, { ctx: accounts });
  await app.register(emailVerificationRoutes, { ctx: accounts });
  // spec (issue): "with signup closed the page is 404" — then it is not served at all.
  if (accounts.signupOpen) await app.register(signupRoutes, { ctx: accounts });
  await app.register(tasksRoutes, { ctx: tasks });
  await app.register(taskViewRoutes, { ctx: tasks });
  await app.register(inboxRoutes, { db, dialect: ctx.dialect, clock: ctx.clock });
  await app.register(languageRoutes);
  await app.register(homeRoutes);
};
