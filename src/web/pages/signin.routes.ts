// The sign-in page (e-mail or phone plus password; its passkey button and autofill call
// passkeys.routes.ts) and signing out.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { relyingPartyFor } from '../../accounts/factors/passkeys.ts';
import { signIn, type SignInResult } from '../../accounts/signin.ts';
import { finishSecondStep } from '../../accounts/factors/second-step.ts';
import { finishFirstStep, secondStepAfterFirst } from './finish-signin.ts';
import { rotateCsrfSecret } from './signin-flow.ts';
import { recordAuditSafely, type AuditEventInput } from '../../audit/audit.ts';
import { findClient } from '../../clients/clients.ts';
import { SECOND } from '../../config/clock.ts';
import { refuseFramedNavigation } from '../../oauth/framing.ts';
import { findPendingRequest, forBrowser, signInRequired, type FlowContext, type PendingRequest } from '../../oauth/authorization-requests.ts';
import { listEnabledProviders } from '../../accounts/upstream/providers.ts';
import { setDeviceCookie, upstreamStartPath, waitText, type SecondStepPageContext } from './signin-flow.ts';
import { allowFormRedirectTo } from '../plugins/security-headers.ts';
import type { Messages } from '../i18n/en.ts';
import { field, fields } from './forms.ts';
import { localPath, renderError, renderPage } from './view.ts';
import { cookieOptions } from '../cookies.ts';

/**
 * `deviceKey`: keys.deviceCookie, which makes and checks the device cookies (a browser that signed in
 * to an account before is exempt from that account's sign-in ceiling; accounts/device-cookies.ts).
 */
export const signinRoutes: FastifyPluginAsync<{ ctx: FlowContext; deviceKey: Buffer; factors: SecondStepPageContext }> = async (app, { ctx, deviceKey, factors }) => {
  const { db } = ctx;
  // spec: the flow "cannot run in a hidden frame" — refused before any page, session or code.
  app.addHook('onRequest', refuseFramedNavigation);

  type Form = { requestId: string; pending: PendingRequest | undefined; returnTo: string | undefined; identifier: string };

  async function show(request: FastifyRequest, reply: FastifyReply, form: Form, extra: { status?: number; error?: (t: Messages) => string; notice?: (t: Messages) => string } = {}) {
    const client = form.pending ? await findClient(db, form.pending.clientId) : undefined;
    // issue 39: a self-registered application's name is its own claim, so it is quoted as such.
    const appName = client ? (client.dynamic ? `“${client.name}”` : client.name) : undefined;
    // issue 33: "Sign in with NAME" per enabled upstream identity provider, continuing this request.
    const upstream = await listEnabledProviders(db);
    // The form may end in a redirect to the application's callback (when a grant already covers the request).
    if (form.pending) allowFormRedirectTo(reply, form.pending.redirectUri);
    return renderPage(
      db,
      request,
      reply,
      'signin',
      (t) => t.signInTitle,
      (t) => ({
        requestId: form.pending ? form.requestId : '',
        returnTo: form.returnTo ?? '',
        identifier: form.identifier,
        appName,
        error: extra.error?.(t),
        notice: extra.notice?.(t),
        providers: upstream.map((p) => ({ href: upstreamStartPath(p.slug, { requestId: form.pending ? form.requestId : undefined, returnTo: form.returnTo }), text: t.idp.signInWith(p.name) })),
        // issue 19: "Sign in with a passkey" and passkey autofill, on hosts that can have passkeys.
        passkey: relyingPartyFor(request.servedOrigin, request.server.site.productName)
          ? JSON.stringify({ mode: 'signin', optionsUrl: '/signin/passkey/options', finishUrl: '/signin/passkey', request: form.pending ? form.requestId : '', return: form.returnTo ?? '', text: t.passkeys.script })
          : undefined,
      }),
      { status: extra.status ?? 200, header: false, here: signInPath(form) },
    );
  }

  /** This page's address, so the language switch returns to the same flow after a failed attempt. */
  function signInPath(form: Form): string {
    if (form.pending) return `/signin?request=${encodeURIComponent(form.requestId)}`;
    return form.returnTo ? `/signin?return=${encodeURIComponent(form.returnTo)}` : '/signin';
  }

  function nextAfterSignIn(form: Form): string {
    return form.pending ? `/consent?request=${encodeURIComponent(form.requestId)}` : (form.returnTo ?? '/account');
  }

  /** The pending request this page serves: found only in the browser that started it. */
  function pendingFor(request: FastifyRequest, requestId: string): Promise<PendingRequest | undefined> {
    return findPendingRequest(forBrowser(ctx, request.cookies[request.server.cookieNames.flow]), requestId, request.servedOrigin.origin);
  }

  /**
   * The attempt in the audit trail (and signet_signins_total): the account's sub when the identifier
   * names one — the trail is for operators; the answer above never tells whether the account exists.
   */
  function recordSignIn(request: FastifyRequest, form: Form, result: SignInResult): Promise<void> {
    const about = { sub: result.sub, clientId: form.pending?.clientId, ip: request.ip };
    const event: AuditEventInput =
      result.outcome === 'signed_in'
        ? { ...about, type: 'signin.succeeded', outcome: 'success' }
        : result.outcome === 'throttled'
          ? { ...about, type: 'signin.throttled', outcome: 'refused', detail: { retry_at: new Date(result.retryAt).toISOString() } }
          : result.locked
            ? { ...about, type: 'signin.locked', outcome: 'failure', detail: { retry_at: result.retryAt === undefined ? undefined : new Date(result.retryAt).toISOString() } }
            : { ...about, type: 'signin.failed', outcome: 'failure' };
    return recordAuditSafely(db, ctx.clock, event, request.log);
  }

  app.get('/signin', async (request, reply) => {
    const requestId = field(request.query, 'request');
    const pending = requestId ? await pendingFor(request, requestId) : undefined;
    if (requestId && !pending) return renderError(db, request, reply, 400, (t) => t.requestExpired);
    // issue 28: login_hint prefills the identifier (OpenID Connect Core §3.1.2.1).
    const form: Form = { requestId, pending, returnTo: localPath(field(request.query, 'return')), identifier: pending?.oidc?.loginHint?.slice(0, 320) ?? '' };
    const session = await request.currentSession();
    // A session goes on to consent — unless prompt=login, max_age or acr_values want a newer sign-in.
    if (session && !(pending && signInRequired(pending.oidc, pending.createdAt, session, ctx.clock()))) return reply.redirect(nextAfterSignIn(form), 302);
    const notice = fields(request.query, 'signed_out').length > 0 ? (t: Messages) => t.signedOut : field(request.query, 'second_step') === 'expired' ? (t: Messages) => t.twoStep.stepExpired : undefined;
    return show(request, reply, form, { notice });
  });

  app.post('/signin', { preHandler: app.csrfProtection }, async (request, reply) => {
    const requestId = field(request.body, 'request');
    const pending = requestId ? await pendingFor(request, requestId) : undefined;
    if (requestId && !pending) return renderError(db, request, reply, 400, (t) => t.requestExpired);
    const identifier = field(request.body, 'identifier').trim().slice(0, 320);
    const password = field(request.body, 'password');
    const form: Form = { requestId, pending, returnTo: localPath(field(request.body, 'return')), identifier };
    if (!identifier || !password) return show(request, reply, form, { status: 400, error: (t) => t.missingFields });

    const deviceCookie = request.cookies[request.server.cookieNames.device];
    const result = await signIn(db, ctx.hashKey, ctx.clock, { identifier, password, address: request.ip }, { key: deviceKey, cookie: deviceCookie });
    // A correct password with a second step due is not a sign-in yet: its event is recorded when the step is done.
    const due = result.outcome === 'signed_in' ? await secondStepAfterFirst(factors, request, result.sub) : undefined;
    if (due === undefined) await recordSignIn(request, form, result);
    if (result.outcome === 'throttled') {
      const wait = result.retryAt - ctx.clock();
      reply.header('retry-after', String(Math.ceil(wait / SECOND)));
      return show(request, reply, form, { status: 429, error: (t) => t.throttled(waitText(t, wait)) });
    }
    if (result.outcome === 'wrong_credentials') {
      const retryAt = result.retryAt;
      if (retryAt !== undefined) reply.header('retry-after', String(Math.ceil((retryAt - ctx.clock()) / SECOND)));
      return show(request, reply, form, {
        status: 401,
        error: (t) => (retryAt === undefined ? t.wrongCredentials : `${t.wrongCredentials} ${t.throttled(waitText(t, retryAt - ctx.clock()))}`),
      });
    }
    const next = await finishFirstStep(factors, request, reply, { sub: result.sub, due, requestId: form.pending ? form.requestId : undefined, returnTo: form.returnTo });
    if (result.deviceCookie !== undefined) setDeviceCookie(request, reply, result.deviceCookie);
    if (due === undefined) request.log.info({ event: 'signed_in' }, 'person signed in');
    return reply.redirect(next, 303);
  });

  // Sign-out is a form (POST with a CSRF token, so no link or image elsewhere can sign a person out);
  // someone who types /signout is sent to the page that has the button, or to sign-in.
  app.get('/signout', async (request, reply) => reply.redirect((await request.currentSession()) ? '/account' : '/signin', 303));

  app.post('/signout', { preHandler: app.csrfProtection }, async (request, reply) => {
    await reply.signOut();
    // A half-signed-in state ends with it ("Sign in again" on the second step).
    const stepId = request.cookies[request.server.cookieNames.secondStep];
    if (stepId) {
      await finishSecondStep(factors, stepId, request.servedOrigin.origin);
      reply.clearCookie(request.server.cookieNames.secondStep, cookieOptions(request));
    }
    rotateCsrfSecret(request, reply);
    return reply.redirect('/signin?signed_out=1', 303);
  });
};
