// /unsubscribe: the one-click unsubscribe of notification e-mail (RFC 8058). The URL carries a signed
// token naming the person and the category; no session, no CSRF token (the mail provider that posts
// has neither, and the unguessable token is what a forged request would lack).
//   POST /unsubscribe?token=…  body List-Unsubscribe=One-Click → 200, that category's e-mail is off
//   GET  /unsubscribe?token=…  → a page with a button that posts; the GET itself changes nothing,
//                                because mail scanners and link previews follow links
// A token that is not genuine → 400 and nothing changes.
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import { readUnsubscribeToken, unsubscribe, type UnsubscribeContext } from './email/unsubscribe.ts';
import { confirmPage, donePage, invalidLinkPage } from './email/unsubscribe-page.ts';

type Options = {
  ctx: UnsubscribeContext;
  /** the page language of a request (passed in: this domain does not reach into web/) */
  localeOf: (request: FastifyRequest) => string;
};

function tokenOf(request: FastifyRequest): string | undefined {
  const query = request.query as Record<string, unknown> | undefined;
  const token = query?.token;
  return typeof token === 'string' && token !== '' ? token : undefined;
}

function html(reply: FastifyReply, status: number, body: string): FastifyReply {
  // The URL holds the token: nothing caches the page, and (security-headers) no Referer carries it on.
  return reply.code(status).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(body);
}

export const unsubscribeRoutes: FastifyPluginAsync<Options> = async (app, { ctx, localeOf }) => {
  // RFC 8058 §3.1: the provider posts multipart/form-data or application/x-www-form-urlencoded (the
  // latter is parsed app-wide). The body holds nothing we need beyond the URL, so multipart is read as
  // plain text and ignored, in this plugin's scope only.
  if (!app.hasContentTypeParser('multipart/form-data')) {
    app.addContentTypeParser('multipart/form-data', { parseAs: 'string' }, (_request, body, done) => done(null, body));
  }

  app.get('/unsubscribe', async (request, reply) => {
    const token = tokenOf(request);
    const claim = token === undefined ? undefined : await readUnsubscribeToken(ctx, token);
    if (!token || !claim) return html(reply, 400, invalidLinkPage(localeOf(request)));
    return html(reply, 200, confirmPage(localeOf(request), claim.category, token));
  });

  app.post('/unsubscribe', async (request, reply) => {
    const token = tokenOf(request);
    const claim = token === undefined ? undefined : await unsubscribe(ctx, token);
    if (!claim) {
      request.log.info({ event: 'unsubscribe_refused' }, 'unsubscribe with a token that is not genuine');
      return html(reply, 400, invalidLinkPage(localeOf(request)));
    }
    request.log.info({ event: 'email_unsubscribed', category: claim.category }, 'e-mail turned off by one-click unsubscribe');
    return html(reply, 200, donePage(localeOf(request), claim.category));
  });
};
