// The /device page (RFC 8628 §3.3; issue 43): a person types the code their device shows (field
// **Code**, button **Continue**), signs in — the usual sign-in and second step, returning here — and
// chooses **Allow** or **Deny** on the consent page; then "You can return to your device". HTTP in and
// out only: the rules (code entry limits, the decision) are in oauth/device/device-authorizations.ts,
// which this page reaches through the device authorization record alone, as the consent page reaches
// a pending authorization request.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { hasSecondFactor, type SecondStepContext } from '../../accounts/factors/second-step.ts';
import { recordAuditSafely } from '../../audit/audit.ts';
import { findClient } from '../../clients/clients.ts';
import { recordConsent } from '../../consent/grants.ts';
import { decideDevice, DEVICE_CODE_LIFETIME_MS, enterUserCode, findPendingDevice, type PendingDevice } from '../../oauth/device/device-authorizations.ts';
import { isBrowserBinding, newBrowserBinding, type FlowContext } from '../../oauth/authorization-requests.ts';
import { refuseFramedNavigation } from '../../oauth/framing.ts';
import { formatScope, type Scope } from '../../oauth/scopes.ts';
import { consentScopeRows } from './consent.routes.ts';
import { grantedScope } from '../../consent/decision.ts';
import type { Messages } from '../i18n/en.ts';
import { field, fields } from './forms.ts';
import { waitText } from './signin-flow.ts';
import { localeOf, renderMessage, renderPage } from './view.ts';

const CONFIRM_PATH = '/device/confirm';

export const deviceRoutes: FastifyPluginAsync<{ ctx: FlowContext; factors: SecondStepContext }> = async (app, { ctx, factors }) => {
  const { db } = ctx;
  app.addHook('onRequest', refuseFramedNavigation);
  const deviceCtx = () => ({ db, hashKey: ctx.hashKey, now: ctx.clock(), clock: ctx.clock });

  /** This browser's binding (the pending authorization request's cookie): kept if it has one, else a new one. */
  function browserBinding(request: FastifyRequest, reply: FastifyReply): string {
    const existing = request.cookies[request.server.cookieNames.flow];
    const binding = isBrowserBinding(existing) ? existing : newBrowserBinding();
    reply.setCookie(request.server.cookieNames.flow, binding, { path: '/', httpOnly: true, sameSite: 'lax', secure: request.servedOrigin.protocol === 'https:', maxAge: DEVICE_CODE_LIFETIME_MS / 1000 });
    return binding;
  }

  function showCodeForm(request: FastifyRequest, reply: FastifyReply, userCode: string, extra: { status?: number; error?: (t: Messages) => string } = {}) {
    // The language switch comes back with the code still filled in (never the code of a failed entry).
    const here = userCode && !extra.error ? `/device?user_code=${encodeURIComponent(userCode)}` : '/device';
    return renderPage(db, request, reply, 'device', (t) => t.device.title, (t) => ({ userCode, error: extra.error?.(t) }), { status: extra.status ?? 200, here });
  }

  function expired(request: FastifyRequest, reply: FastifyReply) {
    return renderMessage(db, request, reply, (t) => ({ title: t.device.title, message: t.device.expired, link: { href: '/device', text: t.device.again } }), { status: 400 });
  }

  const confirmPath = (id: string) => `${CONFIRM_PATH}?request=${encodeURIComponent(id)}`;

  // RFC 8628 §3.3.1: verification_uri_complete carries the code, so the field comes filled in; the
  // person still presses Continue (a link alone must never connect a device).
  app.get('/device', async (request, reply) => {
    browserBinding(request, reply);
    return showCodeForm(request, reply, field(request.query, 'user_code').slice(0, 40));
  });

  app.post('/device', { preHandler: app.csrfProtection }, async (request, reply) => {
    const typed = field(request.body, 'user_code').slice(0, 40);
    const binding = browserBinding(request, reply);
    const entry = await enterUserCode(deviceCtx(), typed, { address: request.ip, browserBinding: binding });
    if (entry.kind === 'throttled') {
      if (entry.firstRefusal) await recordAuditSafely(db, ctx.clock, { type: 'device.code_throttled', ip: request.ip, outcome: 'refused', detail: { retry_at: new Date(entry.retryAt).toISOString() } }, request.log);
      const wait = entry.retryAt - ctx.clock();
      reply.header('retry-after', String(Math.max(1, Math.ceil(wait / 1000))));
      return showCodeForm(request, reply, typed, { status: 429, error: (t) => t.device.throttled(waitText(t, wait)) });
    }
    if (entry.kind === 'wrong') return showCodeForm(request, reply, typed, { status: 400, error: (t) => t.device.wrongCode });
    return reply.redirect(confirmPath(entry.confirmationId), 303);
  });

  /** SIGNET_MFA=required: a person without a factor sets one up first, as before any consent. */
  async function enrolmentFirst(sub: string, id: string): Promise<string | undefined> {
    if (factors.mfa !== 'required' || (await hasSecondFactor(factors, sub))) return undefined;
    return `/account/two-step/setup?return=${encodeURIComponent(confirmPath(id))}`;
  }

  async function showConsent(request: FastifyRequest, reply: FastifyReply, id: string, pending: PendingDevice, status = 200, error?: (t: Messages) => string) {
    const client = await findClient(db, pending.clientId);
    const scopes = (t: Messages) => consentScopeRows(t, pending.scope);
    return renderPage(
      db,
      request,
      reply,
      'consent',
      (t) => t.consentTitle,
      (t) => ({ requestId: id, appName: client?.name ?? pending.clientId, scopes: scopes(t), error: error?.(t), action: CONFIRM_PATH, intro: t.device.consentIntro }),
      { status, here: confirmPath(id) },
    );
  }

  /** The device authorization this browser entered the code for; undefined when gone (expired, decided, another browser). */
  function pendingOf(request: FastifyRequest, id: string): Promise<PendingDevice | undefined> {
    const cookie = request.cookies[request.server.cookieNames.flow];
    return findPendingDevice(deviceCtx(), id, isBrowserBinding(cookie) ? cookie : undefined);
  }

  app.get(CONFIRM_PATH, async (request, reply) => {
    const id = field(request.query, 'request');
    const pending = await pendingOf(request, id);
    if (!pending) return expired(request, reply);
    // Not signed in: the usual sign-in (and second step), which comes back here.
    const session = await request.currentSession();
    if (!session) return reply.redirect(`/signin?return=${encodeURIComponent(confirmPath(id))}`, 302);
    const enrol = await enrolmentFirst(session.sub, id);
    if (enrol) return reply.redirect(enrol, 302);
    return showConsent(request, reply, id, pending);
  });

  app.post(CONFIRM_PATH, { preHandler: app.csrfProtection }, async (request, reply) => {
    const id = field(request.body, 'request');
    const pending = await pendingOf(request, id);
    if (!pending) return expired(request, reply);
    const session = await request.currentSession();
    if (!session) return reply.redirect(`/signin?return=${encodeURIComponent(confirmPath(id))}`, 303);
    const enrol = await enrolmentFirst(session.sub, id);
    if (enrol) return reply.redirect(enrol, 303);
    const cookie = request.cookies[request.server.cookieNames.flow];
    const binding = isBrowserBinding(cookie) ? cookie : undefined;
    const allow = field(request.body, 'decision') === 'allow';
    let scope: Scope[] = [];
    if (allow) {
      scope = grantedScope(pending.scope, fields(request.body, 'scope'));
      if (scope.length === 0) return showConsent(request, reply, id, pending, 400, (t) => t.nothingGranted);
    }
    const decided = await decideDevice(deviceCtx(), id, binding, session.sub, allow ? { allow: true, scope } : { allow: false });
    if (!decided) return expired(request, reply);
    const about = { sub: session.sub, clientId: pending.clientId, ip: request.ip };
    if (allow) {
      // The person's grant, as the consent page records one: listed on /account, withdrawn there (which revokes the device's tokens).
      await recordConsent(db, ctx.clock, session.sub, pending.clientId, pending.scope, scope, { dialect: ctx.dialect, locale: localeOf(request) });
      await recordAuditSafely(db, ctx.clock, { ...about, type: 'device.approved', outcome: 'success', detail: { scope: formatScope(scope) } }, request.log);
    } else {
      await recordAuditSafely(db, ctx.clock, { ...about, type: 'device.denied', outcome: 'success' }, request.log);
    }
    return renderMessage(db, request, reply, (t) => ({
      title: allow ? t.device.approvedTitle : t.device.deniedTitle,
      message: allow ? t.device.approved : t.device.denied,
      link: { href: '/account', text: t.account },
    }));
  });
};
