// An upstream identity whose e-mail names an existing account (issue 33): the page says why and asks for
// that account's Password ("Link and continue"); only then is the identity linked, and the sign-in goes
// on as after a password. And /account's "Sign-in providers": Unlink, refused when it would leave the
// account with no way to sign in.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { findAccount, hasPassword } from '../../accounts/accounts.ts';
import { signIn } from '../../accounts/signin.ts';
import { findPendingLink, finishPendingLink, linkIdentity, LinkError, unlinkIdentity, type PendingLink } from '../../accounts/upstream/links.ts';
import { findProvider } from '../../accounts/upstream/providers.ts';
import { countIdpSignIn } from '../../audit/audit-metrics.ts';
import { recordAuditSafely } from '../../audit/audit.ts';
import { SECOND } from '../../config/clock.ts';
import { refuseFramedNavigation } from '../../oauth/framing.ts';
import { cookieOptions } from '../cookies.ts';
import type { Messages } from '../i18n/en.ts';
import { showAccount, type AccountPageContext } from './account-page.ts';
import { finishFirstStep, secondStepAfterFirst } from './finish-signin.ts';
import { field } from './forms.ts';
import { setDeviceCookie, waitText } from './signin.routes.ts';
import { federatedAmr, type UpstreamPageContext } from './upstream-signin.routes.ts';
import { renderMessage, renderPage } from './view.ts';

export const upstreamLinkRoutes: FastifyPluginAsync<{ ctx: UpstreamPageContext; account: AccountPageContext; deviceKey: Buffer }> = async (app, { ctx, account: accountCtx, deviceKey }) => {
  const { db, clock } = ctx.flow;
  const keys = { hashKey: ctx.flow.hashKey, sealKey: ctx.sealKey };
  app.addHook('onRequest', refuseFramedNavigation);

  function pendingOf(request: FastifyRequest): Promise<PendingLink | undefined> {
    return findPendingLink(db, clock, keys, request.servedOrigin.origin, request.cookies[request.server.cookieNames.idpLink]);
  }

  function expired(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    reply.clearCookie(request.server.cookieNames.idpLink, cookieOptions(request));
    return renderMessage(db, request, reply, (t) => ({ title: t.idp.problemTitle, message: t.idp.linkExpired, link: { href: '/signin', text: t.idp.backToSignIn } }), { status: 400, header: false });
  }

  async function show(request: FastifyRequest, reply: FastifyReply, pending: PendingLink, extra: { status?: number; error?: (t: Messages) => string } = {}) {
    const account = await findAccount(db, pending.sub);
    const provider = await findProvider(db, pending.provider);
    const name = provider?.name ?? pending.provider;
    const email = account?.email ?? account?.phone_number ?? '';
    const withPassword = await hasPassword(db, pending.sub);
    return renderPage(
      db,
      request,
      reply,
      'idp-link',
      (t) => t.idp.linkTitle(name),
      (t) => ({ heading: t.idp.linkTitle(name), why: t.idp.linkWhy(name, email), withPassword, noPassword: t.idp.linkNoPassword(name), error: extra.error?.(t), identifier: email }),
      { status: extra.status ?? 200, header: false, here: '/signin/idp/link' },
    );
  }

  app.get('/signin/idp/link', async (request, reply) => {
    const pending = await pendingOf(request);
    if (!pending) return expired(request, reply);
    return show(request, reply, pending);
  });

  // "Link and continue": the existing account's password, throttled as any sign-in attempt.
  app.post('/signin/idp/link', { preHandler: app.csrfProtection }, async (request, reply) => {
    const pending = await pendingOf(request);
    if (!pending) return expired(request, reply);
    const account = await findAccount(db, pending.sub);
    const identifier = account?.email ?? account?.phone_number;
    const password = field(request.body, 'password');
    if (!account || !identifier) return expired(request, reply);
    if (!password) return show(request, reply, pending, { status: 400, error: (t) => t.idp.linkWrongPassword });
    const result = await signIn(db, ctx.flow.hashKey, clock, { identifier, password, address: request.ip }, { key: deviceKey, cookie: request.cookies[request.server.cookieNames.device] });
    const about = { sub: pending.sub, ip: request.ip, detail: { provider: pending.provider } };
    if (result.outcome === 'throttled') {
      const wait = result.retryAt - clock();
      reply.header('retry-after', String(Math.ceil(wait / SECOND)));
      await recordAuditSafely(db, clock, { ...about, type: 'signin.throttled', outcome: 'refused' }, request.log);
      return show(request, reply, pending, { status: 429, error: (t) => t.throttled(waitText(t, wait)) });
    }
    if (result.outcome === 'wrong_credentials' || result.sub !== pending.sub) {
      await recordAuditSafely(db, clock, { ...about, type: 'signin.failed', outcome: 'failure', detail: { provider: pending.provider, reason: 'link_password' } }, request.log);
      return show(request, reply, pending, { status: 401, error: (t) => t.idp.linkWrongPassword });
    }
    const id = request.cookies[request.server.cookieNames.idpLink];
    // Once: of two posts of the same page, one links.
    if (!id || !(await finishPendingLink(db, keys, request.servedOrigin.origin, id))) return expired(request, reply);
    reply.clearCookie(request.server.cookieNames.idpLink, cookieOptions(request));
    const provider = await findProvider(db, pending.provider);
    if (!provider || !provider.enabled) return expired(request, reply);
    try {
      await linkIdentity(db, clock, provider, pending.identity, pending.sub);
    } catch (error) {
      if (!(error instanceof LinkError)) throw error;
      await recordAuditSafely(db, clock, { ...about, type: 'idp.linked', outcome: 'failure', detail: { provider: provider.slug, reason: error.code } }, request.log);
      return renderMessage(db, request, reply, (t) => ({ title: t.idp.problemTitle, message: error.code === 'linked_elsewhere' ? t.idp.linkedElsewhere(provider.name) : t.idp.alreadyLinked(provider.name), link: { href: '/signin', text: t.idp.backToSignIn } }), { status: 409, header: false });
    }
    await recordAuditSafely(db, clock, { ...about, type: 'idp.linked', outcome: 'success' }, request.log);
    countIdpSignIn(provider.slug, 'succeeded');
    await recordAuditSafely(db, clock, { ...about, type: 'idp.signin.succeeded', outcome: 'success' }, request.log);
    const due = await secondStepAfterFirst(ctx.factors, request, pending.sub);
    const next = await finishFirstStep(ctx.factors, request, reply, { sub: pending.sub, due, amr: ['pwd', ...federatedAmr(pending.identity.amr)], requestId: pending.requestId, returnTo: pending.returnTo });
    if (result.deviceCookie !== undefined) setDeviceCookie(request, reply, result.deviceCookie);
    return reply.redirect(next, 303);
  });

  // /account → Sign-in providers → Unlink.
  app.post('/account/idp/unlink', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 303);
    const slug = field(request.body, 'provider');
    const provider = await findProvider(db, slug);
    try {
      await unlinkIdentity(db, session.sub, slug);
    } catch (error) {
      if (!(error instanceof LinkError)) throw error;
      if (error.code === 'not_found') return reply.redirect('/account#providers-heading', 303);
      await recordAuditSafely(db, clock, { type: 'idp.unlinked', outcome: 'refused', sub: session.sub, ip: request.ip, detail: { provider: slug, reason: error.code } }, request.log);
      return showAccount(accountCtx, request, reply, session.sub, { status: 409, providersError: (t) => t.idp.lastWayIn(provider?.name ?? slug) });
    }
    await recordAuditSafely(db, clock, { type: 'idp.unlinked', outcome: 'success', sub: session.sub, ip: request.ip, detail: { provider: slug } }, request.log);
    return reply.redirect(`/account?idp_unlinked=${encodeURIComponent(slug)}#providers-heading`, 303);
  });
};
