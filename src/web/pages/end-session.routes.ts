// RP-Initiated Logout 1.0 (issue 28): GET (or POST) /oauth/end-session ends the Signet session and
// returns to the application — at once when a valid id_token_hint names this session, otherwise after
// the person confirms on a page of ours (a link from anywhere must not sign people out). The rules are
// in oauth/oidc/end-session.ts; this file parses, calls them and renders.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { recordAuditSafely } from '../../audit/audit.ts';
import { EndSessionError, planEndSession, type EndSessionParams, type EndSessionPlan } from '../../oauth/oidc/end-session.ts';
import type { FlowContext } from '../../oauth/authorization-requests.ts';
import { allowFormRedirectTo } from '../plugins/security-headers.ts';
import { rotateCsrfSecret } from './signin-flow.ts';
import { field } from './forms.ts';
import { renderError, renderPage } from './view.ts';

function paramsOf(source: unknown): EndSessionParams {
  return {
    idTokenHint: field(source, 'id_token_hint'),
    clientId: field(source, 'client_id'),
    postLogoutRedirectUri: field(source, 'post_logout_redirect_uri'),
    state: field(source, 'state'),
  };
}

export const endSessionRoutes: FastifyPluginAsync<{ ctx: FlowContext }> = async (app, { ctx }) => {
  const { db } = ctx;

  async function plan(request: FastifyRequest, reply: FastifyReply, params: EndSessionParams): Promise<EndSessionPlan | undefined> {
    const session = await request.currentSession();
    try {
      return await planEndSession(db, request.servedOrigin.origin, params, session);
    } catch (error) {
      if (!(error instanceof EndSessionError)) throw error;
      request.log.info({ event: 'end_session_refused', reason: error.message }, 'end-session request refused');
      await renderError(db, request, reply, 400, (t) => t.endSession.invalid);
      return undefined;
    }
  }

  /** Ends the session (audited) and goes back to the application, or to our "signed out" page. */
  async function signOutAndReturn(request: FastifyRequest, reply: FastifyReply, planned: EndSessionPlan): Promise<FastifyReply> {
    const session = await request.currentSession();
    if (session) {
      await reply.signOut();
      rotateCsrfSecret(request, reply);
      await recordAuditSafely(db, ctx.clock, { type: 'logout.succeeded', sub: session.sub, clientId: planned.client?.clientId, ip: request.ip, outcome: 'success' }, request.log);
    }
    reply.header('cache-control', 'no-store');
    return reply.redirect(planned.returnTo ?? '/signin?signed_out=1', 303);
  }

  async function endSession(request: FastifyRequest, reply: FastifyReply, params: EndSessionParams) {
    const planned = await plan(request, reply, params);
    if (!planned) return reply;
    const session = await request.currentSession();
    // Nobody is signed in here: nothing to end, straight back.
    if (!session || planned.confirmed) return signOutAndReturn(request, reply, planned);
    // §2: the hint is missing, stale or names someone else — the person decides.
    if (planned.returnTo) allowFormRedirectTo(reply, planned.returnTo);
    return renderPage(db, request, reply, 'end-session', (t) => t.endSession.title, {
      appName: planned.client?.name,
      clientId: planned.client?.clientId ?? '',
      postLogoutRedirectUri: params.postLogoutRedirectUri,
      state: params.state,
    });
  }

  app.get('/oauth/end-session', async (request, reply) => endSession(request, reply, paramsOf(request.query)));
  // §2: "OPs MUST support the use of the HTTP GET and POST methods". A cross-site POST carries no
  // SameSite=Lax session cookie, so it is answered with the same request as a GET navigation, which does.
  app.post('/oauth/end-session', async (request, reply) => {
    const params = paramsOf(request.body);
    const query = new URLSearchParams(
      Object.entries({ id_token_hint: params.idTokenHint, client_id: params.clientId, post_logout_redirect_uri: params.postLogoutRedirectUri, state: params.state }).filter(([, v]) => v !== ''),
    );
    return reply.header('cache-control', 'no-store').redirect(`/oauth/end-session?${query.toString()}`, 303);
  });

  app.post('/oauth/end-session/confirm', { preHandler: app.csrfProtection }, async (request, reply) => {
    const planned = await plan(request, reply, { ...paramsOf(request.body), idTokenHint: '' });
    if (!planned) return reply;
    return signOutAndReturn(request, reply, planned);
  });
};
