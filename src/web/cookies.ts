// The names of Signet's cookies. When every host Signet serves is https, each name carries the
// `__Host-` prefix: a browser then accepts the cookie only if it is Secure, has Path=/ and no Domain,
// so neither a sibling subdomain nor a plain-http page on the same host can plant or overwrite it
// (RFC 6265bis §4.1.3.2). On plain http (development) the prefix would make browsers drop the
// cookies, so the names stay bare. Every cookie Signet sets is already Secure on https, Path=/ and
// host-only.
import type { CookieSerializeOptions } from '@fastify/cookie';
import type { FastifyRequest } from 'fastify';
import type { Settings } from '../config/settings.ts';
import { servedOrigins } from '../config/settings.ts';
import { DEVICE_COOKIE } from '../accounts/device-cookies.ts';
import { REMEMBERED_BROWSER_COOKIE } from '../accounts/factors/remembered-browser.ts';
import { SECOND_STEP_COOKIE } from '../accounts/factors/second-step.ts';
import { BROWSER_BINDING_COOKIE } from '../oauth/authorization-requests.ts';
import { UPSTREAM_BROWSER_COOKIE } from '../accounts/upstream/signin-states.ts';
import { UPSTREAM_LINK_COOKIE } from '../accounts/upstream/links.ts';
import { LANGUAGE_COOKIE, UI_LOCALE_COOKIE } from './i18n/i18n.ts';
import { CSRF_COOKIE, SESSION_COOKIE } from './plugins/session.ts';

export type CookieNames = {
  /** the signed-in session (plugins/session.ts) */
  session: string;
  /** the CSRF secret (@fastify/csrf-protection) */
  csrf: string;
  /** the browser binding of pending authorization requests (oauth/authorize.routes.ts) */
  flow: string;
  /** the language switch's choice */
  language: string;
  /** the language an OpenID application asked for with ui_locales, for the pages of its pending sign-in (oauth/authorize.routes.ts) */
  uiLocale: string;
  /** the proof that this browser signed in to an account before (accounts/device-cookies.ts) */
  device: string;
  /** the half-signed-in state between a correct password and the second step (accounts/factors/second-step.ts) */
  secondStep: string;
  /** "Remember this browser for 30 days" at the second step (accounts/factors/remembered-browser.ts) */
  remembered: string;
  /** the binding of upstream sign-ins to this browser (accounts/upstream/signin-states.ts) */
  idp: string;
  /** an upstream identity waiting for the existing account's password (accounts/upstream/links.ts) */
  idpLink: string;
};

declare module 'fastify' {
  interface FastifyInstance {
    /** this deployment's cookie names (see cookies.ts) */
    cookieNames: CookieNames;
  }
}

export function cookieNames(settings: Pick<Settings, 'baseUrl' | 'altBaseUrl'>): CookieNames {
  const prefix = servedOrigins(settings).every((origin) => origin.protocol === 'https:') ? '__Host-' : '';
  return { session: prefix + SESSION_COOKIE, csrf: prefix + CSRF_COOKIE, flow: prefix + BROWSER_BINDING_COOKIE, language: prefix + LANGUAGE_COOKIE, uiLocale: prefix + UI_LOCALE_COOKIE, device: prefix + DEVICE_COOKIE, secondStep: prefix + SECOND_STEP_COOKIE, remembered: prefix + REMEMBERED_BROWSER_COOKIE, idp: prefix + UPSTREAM_BROWSER_COOKIE, idpLink: prefix + UPSTREAM_LINK_COOKIE };
}

/**
 * The options Signet's page cookies are set (and cleared) with: host-only, Path=/, HttpOnly,
 * SameSite=Lax, Secure when the page was served over https — what the `__Host-` names require.
 */
export function cookieOptions(request: FastifyRequest, lifetime: { maxAgeMs?: number; expiresAt?: number } = {}): CookieSerializeOptions {
  return {
    path: '/',
    httpOnly: true,
    sameSite: 'lax',
    secure: request.servedOrigin.protocol === 'https:',
    ...(lifetime.maxAgeMs === undefined ? {} : { maxAge: lifetime.maxAgeMs / 1000 }),
    ...(lifetime.expiresAt === undefined ? {} : { expires: new Date(lifetime.expiresAt) }),
  };
}
