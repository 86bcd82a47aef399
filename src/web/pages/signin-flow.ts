// What the sign-in pages share, below all of them (signin.routes.ts, second-step.routes.ts,
// finish-signin.ts, upstream-signin.routes.ts import this file; it imports none of them): the CSRF
// rotation at a session change, how long to wait in words, the device cookie, and where a finished
// sign-in continues — the pending request's consent page, else where it was headed.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DEVICE_COOKIE_LIFETIME_MS } from '../../accounts/device-cookies.ts';
import type { SecondStepContext } from '../../accounts/factors/second-step.ts';
import { MINUTE, SECOND } from '../../config/clock.ts';
import { cookieOptions } from '../cookies.ts';
import type { Messages } from '../i18n/en.ts';

/** What the second-step pages need: the second step's context and keys.rememberedBrowser. */
export type SecondStepPageContext = SecondStepContext & { /** keys.rememberedBrowser */ rememberKey: Buffer };

/**
 * CSRF tokens are rotated when the session changes (sign-in, sign-out): the secret cookie gets a new
 * value in this very response, so no form token handed out before — to this browser or, through a
 * planted cookie, to anyone — works after it.
 */
export function rotateCsrfSecret(request: FastifyRequest, reply: FastifyReply): void {
  delete request.cookies[request.server.cookieNames.csrf];
  reply.csrfToken();
}

/** How long to wait, in words: seconds under two minutes, else minutes (rounded up). */
export function waitText(t: Messages, ms: number): string {
  return ms < 2 * MINUTE ? t.waitSeconds(Math.max(1, Math.ceil(ms / SECOND))) : t.waitMinutes(Math.ceil(ms / MINUTE));
}

/** This browser is now known to the account: the per-account ceiling no longer holds it back. */
export function setDeviceCookie(request: FastifyRequest, reply: FastifyReply, value: string): void {
  reply.setCookie(request.server.cookieNames.device, value, cookieOptions(request, { maxAgeMs: DEVICE_COOKIE_LIFETIME_MS }));
}

/** Where a finished sign-in goes: the pending request's consent page, else where it was headed, else /account. */
export function nextAfterSignIn(flow: { requestId?: string | undefined | null; returnTo?: string | undefined | null }): string {
  return flow.requestId ? `/consent?request=${encodeURIComponent(flow.requestId)}` : (flow.returnTo ?? '/account');
}

/** The start address of a provider's sign-in for a pending request (the "Try again" link, the sign-in page's button). */
export function upstreamStartPath(slug: string, flow: { requestId?: string | undefined; returnTo?: string | undefined }): string {
  if (flow.requestId) return `/signin/idp/${slug}?request=${encodeURIComponent(flow.requestId)}`;
  return flow.returnTo ? `/signin/idp/${slug}?return=${encodeURIComponent(flow.returnTo)}` : `/signin/idp/${slug}`;
}
