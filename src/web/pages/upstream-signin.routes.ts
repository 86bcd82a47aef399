// Signing in through an upstream identity provider (issue 33): "Sign in with NAME" leads to
// /signin/idp/SLUG, which sends the person to the upstream with state, PKCE S256 and nonce; the upstream
// sends them back to /signin/idp/SLUG/callback ({base_url}/signin/idp/SLUG/callback), whose checks are in
// accounts/upstream/. Then the sign-in goes on exactly as after a password (finish-signin.ts): the
// second step when due, the pending request's consent page. Every failure is a page in the person's
// language with a way on, and an audit event.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { beginPendingLink, linkIdentity, LinkError, resolveIdentity, type UpstreamIdentity } from '../../accounts/upstream/links.ts';
import { enabledProviderWithSecret, findProvider, redirectUriOf, type Provider } from '../../accounts/upstream/providers.ts';
import { beginUpstreamSignIn, isBrowserCookie, newBrowserCookie, takeUpstreamSignIn, type UpstreamSignIn } from '../../accounts/upstream/signin-states.ts';
import { UpstreamError, type UpstreamClient, type UpstreamFailure } from '../../accounts/upstream/upstream-client.ts';
import { countIdpSignIn } from '../../audit/audit-metrics.ts';
import { recordAuditSafely, type AuditEventInput } from '../../audit/audit.ts';
import { refuseFramedNavigation } from '../../oauth/framing.ts';
import { findPendingRequest, forBrowser, type FlowContext, type PendingRequest } from '../../oauth/authorization-requests.ts';
import { cookieOptions } from '../cookies.ts';
import type { Messages } from '../i18n/en.ts';
import { finishFirstStep, secondStepAfterFirst } from './finish-signin.ts';
import { field } from './forms.ts';
import { upstreamStartPath, type SecondStepPageContext } from './signin-flow.ts';
import { localPath, renderError, renderMessage } from './view.ts';

export type UpstreamPageContext = {
  flow: FlowContext;
  factors: SecondStepPageContext;
  /** keys.upstreamSecret: client secrets, states and pending links at rest */
  sealKey: Buffer;
  client: UpstreamClient;
  /** SIGNET_SIGNUP=open: a first sign-in with an unknown identity makes an account */
  signupOpen: boolean;
};

/** RFC 8176 has no value for "signed in at another provider": `fed` is one by agreement (OpenID Connect Core
 * lets parties agree on amr values), followed by the registered values the upstream reported. */
export function federatedAmr(upstreamAmr: readonly string[]): string[] {
  return ['fed', ...upstreamAmr.filter((m) => m !== 'fed')];
}

const BROWSER_COOKIE_MS = 24 * 60 * 60 * 1000;

const FAILURE_STATUS: Record<UpstreamFailure, number> = { unavailable: 504, access_denied: 403, refused: 502, invalid_id_token: 502, invalid_response: 502 };

function failureText(failure: UpstreamFailure, t: Messages, name: string): string {
  switch (failure) {
    case 'unavailable':
      return t.idp.unavailable(name);
    case 'access_denied':
      return t.idp.accessDenied(name);
    case 'invalid_id_token':
      return t.idp.invalidToken(name);
    default:
      return t.idp.refused(name);
  }
}

export { upstreamStartPath } from './signin-flow.ts';

export const upstreamSigninRoutes: FastifyPluginAsync<{ ctx: UpstreamPageContext }> = async (app, { ctx }) => {
  const { db, clock } = ctx.flow;
  const states = { db, clock, hashKey: ctx.flow.hashKey, sealKey: ctx.sealKey };
  app.addHook('onRequest', refuseFramedNavigation);

  function audit(request: FastifyRequest, event: Omit<AuditEventInput, 'ip'>): Promise<void> {
    return recordAuditSafely(db, clock, { ...event, ip: request.ip }, request.log);
  }

  function problem(request: FastifyRequest, reply: FastifyReply, status: number, message: (t: Messages) => string, retry?: string): Promise<FastifyReply> {
    return renderMessage(db, request, reply, (t) => ({ title: t.idp.problemTitle, message: message(t), link: retry ? { href: retry, text: t.idp.tryAgain } : { href: '/signin', text: t.idp.backToSignIn } }), { status, header: false });
  }

  async function failed(request: FastifyRequest, reply: FastifyReply, provider: Provider, reason: string, clientId: string | undefined, sub?: string): Promise<void> {
    countIdpSignIn(provider.slug, 'failed');
    await audit(request, { type: 'idp.signin.failed', outcome: 'failure', sub, clientId, detail: { provider: provider.slug, reason } });
  }

  /** To the upstream, with a fresh state, nonce and PKCE verifier. */
  async function sendUpstream(request: FastifyRequest, reply: FastifyReply, provider: Provider & { clientSecret: string }, flow: { pending: PendingRequest | undefined; requestId: string | undefined; returnTo: string | undefined; linkSub: string | undefined }) {
    let browser = request.cookies[request.server.cookieNames.idp];
    if (!isBrowserCookie(browser)) {
      browser = newBrowserCookie();
      reply.setCookie(request.server.cookieNames.idp, browser, cookieOptions(request, { maxAgeMs: BROWSER_COOKIE_MS }));
    }
    const origin = request.servedOrigin.origin;
    // spec: the request goes on "exactly as a password sign-in would" — prompt=login and max_age ask the upstream for a fresh sign-in too.
    const freshness = { login: flow.pending?.oidc?.prompt?.includes('login') ?? false, maxAge: flow.pending?.oidc?.maxAge };
    const signIn = await beginUpstreamSignIn(states, { provider: provider.slug, origin, browser, requestId: flow.pending ? flow.requestId : undefined, returnTo: flow.returnTo, linkSub: flow.linkSub, maxAge: freshness.maxAge });
    try {
      const url = await ctx.client.authorizationUrl(provider, { redirectUri: redirectUriOf(origin, provider.slug), state: signIn.state, nonce: signIn.nonce, codeVerifier: signIn.codeVerifier, freshness });
      return reply.header('cache-control', 'no-store').redirect(url.href, 303);
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      request.log.warn({ event: 'idp_unreachable', provider: provider.slug, reason: error.reason, detail: error.message }, 'upstream identity provider not reachable');
      await failed(request, reply, provider, error.reason, flow.pending?.clientId);
      return problem(request, reply, FAILURE_STATUS[error.failure], (t) => failureText(error.failure, t, provider.name), flow.linkSub ? '/account#providers-heading' : upstreamStartPath(provider.slug, signIn));
    }
  }

  // "Sign in with NAME" (a link: starting a sign-in changes nothing until the upstream answers).
  app.get<{ Params: { slug: string } }>('/signin/idp/:slug', async (request, reply) => {
    const provider = await enabledProviderWithSecret(db, ctx.sealKey, request.params.slug);
    if (!provider) return renderError(db, request, reply, 404, (t) => t.idp.unknownProvider);
    const requestId = field(request.query, 'request');
    const pending = requestId ? await findPendingRequest(forBrowser(ctx.flow, request.cookies[request.server.cookieNames.flow]), requestId, request.servedOrigin.origin) : undefined;
    if (requestId && !pending) return renderError(db, request, reply, 400, (t) => t.requestExpired);
    return sendUpstream(request, reply, provider, { pending, requestId, returnTo: localPath(field(request.query, 'return')), linkSub: undefined });
  });

  // /account → "Link NAME": a form (with its CSRF token), so no other site can start a link for the
  // signed-in person; the proof that the account is theirs is their session.
  app.post('/account/idp/link', { preHandler: app.csrfProtection }, async (request, reply) => {
    const session = await request.currentSession();
    if (!session) return reply.redirect('/signin?return=%2Faccount', 303);
    const provider = await enabledProviderWithSecret(db, ctx.sealKey, field(request.body, 'provider'));
    if (!provider) return renderError(db, request, reply, 404, (t) => t.idp.unknownProvider, { header: true });
    return sendUpstream(request, reply, provider, { pending: undefined, requestId: undefined, returnTo: undefined, linkSub: session.sub });
  });

  // The upstream's answer: {base_url}/signin/idp/SLUG/callback.
  app.get<{ Params: { slug: string } }>('/signin/idp/:slug/callback', async (request, reply) => {
    const provider = await enabledProviderWithSecret(db, ctx.sealKey, request.params.slug);
    if (!provider) {
      const known = await findProvider(db, request.params.slug);
      if (known) await failed(request, reply, known, 'provider_disabled', undefined);
      return renderError(db, request, reply, 404, (t) => t.idp.unknownProvider);
    }
    const origin = request.servedOrigin.origin;
    // spec: "a bad state or a replayed callback" — the state is taken out once, in the browser that started it.
    const signIn = await takeUpstreamSignIn(states, { origin, browser: request.cookies[request.server.cookieNames.idp], state: field(request.query, 'state'), provider: provider.slug });
    if (!signIn) {
      await failed(request, reply, provider, 'bad_state', undefined);
      return problem(request, reply, 400, (t) => t.idp.badState);
    }
    const clientId = signIn.requestId ? (await findPendingRequest(forBrowser(ctx.flow, request.cookies[request.server.cookieNames.flow]), signIn.requestId, origin))?.clientId : undefined;
    const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : '';
    let identity: UpstreamIdentity;
    try {
      identity = await ctx.client.identify(provider, { callbackUrl: new URL(redirectUriOf(origin, provider.slug) + query), state: signIn.state, nonce: signIn.nonce, codeVerifier: signIn.codeVerifier, maxAge: signIn.maxAge });
    } catch (error) {
      if (!(error instanceof UpstreamError)) throw error;
      request.log.info({ event: 'idp_signin_failed', provider: provider.slug, reason: error.reason, detail: error.message }, 'upstream sign-in refused');
      await failed(request, reply, provider, error.reason, clientId);
      return problem(request, reply, FAILURE_STATUS[error.failure], (t) => failureText(error.failure, t, provider.name), upstreamStartPath(provider.slug, signIn));
    }
    if (signIn.linkSub) return linkFromAccount(request, reply, provider, identity, signIn);
    const resolution = await resolveIdentity(db, clock, provider, identity, ctx.signupOpen);
    switch (resolution.outcome) {
      case 'signup_closed':
        await failed(request, reply, provider, 'signup_closed', clientId);
        return problem(request, reply, 403, (t) => t.idp.signupClosed(provider.name));
      case 'disabled':
        await failed(request, reply, provider, 'account_disabled', clientId, resolution.account.sub);
        return problem(request, reply, 403, (t) => t.idp.disabled);
      case 'confirm_link': {
        // spec: "nothing is linked automatically" — the owner of the existing account proves it first.
        await audit(request, { type: 'idp.signin.failed', outcome: 'refused', sub: resolution.account.sub, clientId, detail: { provider: provider.slug, reason: 'link_required' } });
        const link = await beginPendingLink(db, clock, states, origin, { provider: provider.slug, sub: resolution.account.sub, identity, requestId: signIn.requestId, returnTo: signIn.returnTo });
        reply.setCookie(request.server.cookieNames.idpLink, link.id, cookieOptions(request, { expiresAt: link.expiresAt }));
        return reply.redirect('/signin/idp/link', 303);
      }
      case 'signed_in': {
        const sub = resolution.account.sub;
        if (resolution.created) {
          await audit(request, { type: 'idp.created', outcome: 'success', sub, clientId, detail: { provider: provider.slug } });
          await audit(request, { type: 'idp.linked', outcome: 'success', sub, clientId, detail: { provider: provider.slug } });
        }
        countIdpSignIn(provider.slug, 'succeeded');
        await audit(request, { type: 'idp.signin.succeeded', outcome: 'success', sub, clientId, detail: { provider: provider.slug } });
        const due = await secondStepAfterFirst(ctx.factors, request, sub);
        const next = await finishFirstStep(ctx.factors, request, reply, { sub, due, amr: federatedAmr(identity.amr), requestId: signIn.requestId, returnTo: signIn.returnTo });
        request.log.info({ event: 'signed_in', provider: provider.slug, secondStep: due ?? null }, 'person signed in through an upstream identity provider');
        return reply.redirect(next, 303);
      }
    }
  });

  /** A signed-in person added this provider from /account: the session still has to be theirs. */
  async function linkFromAccount(request: FastifyRequest, reply: FastifyReply, provider: Provider, identity: UpstreamIdentity, signIn: UpstreamSignIn): Promise<FastifyReply> {
    const session = await request.currentSession();
    if (!session || session.sub !== signIn.linkSub) return problem(request, reply, 400, (t) => t.idp.badState);
    try {
      await linkIdentity(db, clock, provider, identity, session.sub);
    } catch (error) {
      if (!(error instanceof LinkError)) throw error;
      await audit(request, { type: 'idp.linked', outcome: 'failure', sub: session.sub, detail: { provider: provider.slug, reason: error.code } });
      return renderMessage(db, request, reply, (t) => ({ title: t.idp.problemTitle, message: error.code === 'linked_elsewhere' ? t.idp.linkedElsewhere(provider.name) : t.idp.alreadyLinked(provider.name), link: { href: '/account', text: t.backToAccount } }), { status: 409 });
    }
    await audit(request, { type: 'idp.linked', outcome: 'success', sub: session.sub, detail: { provider: provider.slug } });
    return reply.redirect(`/account?idp_linked=${encodeURIComponent(provider.slug)}#providers-heading`, 303);
  }
};
