// The consent page: the application's name and each requested scope with the claims it releases;
// `openid` fixed, the others can be unticked. Allow or Deny.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { recordAuditSafely } from '../../audit/audit.ts';
import type { Client } from '../../clients/clients.ts';
import { hasSecondFactor, type SecondStepContext } from '../../accounts/factors/second-step.ts';
import { continueAuthorization, decide } from '../../consent/decision.ts';
import { refuseFramedNavigation } from '../../oauth/framing.ts';
import { findPendingRequest, forBrowser, signInRequired, type FlowContext, type PendingRequest } from '../../oauth/authorization-requests.ts';
import type { Session } from '../../accounts/sessions.ts';
import { CLAIMS_BY_SCOPE, formatScope, type Scope } from '../../oauth/scopes.ts';
import { redirectHost } from '../../oauth/registration/registration.ts';
import type { Messages } from '../i18n/en.ts';
import { allowFormRedirectTo } from '../plugins/security-headers.ts';
import { field, fields } from './forms.ts';
import { localeOf, renderError, renderPage } from './view.ts';

/** The consent page's rows: each requested scope with what it releases, `openid` fixed (also the /device page's, issue 43). */
export function consentScopeRows(t: Messages, scope: readonly Scope[]) {
  return scope.map((name) => ({
    name,
    label: t.scopeLabel[name],
    claims: name === 'documents' ? t.documentsAccess : CLAIMS_BY_SCOPE[name].length > 0 ? t.claimsReleased(CLAIMS_BY_SCOPE[name].join(', ')) : t.claimsNone,
    fixed: name === 'openid',
    checked: true,
  }));
}

export const consentRoutes: FastifyPluginAsync<{ ctx: FlowContext; factors: SecondStepContext }> = async (app, { ctx, factors }) => {
  const { db } = ctx;
  // spec: the flow "cannot run in a hidden frame" — refused before any page, session or code.
  app.addHook('onRequest', refuseFramedNavigation);

  function showConsent(request: FastifyRequest, reply: FastifyReply, requestId: string, pending: PendingRequest, client: Client, error?: (t: Messages) => string) {
    // Allow and Deny both end in a redirect to the application's callback.
    allowFormRedirectTo(reply, pending.redirectUri);
    const scopes = (t: Messages) => consentScopeRows(t, pending.scope);
    // issue 39: an application that registered itself is shown as such — its name as it calls itself,
    // where it will send the person, and that nobody vouched for it.
    // A Client ID Metadata Document client: also the host its document (its client_id) is served from.
    const selfRegistered = client.dynamic
      ? { redirectHost: redirectHost(pending.redirectUri), ...(client.registration?.metadata_document && URL.canParse(client.clientId) ? { metadataHost: new URL(client.clientId).host } : {}) }
      : undefined;
    return renderPage(
      db,
      request,
      reply,
      'consent',
      (t) => t.consentTitle,
      (t) => ({ requestId, appName: client.dynamic ? t.selfRegisteredName(client.name) : client.name, selfRegistered, scopes: scopes(t), error: error?.(t) }),
      { status: error ? 400 : 200, here: `/consent?request=${encodeURIComponent(requestId)}` },
    );
  }

  /**
   * SIGNET_MFA=required: "a person without a factor is led … to set one up before any consent or
   * callback". Sign-in does it after the password; a session from before the policy is sent to set-up here.
   */
  async function enrolmentFirst(sub: string, requestId: string): Promise<string | undefined> {
    if (factors.mfa !== 'required' || (await hasSecondFactor(factors, sub))) return undefined;
    return `/account/two-step/setup?return=${encodeURIComponent(`/consent?request=${encodeURIComponent(requestId)}`)}`;
  }

  /** issue 28: prompt=login, max_age or acr_values want a sign-in newer than this session's (OpenID Connect Core §3.1.2.1). */
  async function mustSignInAgain(request: FastifyRequest, requestId: string, session: Session): Promise<boolean> {
    const pending = await findPendingRequest(forBrowser(ctx, request.cookies[request.server.cookieNames.flow]), requestId, request.servedOrigin.origin);
    return pending !== undefined && signInRequired(pending.oidc, pending.createdAt, session, ctx.clock());
  }

  app.get('/consent', async (request, reply) => {
    const requestId = field(request.query, 'request');
    const session = await request.currentSession();
    if (!session || (await mustSignInAgain(request, requestId, session))) return reply.redirect(`/signin?request=${encodeURIComponent(requestId)}`, 302);
    const enrol = await enrolmentFirst(session.sub, requestId);
    if (enrol) return reply.redirect(enrol, 302);
    // The pending request is found only in the browser that started it (its binding cookie).
    const next = await continueAuthorization(forBrowser(ctx, request.cookies[request.server.cookieNames.flow]), requestId, request.servedOrigin.origin, session.sub, session);
    if (next.kind === 'expired') return renderError(db, request, reply, 400, (t) => t.requestExpired, { header: true });
    if (next.kind === 'redirect') return reply.redirect(next.url, 302);
    return showConsent(request, reply, requestId, next.pending, next.client);
  });

  app.post('/consent', { preHandler: app.csrfProtection }, async (request, reply) => {
    const requestId = field(request.body, 'request');
    const session = await request.currentSession();
    if (!session || (await mustSignInAgain(request, requestId, session))) return reply.redirect(`/signin?request=${encodeURIComponent(requestId)}`, 303);
    const enrol = await enrolmentFirst(session.sub, requestId);
    if (enrol) return reply.redirect(enrol, 303);
    const choice = field(request.body, 'decision') === 'allow' ? { decision: 'allow' as const, ticked: fields(request.body, 'scope') } : { decision: 'deny' as const };
    const result = await decide(forBrowser(ctx, request.cookies[request.server.cookieNames.flow]), requestId, request.servedOrigin.origin, session.sub, choice, localeOf(request), session);
    if (result.kind === 'expired') return renderError(db, request, reply, 400, (t) => t.requestExpired, { header: true });
    if (result.kind === 'nothing_granted' || result.kind === 'ask') return showConsent(request, reply, requestId, result.pending, result.client, (t) => t.nothingGranted);
    request.log.info({ event: choice.decision === 'allow' ? 'consent_given' : 'consent_declined' }, 'consent decided');
    if (result.kind === 'granted') {
      await recordAuditSafely(db, ctx.clock, { type: 'consent.granted', sub: session.sub, clientId: result.clientId, ip: request.ip, outcome: 'success', detail: { scope: formatScope(result.scope) } }, request.log);
    }
    return reply.redirect(result.url, 303);
  });
};
