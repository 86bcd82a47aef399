// The pending authorization request: the one record through which the sign-in and consent pages talk
// to the protocol. /oauth/authorize saves it and redirects to our page; the pages read it and finish it
// (approve or decline) through these functions, which alone mint codes and build callback URLs.
import { randomBytes } from 'node:crypto';
import { countInWindow } from '../accounts/throttle.ts';
import { MINUTE, SECOND, type Clock } from '../config/clock.ts';
import type { Db, Dialect } from '../db/database.ts';
import type { AuthorizeRequest, OidcRequest } from './authorize.ts';
import { idTokenContext, type SignInFacts } from './oidc/id-token.ts';
import { callbackUrl } from './callback.ts';
import type { ClientIdMetadataContext } from './registration/client-id-metadata.ts';
import { issueAuthorizationCode, type CodeChallengeMethod } from './codes.ts';
import { OAuthError } from './errors.ts';
import { formatScope, scopeList, type Scope } from './scopes.ts';
import { keyedHash } from './secrets.ts';
import * as store from './authorization-requests.store.ts';

/** How long a person has to sign in and decide: short, so abandoned requests do not pile up. */
export const PENDING_REQUEST_LIFETIME_MS = 10 * MINUTE;

/**
 * At most this many pending requests per client address per PENDING_REQUEST_LIFETIME_MS: far above
 * what people behind one address start by hand, and it bounds how many rows one address can keep alive.
 */
export const PENDING_REQUESTS_PER_ADDRESS = 300;

/**
 * spec (hardening): a pending request belongs to the browser that started it. /oauth/authorize gives
 * the browser this cookie (a random value, kept across flows so two tabs both work) and stores the
 * request under a keyed hash of its id *together with* that value; the pages find it only with the same
 * cookie, so a link to /signin?request=… opened in another browser leads nowhere.
 */
export const BROWSER_BINDING_COOKIE = 'signet_flow';

/** Whether a cookie value is a browser binding as handed out: 32 random bytes, unpadded base64url. */
export function isBrowserBinding(value: unknown): value is string {
  return typeof value === 'string' && /^[A-Za-z0-9_-]{43}$/.test(value);
}

export function newBrowserBinding(): string {
  return randomBytes(32).toString('base64url');
}

/** What finishing a flow needs. */
export type FlowContext = {
  db: Db;
  /** for notifications recorded by the flow (an application authorized for the first time) */
  dialect: Dialect;
  /** keys.tokenHash */
  hashKey: Buffer;
  clock: Clock;
  compat: 'legacy' | undefined;
  /** issue 39: Client ID Metadata Documents (an https URL as client_id), when the server accepts them */
  clientIdMetadata?: ClientIdMetadataContext | undefined;
  /**
   * The browser-binding cookie of the request being served, added per request with forBrowser(). Without
   * it no pending request is found (or created).
   */
  browserBinding?: string | undefined;
};

/** The flow context of one request: `ctx` with the browser-binding cookie it carried (if well formed). */
export function forBrowser(ctx: FlowContext, cookie: unknown): FlowContext {
  return { ...ctx, browserBinding: isBrowserBinding(cookie) ? cookie : undefined };
}

/** The stored key of a pending request: a keyed hash of its id together with the browser binding it was created with. */
export function pendingRequestKey(hashKey: Buffer, id: string, browserBinding: string): string {
  return keyedHash(hashKey, `${browserBinding}\n${id}`);
}

export type PendingRequest = {
  clientId: string;
  redirectUri: string;
  scope: Scope[];
  state: string | null;
  codeChallenge: string | null;
  codeChallengeMethod: CodeChallengeMethod | null;
  /** the served origin that received /oauth/authorize; the pages of this flow live there */
  origin: string;
  expiresAt: number;
  /** when /oauth/authorize received it: prompt=login wants a sign-in after this */
  createdAt: number;
  /** issue 28: the OpenID request parameters (an application registered with --oidc), else null */
  oidc: OidcRequest | null;
  /** issue 39: the RFC 8707 resource the code and its tokens will be for, or null */
  resource: string | null;
};

function fromRow(row: store.AuthorizationRequestRow): PendingRequest {
  return {
    clientId: row.client_id,
    redirectUri: row.redirect_uri,
    scope: scopeList(row.scope),
    state: row.state,
    codeChallenge: row.code_challenge,
    codeChallengeMethod: row.code_challenge === null ? null : row.code_challenge_method === 'S256' ? 'S256' : 'plain',
    origin: row.origin,
    expiresAt: row.expires_at,
    createdAt: row.created_at,
    oidc: row.oidc ? (JSON.parse(row.oidc) as OidcRequest) : null,
    resource: row.resource ?? null,
  };
}

/**
 * Whether the person must sign in (again) before this request is answered (OpenID Connect Core
 * §3.1.2.1): `prompt=login`; `max_age` past since the last sign-in; `acr_values` asking for `mfa` from
 * a session of one factor. A sign-in made after the request started always satisfies it, so the person
 * is asked once.
 */
export function signInRequired(oidc: OidcRequest | null, createdAt: number, session: SignInFacts, now: number): boolean {
  if (!oidc || session.authTime >= createdAt) return false;
  if (oidc.prompt?.includes('login')) return true;
  if (oidc.maxAge !== undefined && now - session.authTime > oidc.maxAge * 1000) return true;
  if (oidc.acrValues?.includes('mfa') && !session.amr.includes('mfa')) return true;
  return false;
}

/** What the code's id_tokens will say (issue 28): for an OpenID request granted `openid` only. */
function idTokenContextFor(oidc: OidcRequest | null, issuer: string, scope: readonly Scope[], signIn: SignInFacts | undefined): string | null {
  if (!oidc || !signIn || !scope.includes('openid')) return null;
  return idTokenContext(issuer, signIn, { nonce: oidc.nonce, acrValues: oidc.acrValues, claims: oidc.idTokenClaims });
}

/** The parameters a pending request keeps (the id_token_hint is used at /oauth/authorize only). */
function storedOidc(oidc: OidcRequest | null): string | null {
  if (!oidc) return null;
  const { idTokenHint: _hint, ...kept } = oidc;
  return JSON.stringify(kept);
}

/**
 * Saves a validated request. Returns its id: unguessable (32 random bytes), handed out in the page URL
 * and stored only as a keyed hash. No code exists yet. `address` is the client's address, for the
 * per-address limit (a 429 `temporarily_unavailable` with Retry-After beyond it).
 */
export async function createPendingRequest(ctx: FlowContext, request: AuthorizeRequest, origin: string, address: string): Promise<string> {
  if (ctx.browserBinding === undefined) throw new Error('createPendingRequest needs the browser binding (forBrowser)');
  const { count, windowEndsAt } = await countInWindow(ctx.db, ctx.clock, `authorize:${address}`, PENDING_REQUEST_LIFETIME_MS);
  if (count > PENDING_REQUESTS_PER_ADDRESS) {
    throw new OAuthError('temporarily_unavailable', 'Too many sign-in attempts were started from your network just now. Wait a few minutes, then start again from the application.', {
      status: 429,
      detail: 'pending-request limit per address reached',
      retryAfterSeconds: Math.max(1, Math.ceil((windowEndsAt - ctx.clock()) / SECOND)),
    });
  }
  const id = randomBytes(32).toString('base64url'); // unpadded: nothing in it needs escaping in a URL
  const now = ctx.clock();
  await store.insertRequest(ctx.db, {
    id_hash: pendingRequestKey(ctx.hashKey, id, ctx.browserBinding),
    client_id: request.client.clientId,
    redirect_uri: request.redirectUri,
    scope: formatScope(request.scope),
    state: request.state,
    code_challenge: request.codeChallenge,
    code_challenge_method: request.codeChallengeMethod,
    origin,
    created_at: now,
    expires_at: now + PENDING_REQUEST_LIFETIME_MS,
    completed_at: null,
    oidc: storedOidc(request.oidc),
    // only when asked for: a request without one stores exactly what it stored before
    ...(request.resource === null ? {} : { resource: request.resource }),
  });
  return id;
}

/**
 * The open request with this id, served on this origin, started by this browser; undefined when unknown,
 * finished, expired, from the other host or from another browser.
 */
export async function findPendingRequest(ctx: FlowContext, id: string, origin: string): Promise<PendingRequest | undefined> {
  if (id.length === 0 || id.length > 100 || ctx.browserBinding === undefined) return undefined;
  const row = await store.findOpenRequest(ctx.db, pendingRequestKey(ctx.hashKey, id, ctx.browserBinding), ctx.clock());
  if (!row || row.origin !== origin) return undefined;
  return fromRow(row);
}

/**
 * Finishes the request once (a second submission gets undefined). Approval issues the code, bound to
 * client, redirect URI, granted scope and PKCE challenge; the result is the callback URL with `code`
 * and `state`. `grantedScope` may be narrower than the requested one.
 */
export async function approvePendingRequest(ctx: FlowContext, id: string, origin: string, sub: string, grantedScope: readonly Scope[], signIn?: SignInFacts): Promise<string | undefined> {
  const row = await finish(ctx, id, origin);
  if (!row) return undefined;
  const request = fromRow(row);
  const code = await issueAuthorizationCode(ctx.db, ctx.hashKey, ctx.clock, {
    clientId: request.clientId,
    sub,
    redirectUri: request.redirectUri,
    scope: formatScope(grantedScope),
    codeChallenge: request.codeChallenge,
    codeChallengeMethod: request.codeChallengeMethod,
    idTokenContext: idTokenContextFor(request.oidc, request.origin, grantedScope, signIn),
    resource: request.resource,
  });
  return callbackUrl(request.redirectUri, { code }, { state: request.state, compat: ctx.compat, issuer: request.origin });
}

/** spec: "When the user declines, the callback receives `error=access_denied` and the `state`." */
export async function declinePendingRequest(ctx: FlowContext, id: string, origin: string): Promise<string | undefined> {
  const row = await finish(ctx, id, origin);
  if (!row) return undefined;
  return callbackUrl(row.redirect_uri, { error: 'access_denied' }, { state: row.state, compat: ctx.compat, issuer: row.origin });
}

async function finish(ctx: FlowContext, id: string, origin: string): Promise<store.AuthorizationRequestRow | undefined> {
  if (ctx.browserBinding === undefined) return undefined;
  const idHash = pendingRequestKey(ctx.hashKey, id, ctx.browserBinding);
  const open = await store.findOpenRequest(ctx.db, idHash, ctx.clock());
  if (!open || open.origin !== origin) return undefined;
  return store.completeRequest(ctx.db, idHash, ctx.clock());
}

/** The person behind a prompt=none attempt, as far as the session tells. */
export type SilentContext = {
  /** undefined when not signed in */
  sub: string | undefined;
  /** the grant check; it may fail */
  grantCovers: () => Promise<boolean>;
  /** true when the person must set up a second factor first (SIGNET_MFA=required and none yet) */
  mustEnrol?: () => Promise<boolean>;
  /** issue 28: the session's sign-in (auth_time, amr, sid), for an OpenID request */
  signIn?: SignInFacts | undefined;
  /** issue 28: whether the id_token_hint (when one was sent) names the signed-in person */
  hintMatches?: () => Promise<boolean>;
};

/**
 * prompt=none, the spec's four rows; `state` is re-appended in every case.
 * - not signed in → `error=login_required`
 * - signed in, no matching grant → `error=consent_required`
 * - the grant check failed → `error=interaction_required`
 * - signed in with a matching grant → `code`, with no consent screen — unless SIGNET_MFA=required and the
 *   person has no second factor yet (a session from before the policy): `error=interaction_required`,
 *   since issue 19 wants a factor set up before any consent or callback
 * Returns the callback URL, and the failure of the grant check when there was one (for the log).
 * `origin` is the served origin that received the request: the issuer named in the callback.
 */
export async function answerWithoutInterface(ctx: FlowContext, request: AuthorizeRequest, who: SilentContext, origin: string): Promise<{ url: string; failure?: unknown }> {
  const back = (outcome: Parameters<typeof callbackUrl>[1]) => callbackUrl(request.redirectUri, outcome, { state: request.state, compat: ctx.compat, issuer: origin });
  if (who.sub === undefined) return { url: back({ error: 'login_required' }) };
  // OpenID Connect Core §3.1.2.1: with prompt=none, "the Authorization Server MUST NOT display any
  // authentication … user interface pages" — a sign-in that max_age, acr_values or the hint want is login_required.
  // No sign-in can happen within this request: every sign-in counts as older than it (createdAt +∞).
  if (request.oidc && who.signIn && signInRequired(request.oidc, Number.POSITIVE_INFINITY, who.signIn, ctx.clock())) return { url: back({ error: 'login_required' }) };
  if (who.hintMatches && !(await who.hintMatches())) return { url: back({ error: 'login_required' }) };
  let covered: boolean;
  try {
    covered = await who.grantCovers();
  } catch (failure) {
    return { url: back({ error: 'interaction_required' }), failure };
  }
  if (!covered) return { url: back({ error: 'consent_required' }) };
  if (who.mustEnrol && (await who.mustEnrol())) return { url: back({ error: 'interaction_required' }) };
  const code = await issueAuthorizationCode(ctx.db, ctx.hashKey, ctx.clock, {
    clientId: request.client.clientId,
    sub: who.sub,
    redirectUri: request.redirectUri,
    scope: formatScope(request.scope),
    codeChallenge: request.codeChallenge,
    codeChallengeMethod: request.codeChallengeMethod,
    idTokenContext: idTokenContextFor(request.oidc, origin, request.scope, who.signIn),
    resource: request.resource,
  });
  return { url: back({ code }) };
}

/** Removes pending requests that have expired (for a periodic sweep; an expired request is never served anyway). */
export async function forgetExpiredPendingRequests(ctx: Pick<FlowContext, 'db' | 'clock'>): Promise<number> {
  return store.deleteExpiredRequests(ctx.db, ctx.clock());
}
