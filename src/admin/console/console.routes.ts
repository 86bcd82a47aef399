// The admin console (issue 27) on the admin listener, at /admin: an encapsulated context with cookies,
// form bodies and CSRF of its own (a secret derived for the console, its own cookie names), every
// answer framed by nothing (X-Frame-Options: DENY, CSP frame-ancestors 'none') and loading nothing
// from elsewhere (the public pages' CSP), errors as pages. The pages call operator-changes.ts, the
// functions the admin API and the CLI call.
import { createHmac } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import { AccountError, findAccount } from '../../accounts/accounts.ts';
import { isOperator } from '../../accounts/roles.ts';
import { ClientError } from '../../clients/clients.ts';
import { isLocale } from '../../web/i18n/i18n.ts';
import { field } from '../../web/pages/forms.ts';
import { securityHeaderValues } from '../../web/plugins/security-headers.ts';
import { webauthnBrowserFiles } from '../../web/webauthn-browser-files.ts';
import { consoleAdminKeyRoutes } from './admin-keys.routes.ts';
import { consoleApplicationRoutes } from './applications.routes.ts';
import { consoleAuditRoutes } from './audit.routes.ts';
import { consoleIdentityProviderRoutes } from './identity-providers.routes.ts';
import { CONSOLE_COOKIES, consolePath, consoleSessionOf, type ConsoleContext } from './console-auth.ts';
import { consoleMailRoutes } from './mail.routes.ts';
import { consoleOverviewRoutes } from './overview.routes.ts';
import { consolePasskeyRoutes } from './passkey-signin.routes.ts';
import { consolePeopleRoutes } from './people.routes.ts';
import { CONSOLE_LANGUAGE_COOKIE, consoleLocale, consoleMessages, renderConsole } from './render.ts';
import { consoleImportRoutes } from './import.routes.ts';
import { consoleSigninRoutes } from './signin.routes.ts';
import { consoleTaskRoutes } from './tasks.routes.ts';

const STATIC = {
  'signet.css': { file: new URL('../../web/static/signet.css', import.meta.url), type: 'text/css; charset=utf-8' },
  'console.css': { file: new URL('./static/console.css', import.meta.url), type: 'text/css; charset=utf-8' },
  'console.js': { file: new URL('./static/console.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  'import.js': { file: new URL('./static/import.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
  'console-passkeys.js': { file: new URL('./static/console-passkeys.js', import.meta.url), type: 'text/javascript; charset=utf-8' },
} as const;

/** The console's cookie-signing and CSRF secret: derived from the site's cookie key for this purpose alone. */
export function consoleCookieSecret(cookieKey: Buffer): string {
  return createHmac('sha256', cookieKey).update('signet admin console cookies').digest('base64url');
}

export async function consoleRoutes(app: FastifyInstance, { ctx, cookieKey }: { ctx: ConsoleContext; cookieKey: Buffer }): Promise<void> {
  // Pages, not API: none of them is part of the admin API's OpenAPI document.
  app.addHook('onRoute', (route) => {
    route.schema = { ...route.schema, hide: true };
  });
  await app.register(cookie, { secret: consoleCookieSecret(cookieKey) });
  await app.register(formbody, { bodyLimit: 64 * 1024 });
  const { default: csrfProtection } = await import('@fastify/csrf-protection');
  await app.register(csrfProtection, { cookieKey: CONSOLE_COOKIES.csrf, cookieOpts: { path: '/admin', sameSite: 'strict', httpOnly: true, signed: true } });

  // spec: framing refused, CSP as today (no external scripts, fonts or styles).
  app.addHook('onSend', (_request, reply, payload, done) => {
    reply.headers(securityHeaderValues());
    done(null, payload);
  });

  app.setErrorHandler((error: FastifyError | Error, request, reply) => {
    const c = consoleMessages(consoleLocale(request));
    const status = 'statusCode' in error && typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    const known = error instanceof AccountError || error instanceof ClientError;
    if (status === 500 && !known) request.log.error({ err: error }, 'admin console error');
    else request.log.info({ consoleRefused: 'code' in error ? error.code : status }, 'console request refused');
    // A missing or wrong CSRF token is 403; a domain error says what was wrong in its own words.
    const message = known ? `${c.errors.failed} ${error.message}` : status === 500 ? 'The server could not complete the request. Try again later; the log has the details.' : error.message;
    return renderConsole(request, reply, 'message', { status: known ? (error.code === 'not_found' ? 404 : 400) : status, title: () => c.errors.failed, data: () => ({ message, failed: true }) }, ctx.productName);
  });

  const files = Object.fromEntries(Object.entries(STATIC).map(([name, { file, type }]) => [name, { body: readFileSync(file), type }]));
  app.get<{ Params: { name: string } }>('/admin/static/:name', async (request, reply) => {
    const found = files[request.params.name];
    // A console path answers as a console page, a missing file too.
    if (!found) return notFoundPage(request, reply);
    return reply.header('cache-control', 'public, max-age=3600').type(found.type).send(found.body);
  });

  app.post('/admin/language', { preHandler: app.csrfProtection }, async (request, reply) => {
    const lang = field(request.body, 'lang');
    if (isLocale(lang)) reply.setCookie(CONSOLE_LANGUAGE_COOKIE, lang, { path: '/admin', httpOnly: true, sameSite: 'strict', secure: request.protocol === 'https', maxAge: 365 * 24 * 3600 });
    return reply.redirect(consolePath(field(request.body, 'return')) ?? '/admin', 303);
  });

  /**
   * issue 36: an unknown console address answers a console page (404) — with the navigation when an
   * operator is signed in — not the admin API's JSON. The API's own addresses (/admin/v1/…) keep its
   * JSON 404: a more specific route than this one never reaches here, and an unknown one is sent on.
   */
  async function notFoundPage(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    const session = await consoleSessionOf(ctx, request);
    const account = session && (await isOperator(ctx.db, session.sub)) ? await findAccount(ctx.db, session.sub) : undefined;
    const operator = account ? (account.email ?? account.phone_number ?? account.sub) : undefined;
    return renderConsole(request, reply, 'not-found', { status: 404, title: (c) => c.notFoundTitle, operator, nav: operator ? 'none' : undefined }, ctx.productName);
  }
  // Pages are navigations (GET, HEAD): another method at an unknown address gets the listener's JSON 404,
  // and its body is never read here.
  app.route({
    method: ['GET', 'HEAD'],
    url: '/admin/*',
    handler: async (request, reply) => {
      const path = request.url.split('?', 1)[0] ?? '';
      if (path === '/admin/v1' || path.startsWith('/admin/v1/')) return reply.callNotFound();
      if (path === '/admin/') return reply.redirect('/admin', 301);
      return notFoundPage(request, reply);
    },
  });

  // @simplewebauthn/browser's ES modules for console-passkeys.js, from this listener (CSP script-src 'self').
  const { default: fastifyStatic } = await import('@fastify/static');
  await app.register(fastifyStatic, webauthnBrowserFiles('/admin/static/vendor/simplewebauthn/'));

  await app.register(consoleSigninRoutes, { ctx });
  await app.register(consolePasskeyRoutes, { ctx });
  await app.register(consoleOverviewRoutes, { ctx });
  await app.register(consolePeopleRoutes, { ctx });
  await app.register(consoleApplicationRoutes, { ctx });
  await app.register(consoleAuditRoutes, { ctx });
  await app.register(consoleTaskRoutes, { ctx });
  await app.register(consoleMailRoutes, { ctx });
  await app.register(consoleAdminKeyRoutes, { ctx });
  await app.register(consoleImportRoutes, { ctx });
  await app.register(consoleIdentityProviderRoutes, { ctx });
}
