// A sign-in sent to an upstream (issue 33), from the redirect to the callback: state, nonce and PKCE
// verifier are random per sign-in and kept here, sealed, under a keyed hash of the state together with
// this browser's idp cookie — so the callback works once (the row is taken out atomically: a replayed
// callback finds nothing), only in the browser that started it (login CSRF), and only for 10 minutes.
import { randomBytes } from 'node:crypto';
import { MINUTE, type Clock } from '../../config/clock.ts';
import { seal, unseal } from '../../config/sealing.ts';
import type { Db } from '../../db/database.ts';
import { keyedHash } from '../../oauth/secrets.ts';
import * as store from './upstream.store.ts';

export const UPSTREAM_STATE_LIFETIME_MS = 10 * MINUTE;

/** The browser's cookie binding its upstream sign-ins (web/cookies.ts adds `__Host-` on https). */
export const UPSTREAM_BROWSER_COOKIE = 'signet_idp';

export type UpstreamStateContext = { db: Db; clock: Clock; hashKey: Buffer; sealKey: Buffer };

/** What the callback needs back. `linkSub`: a signed-in person adding this provider from /account. */
export type UpstreamSignIn = {
  provider: string;
  state: string;
  nonce: string;
  codeVerifier: string;
  requestId: string | undefined;
  returnTo: string | undefined;
  linkSub: string | undefined;
  /** max_age passed on upstream: the id_token's auth_time is checked against it */
  maxAge: number | undefined;
};

export function isBrowserCookie(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value);
}

export function newBrowserCookie(): string {
  return randomBytes(32).toString('base64url');
}

function stateHash(key: Buffer, origin: string, browser: string, state: string): string {
  return keyedHash(key, `upstream-state\n${origin}\n${browser}\n${state}`);
}

const random = () => randomBytes(32).toString('base64url');

export async function beginUpstreamSignIn(
  ctx: UpstreamStateContext,
  input: { provider: string; origin: string; browser: string; requestId?: string | undefined; returnTo?: string | undefined; linkSub?: string | undefined; maxAge?: number | undefined },
): Promise<UpstreamSignIn> {
  const signIn: UpstreamSignIn = { provider: input.provider, state: random(), nonce: random(), codeVerifier: random(), requestId: input.requestId, returnTo: input.returnTo, linkSub: input.linkSub, maxAge: input.maxAge };
  const hash = stateHash(ctx.hashKey, input.origin, input.browser, signIn.state);
  const now = ctx.clock();
  const payload = JSON.stringify({ nonce: signIn.nonce, codeVerifier: signIn.codeVerifier, requestId: signIn.requestId, returnTo: signIn.returnTo, linkSub: signIn.linkSub, maxAge: signIn.maxAge });
  await store.insertState(ctx.db, { state_hash: hash, provider_slug: input.provider, sealed: seal(ctx.sealKey, `upstream-state\n${hash}`, Buffer.from(payload)), origin: input.origin, created_at: now, expires_at: now + UPSTREAM_STATE_LIFETIME_MS });
  return signIn;
}

/**
 * The sign-in a callback's `state` names in this browser, taken out (single use); undefined when the
 * state is unknown, tampered with, already used, from another browser or past its 10 minutes.
 */
export async function takeUpstreamSignIn(ctx: UpstreamStateContext, input: { origin: string; browser: unknown; state: string; provider: string }): Promise<UpstreamSignIn | undefined> {
  if (!isBrowserCookie(input.browser) || input.state.length === 0 || input.state.length > 200) return undefined;
  const hash = stateHash(ctx.hashKey, input.origin, input.browser, input.state);
  const row = await store.takeState(ctx.db, hash, ctx.clock());
  if (!row || row.provider_slug !== input.provider) return undefined;
  const payload = JSON.parse(unseal(ctx.sealKey, `upstream-state\n${hash}`, row.sealed).toString('utf8')) as Omit<UpstreamSignIn, 'provider' | 'state'>;
  return { provider: row.provider_slug, state: input.state, nonce: payload.nonce, codeVerifier: payload.codeVerifier, requestId: payload.requestId ?? undefined, returnTo: payload.returnTo ?? undefined, linkSub: payload.linkSub ?? undefined, maxAge: typeof payload.maxAge === 'number' ? payload.maxAge : undefined };
}
