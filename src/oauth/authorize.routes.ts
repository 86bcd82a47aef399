// GET /oauth/authorize: validate in the spec's order (failures are JSON here, via the app's error
// handler), then either answer prompt=none at once or save the pending request and send the browser
// to our sign-in and consent page with `302`.
import type { FastifyPluginAsync } from 'fastify';
import { findClient } from '../clients/clients.ts';
import { grantCoversRequest } from '../consent/grants.ts';
import { clientFromMetadataDocument, isMetadataDocumentClientId } from './registration/client-id-metadata.ts';
import { localeFromUiLocales } from '../web/i18n/i18n.ts';
import { validateAuthorizeRequest, type AuthorizeQuery } from './authorize.ts';
import { OAuthError } from './errors.ts';
import { readIdTokenHint } from './oidc/id-token.ts';
import { FRAMED_DESCRIPTION, isFramedNavigation } from './framing.ts';
import {
  answerWithoutInterface,
  BROWSER_BINDING_COOKIE,
  createPendingRequest,
  forBrowser,
  isBrowserBinding,
  newBrowserBinding,
  PENDING_REQUEST_LIFETIME_MS,
  type FlowContext,
} from './authorization-requests.ts';

/** `mustEnrol`: whether a signed-in person must set up a second factor before any callback (SIGNET_MFA=required). */
export const authorizeRoutes: FastifyPluginAsync<{ ctx: FlowContext; mustEnrol?: (sub: string) => Promise<boolean> }> = async (app, { ctx, mustEnrol }) => {
  app.get('/oauth/authorize', async (request, reply) => {
    // Before anything is looked up, stored or minted.
    if (isFramedNavigation(request.headers)) throw new OAuthError('access_denied', FRAMED_DESCRIPTION, { detail: `Sec-Fetch-Dest: ${request.headers['sec-fetch-dest']}` });
    const query: AuthorizeQuery = typeof request.query === 'object' && request.query !== null ? (request.query as AuthorizeQuery) : {};
    // issue 39: a client_id that is an https URL names a Client ID Metadata Document, fetched (guarded) and kept as a self-registered application
    const metadata = ctx.clientIdMetadata;
    const lookUpClient = (clientId: string) =>
      metadata && isMetadataDocumentClientId(clientId) ? clientFromMetadataDocument(metadata, clientId, { ip: request.ip, log: request.log }) : findClient(ctx.db, clientId);
    const authorization = await validateAuthorizeRequest(ctx.db, query, ctx.compat, request.servedOrigin.origin, lookUpClient);
    reply.header('cache-control', 'no-store');
    if (authorization.methodReadAsPlain !== null) {
      request.log.warn(
        { event: 'code_challenge_method_read_as_plain', clientId: authorization.client.clientId, codeChallengeMethod: authorization.methodReadAsPlain },
        'spec: only the exact string S256 selects SHA-256; this application sent another code_challenge_method, read as plain, so its token requests will fail with "code_verifier 验证失败"; tell its developers to send S256',
      );
    }

    if (authorization.prompt === 'none') {
      const session = await request.currentSession();
      const sub = session?.sub;
      const hint = authorization.oidc?.idTokenHint;
      const { url, failure } = await answerWithoutInterface(ctx, authorization, {
        sub,
        grantCovers: () => grantCoversRequest(ctx.db, sub ?? '', authorization.client.clientId, authorization.scope),
        ...(mustEnrol && sub !== undefined ? { mustEnrol: () => mustEnrol(sub) } : {}),
        signIn: session,
        // OpenID Connect Core §3.1.2.1: id_token_hint — "If the End-User identified by the ID Token is
        // not logged in or is not the one logged in, … return an error, such as login_required."
        ...(hint === undefined ? {} : { hintMatches: async () => (await readIdTokenHint(ctx.db, hint, request.servedOrigin.origin))?.sub === sub }),
      }, request.servedOrigin.origin);
      if (failure !== undefined) request.log.warn({ err: failure }, 'prompt=none: the grant check failed');
      return reply.redirect(url, 302);
    }

    const origin = request.servedOrigin.origin;
    // The pending request belongs to this browser: the binding cookie it already has (other tabs' flows
    // keep working), else a new one; refreshed so it outlives every request it binds.
    const existing = request.cookies[request.server.cookieNames.flow];
    const binding = isBrowserBinding(existing) ? existing : newBrowserBinding();
    reply.setCookie(request.server.cookieNames.flow, binding, {
      path: '/',
      httpOnly: true,
      sameSite: 'lax',
      secure: request.servedOrigin.protocol === 'https:',
      maxAge: PENDING_REQUEST_LIFETIME_MS / 1000,
    });
    // Core §3.1.2.1 ui_locales: the sign-in and consent pages of this request in the language asked for,
    // when Signet has it (the person's own choice on the language switch still wins); a request that
    // asks for none leaves the browser's own preference.
    const uiLocale = localeFromUiLocales(authorization.oidc?.uiLocales);
    if (uiLocale) reply.setCookie(request.server.cookieNames.uiLocale, uiLocale, { path: '/', httpOnly: true, sameSite: 'lax', secure: request.servedOrigin.protocol === 'https:', maxAge: PENDING_REQUEST_LIFETIME_MS / 1000 });
    else if (request.cookies[request.server.cookieNames.uiLocale] !== undefined) reply.clearCookie(request.server.cookieNames.uiLocale, { path: '/', httpOnly: true, sameSite: 'lax', secure: request.servedOrigin.protocol === 'https:' });
    const id = await createPendingRequest(forBrowser(ctx, binding), authorization, origin, request.ip);
    // spec: "Success: `302` to the sign-in and consent page. No code exists yet at that point."
    return reply.redirect(`${origin}/signin?request=${id}`, 302);
  });
};
