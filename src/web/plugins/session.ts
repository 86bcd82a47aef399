// Sessions and CSRF for the server-rendered pages. The session cookie is HttpOnly, SameSite=Lax,
// Path=/, Secure on https, and has no Domain attribute, so each served host keeps its own.
// Cookie names are the deployment's (cookies.ts: `__Host-` prefixed when every host is https).
// CSRF: @fastify/csrf-protection with its secret in a signed cookie (stateless across processes);
// every form carries the token in a hidden `_csrf` field.
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { endSession, findSession, startSession, type Session, type SignInMethods } from '../../accounts/sessions.ts';
import type { Clock } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';

export const SESSION_COOKIE = 'signet_session';
export const CSRF_COOKIE = 'signet_csrf';

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in session on this host, looked up once per request (only when asked for). */
    currentSession(): Promise<Session | undefined>;
    /**
     * The signed-in person calling a first-party API (`/api/v1/…`). Throws 401 without a session — an
     * OAuth access token is refused, since userinfo is the only endpoint one can call — and, for a
     * state-changing call, 403 unless `Origin` is exactly the serving host's origin.
     */
    apiAccount(options?: { stateChanging?: boolean }): Promise<Session>;
  }
  interface FastifyReply {
    /** Starts a new session (a new id, the old one ended) and sets its cookie. */
    signIn(sub: string, amr?: SignInMethods): Promise<void>;
    /** Ends the session and clears its cookie. */
    signOut(): Promise<void>;
    /** A CSRF token for a form on this page (sets the secret cookie when needed). */
    csrfToken(): string;
  }
}

function isHttps(request: FastifyRequest): boolean {
  return request.servedOrigin.protocol === 'https:';
}

export const sessions = fp<{ db: Db; tokenHashKey: Buffer; clock: Clock }>(
  async (app, { db, tokenHashKey, clock }) => {
    // Loaded here, not at module load: CLI commands import the app's modules but never serve pages.
    const { default: csrfProtection } = await import('@fastify/csrf-protection');
    await app.register(csrfProtection, {
      cookieKey: app.cookieNames.csrf,
      cookieOpts: { path: '/', sameSite: 'lax', httpOnly: true, signed: true },
    });

    const lookups = new WeakMap<FastifyRequest, Promise<Session | undefined>>();
    app.decorateRequest('currentSession', function (this: FastifyRequest) {
      let lookup = lookups.get(this);
      if (!lookup) {
        const id = this.cookies[app.cookieNames.session];
        lookup = id ? findSession(db, tokenHashKey, clock, id, this.servedOrigin.origin) : Promise.resolve(undefined);
        lookups.set(this, lookup);
      }
      return lookup;
    });

    app.decorateRequest('apiAccount', async function (this: FastifyRequest, options: { stateChanging?: boolean } = {}) {
      const session = await this.currentSession();
      if (!session) {
        const bearer = /^Bearer /.test(this.headers.authorization ?? '');
        throw httpError(
          401,
          bearer
            ? 'This API does not take OAuth access tokens (they work at /oauth/userinfo, /mcp and the document APIs). Sign in to Signet in the browser to use it.'
            : 'Sign in first: this API uses the Signet session cookie.',
        );
      }
      // Cross-site request forgery: a state change must come from a page of this very host.
      if (options.stateChanging && this.headers.origin !== this.servedOrigin.origin) {
        throw httpError(403, `This request must come from a page of ${this.servedOrigin.origin} (its Origin header did not match).`);
      }
      return session;
    });

    app.decorateReply('signIn', async function (this: FastifyReply, sub: string, amr?: SignInMethods) {
      const request = this.request;
      const client = { userAgent: request.headers['user-agent'], ip: request.ip }; // shown in the person's list of sessions
      const { id, session } = await startSession(db, tokenHashKey, clock, { sub, origin: request.servedOrigin.origin, previousId: request.cookies[app.cookieNames.session], client, amr });
      this.setCookie(app.cookieNames.session, id, { path: '/', httpOnly: true, sameSite: 'lax', secure: isHttps(request), expires: new Date(session.expiresAt) });
      lookups.set(request, Promise.resolve(session));
    });

    app.decorateReply('signOut', async function (this: FastifyReply) {
      const request = this.request;
      const id = request.cookies[app.cookieNames.session];
      if (id) await endSession(db, tokenHashKey, id, request.servedOrigin.origin);
      this.clearCookie(app.cookieNames.session, { path: '/', httpOnly: true, sameSite: 'lax', secure: isHttps(request) });
      lookups.set(request, Promise.resolve(undefined));
    });

    app.decorateReply('csrfToken', function (this: FastifyReply) {
      return this.generateCsrf({ path: '/', sameSite: 'lax', httpOnly: true, signed: true, secure: isHttps(this.request) });
    });
  },
  { name: 'signet-sessions', dependencies: ['@fastify/cookie', 'signet-hosts'], decorators: { fastify: ['cookieNames'] } },
);

function httpError(statusCode: number, message: string): Error & { statusCode: number } {
  return Object.assign(new Error(message), { statusCode });
}
