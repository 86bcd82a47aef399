// An upstream identity whose e-mail names an existing account (issue 33): the page says why and asks for
// that account's Password ("Link and continue"); only then is the identity linked, and the sign-in goes
// on as after a password. And /account's "Sign-in providers": Unlink, refused when it would leave the
// account with no way to sign in.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { findAccount, hasPassword } from '../../accounts/accounts.ts';
import { signIn } from '../../accounts/signin.ts';
import { countPasskeys, PasskeyError, startPasskeyAuthentication, verifyPasskeyAssertion, type PasskeyContext } from '../../accounts/factors/passkeys.ts';
import { brandedMessages } from '../i18n/i18n.ts';
import { relyingPartyOf } from './passkeys.routes.ts';
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
import { setDeviceCookie, waitText } from './signin-flow.ts';
import { federatedAmr, type UpstreamPageContext } from './upstream-signin.routes.ts';
import { localeOf, renderMessage, renderPage } from './view.ts';

export const upstreamLinkRoutes: FastifyPluginAsync<{ ctx: UpstreamPageContext; account: AccountPageContext; deviceKey: Buffer }> = async (app, { ctx, account: accountCtx, deviceKey }) => {
  const { db, clock } = ctx.flow;
  const keys = { hashKey: ctx.flow.hashKey, sealKey: ctx.sealKey };
  const passkeyCtx: PasskeyContext = { db, dialect: ctx.flow.dialect, clock, hashKey: ctx.flow.hashKey };
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
    const rp = relyingPartyOf(request);
    const withPasskey = rp !== undefined && (await countPasskeys(db, pending.sub)) > 0;
    return renderPage(
      db,
      request,
      reply,
      'idp-link',
      (t) => t.idp.linkTitle(name),
      (t) => ({
        heading: t.idp.linkTitle(name),
        why: t.idp.linkWhy(name, email),
        withPassword,
        noPassword: t.idp.linkNoPassword(name),
        error: extra.error?.(t),
        identifier: email,
        passkeyScript: withPasskey ? JSON.stringify({ mode: 'second-step', optionsUrl: '/signin/idp/link/passkey/options', finishUrl: '/signin/idp/link/passkey', text: t.passkeys.script }) : '',
      }),
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
    const done = await completeLink(request, reply, pending, { amr: ['pwd'], secondStep: true });
    if ('page' in done) return done.page(false);
    if (result.deviceCookie !== undefined) setDeviceCookie(request, reply, result.deviceCookie);
    return reply.redirect(done.next, 303);
  });

  /**
   * The owner proved the account (its password, or one of its passkeys): the identity is linked — once —
   * and the sign-in goes on as after that proof. `page` when it cannot (expired, or a link rule refused it).
   */
  async function completeLink(request: FastifyRequest, reply: FastifyReply, pending: PendingLink, proof: { amr: string[]; secondStep: boolean }): Promise<{ next: string } | { page: (json: boolean) => Promise<FastifyReply> | FastifyReply }> {
    const about = { sub: pending.sub, ip: request.ip, detail: { provider: pending.provider } };
    const id = request.cookies[request.server.cookieNames.idpLink];
    const provider = await findProvider(db, pending.provider);
    // Once: of two posts of the same page, one links.
    if (!id || !provider?.enabled || !(await finishPendingLink(db, keys, request.servedOrigin.origin, id))) {
      return { page: (json) => (json ? refuseJson(request, reply, 400, 'link_expired', (t) => t.idp.linkExpired) : expired(request, reply)) };
    }
    reply.clearCookie(request.server.cookieNames.idpLink, cookieOptions(request));
    try {
      await linkIdentity(db, clock, provider, pending.identity, pending.sub);
    } catch (error) {
      if (!(error instanceof LinkError)) throw error;
      await recordAuditSafely(db, clock, { ...about, type: 'idp.linked', outcome: 'failure', detail: { provider: provider.slug, reason: error.code } }, request.log);
      const message = (t: Messages) => (error.code === 'linked_elsewhere' ? t.idp.linkedElsewhere(provider.name) : t.idp.alreadyLinked(provider.name));
      return { page: (json) => (json ? refuseJson(request, reply, 409, error.code, message) : renderMessage(db, request, reply, (t) => ({ title: t.idp.problemTitle, message: message(t), link: { href: '/signin', text: t.idp.backToSignIn } }), { status: 409, header: false })) };
    }
    await recordAuditSafely(db, clock, { ...about, type: 'idp.linked', outcome: 'success' }, request.log);
    countIdpSignIn(provider.slug, 'succeeded');
    await recordAuditSafely(db, clock, { ...about, type: 'idp.signin.succeeded', outcome: 'success' }, request.log);
    const due = proof.secondStep ? await secondStepAfterFirst(ctx.factors, request, pending.sub) : undefined;
    const next = await finishFirstStep(ctx.factors, request, reply, { sub: pending.sub, due, amr: [...proof.amr, ...federatedAmr(pending.identity.amr)], requestId: pending.requestId, returnTo: pending.returnTo });
    return { next };
  }

  function refuseJson(request: FastifyRequest, reply: FastifyReply, status: number, error: string, message: (t: Messages) => string): FastifyReply {
    return reply.code(status).header('cache-control', 'no-store').send({ error, message: message(brandedMessages(localeOf(request), request.server.site.productName)) });
  }

  function refusePasskeyJson(request: FastifyRequest, reply: FastifyReply, error: PasskeyError): FastifyReply {
    const wait = Math.max(0, (error.retryAt ?? clock()) - clock());
    if (error.code === 'throttled') reply.header('retry-after', String(Math.max(1, Math.ceil(wait / SECOND))));
    return refuseJson(request, reply, error.code === 'throttled' ? 429 : 400, error.code, (t) => t.passkeys.errors[error.code].replace('{wait}', waitText(t, wait)));
  }

  // "(or a passkey)": one of the account's passkeys on this host proves it as well (static/passkeys.js,
  // as at the second step). The passkey must verify the person, so no second step follows.
  app.post('/signin/idp/link/passkey/options', { preHandler: app.csrfProtection }, async (request, reply) => {
    const pending = await pendingOf(request);
    const rp = relyingPartyOf(request);
    if (!pending) return refuseJson(request, reply, 400, 'link_expired', (t) => t.idp.linkExpired);
    if (!rp) return refuseJson(request, reply, 404, 'not_available', (t) => t.passkeys.notAvailable);
    try {
      return reply.header('cache-control', 'no-store').send(await startPasskeyAuthentication(passkeyCtx, rp, { sub: pending.sub, address: request.ip }));
    } catch (error) {
      if (error instanceof PasskeyError) return refusePasskeyJson(request, reply, error);
      throw error;
    }
  });

  app.post('/signin/idp/link/passkey', { preHandler: app.csrfProtection }, async (request, reply) => {
    const pending = await pendingOf(request);
    const rp = relyingPartyOf(request);
    if (!pending) return refuseJson(request, reply, 400, 'link_expired', (t) => t.idp.linkExpired);
    if (!rp) return refuseJson(request, reply, 404, 'not_available', (t) => t.passkeys.notAvailable);
    const body = request.body;
    const answer = typeof body === 'object' && body !== null ? (body as Record<string, unknown>)['response'] : undefined;
    let method: 'hwk' | 'swk';
    try {
      ({ amr: method } = await verifyPasskeyAssertion(passkeyCtx, rp, answer, { sub: pending.sub, requireUserVerification: true }));
    } catch (error) {
      if (!(error instanceof PasskeyError)) throw error;
      await recordAuditSafely(db, clock, { type: 'passkey.signin', sub: pending.sub, ip: request.ip, outcome: 'failure', detail: { provider: pending.provider, reason: error.code } }, request.log);
      return refusePasskeyJson(request, reply, error);
    }
    await recordAuditSafely(db, clock, { type: 'passkey.signin', sub: pending.sub, ip: request.ip, outcome: 'success', detail: { provider: pending.provider } }, request.log);
    const done = await completeLink(request, reply, pending, { amr: [method, 'mfa'], secondStep: false });
    if ('page' in done) return done.page(true);
    return reply.header('cache-control', 'no-store').send({ redirect: done.next });
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
