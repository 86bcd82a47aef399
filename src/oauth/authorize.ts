// GET /oauth/authorize: the spec's five validation steps as five named checks in one array, in spec
// order. The first failure is an OAuthError answered as JSON at the endpoint, never redirected
// (spec "Errors" 1).
import { findClient, type Client } from '../clients/clients.ts';
import type { Db } from '../db/database.ts';
import type { CodeChallengeMethod } from './codes.ts';
import { OAuthError } from './errors.ts';
import { methodReadAsPlainAgainstIntent, normalizeChallengeMethod } from './pkce.ts';
import { REQUESTABLE_CLAIMS, scopesReleasing } from './claims.ts';
import { requestedResource } from './resources.ts';
import { DEFAULT_SCOPE, formatScope, isKnownScope, KNOWN_SCOPES, parseScopeParameter, type Scope } from './scopes.ts';
import { redirectUriMatchesDynamic } from './registration/redirect-uris.ts';

/** The query as Fastify parses it: a parameter sent twice arrives as an array. */
export type AuthorizeQuery = Record<string, unknown>;

/** A request that passed every check, with the spec's defaults applied. */
export type AuthorizeRequest = {
  client: Client;
  redirectUri: string;
  /** canonical order, never empty */
  scope: Scope[];
  /** spec: "state … default empty"; kept byte for byte */
  state: string | null;
  codeChallenge: string | null;
  /** null when no challenge was sent */
  codeChallengeMethod: CodeChallengeMethod | null;
  /** the `code_challenge_method` sent, when the spec reads it as `plain` although it is neither `S256` nor `plain` (e.g. `s256`) */
  methodReadAsPlain: string | null;
  /** spec: "`none` requests an attempt with no interface"; other values ask for the normal pages */
  prompt: 'none' | null;
  /**
   * issue 28: the OpenID Connect request parameters (Core §3.1.2.1) — read only for an application
   * registered with --oidc; for any other they are ignored like every unknown parameter (spec rule 5).
   */
  oidc: OidcRequest | null;
  /** issue 39: the RFC 8707 resource asked for (`{origin}/mcp`), or null when none was sent */
  resource: string | null;
};

/** The OpenID request parameters a pending request keeps until its code (stored as JSON). */
export type OidcRequest = {
  nonce?: string | undefined;
  /** `login`, `consent` (with `none` in AuthorizeRequest.prompt) */
  prompt?: string[] | undefined;
  /** seconds */
  maxAge?: number | undefined;
  loginHint?: string | undefined;
  idTokenHint?: string | undefined;
  acrValues?: string[] | undefined;
  /** the profile claims the `claims` parameter asks for in the id_token (Core §5.5), e.g. ["email"] */
  idTokenClaims?: string[] | undefined;
  /** the profile claims the `claims` parameter asks userinfo for (Core §5.5); their scopes join the request */
  userinfoClaims?: string[] | undefined;
  /** Core §3.1.2.1 `ui_locales`: the page languages asked for, most preferred first (BCP 47 tags) */
  uiLocales?: string[] | undefined;
};

/** OpenID Connect Core §5.5: the `claims` parameter's `id_token` and `userinfo` members — the profile claims each names. */
function claimsRequestOf(text: string | undefined): { idToken?: string[]; userinfo?: string[] } {
  if (text === undefined) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new OAuthError('invalid_request', 'claims must be a JSON object (OpenID Connect Core §5.5), e.g. {"id_token":{"email":null}}.');
  }
  const member = (name: 'id_token' | 'userinfo'): string[] | undefined => {
    const value = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>)[name] : undefined;
    if (typeof value !== 'object' || value === null) return undefined;
    const asked = Object.keys(value).filter((claim) => (REQUESTABLE_CLAIMS as readonly string[]).includes(claim));
    return asked.length > 0 ? asked : undefined;
  };
  const idToken = member('id_token');
  const userinfo = member('userinfo');
  return { ...(idToken ? { idToken } : {}), ...(userinfo ? { userinfo } : {}) };
}

/** The longest nonce, login_hint or acr_values accepted (each is stored with the pending request). */
export const MAX_OIDC_PARAMETER_LENGTH = 500;

/** What the checks learn, step by step. */
type Validation = {
  readonly query: AuthorizeQuery;
  readonly db: Db;
  /** SIGNET_COMPAT */
  readonly compat?: 'legacy' | undefined;
  /** the served origin that received the request: the resource it knows is `{origin}/mcp` */
  readonly origin?: string | undefined;
  /** how a client_id is looked up: the registry, or (issue 39) a Client ID Metadata Document fetched for it */
  readonly findClient: (clientId: string) => Promise<Client | undefined>;
  clientId?: string;
  redirectUri?: string;
  client?: Client;
  scope?: Scope[];
};

type Check = (v: Validation) => Promise<void> | void;

/**
 * One parameter's value. A parameter sent twice is `invalid_request`; an empty value counts as absent.
 * A NUL character is `invalid_request` too: no parameter needs one, and PostgreSQL cannot store it.
 */
function single(query: AuthorizeQuery, name: string): string | undefined {
  const value = query[name];
  if (value === undefined) return undefined;
  if (typeof value !== 'string') {
    throw new OAuthError('invalid_request', `The parameter ${name} was sent more than once. Send each parameter once.`);
  }
  if (value.includes('\u0000')) throw new OAuthError('invalid_request', `The parameter ${name} contains a NUL character (%00). Send it without one.`);
  return value === '' ? undefined : value;
}

function learned<T>(value: T | undefined, step: string): T {
  if (value === undefined) throw new Error(`authorize check "${step}" ran before the check that provides its input`);
  return value;
}

/** Step 1: spec "`client_id` and `redirect_uri` present". */
const clientIdAndRedirectUriPresent: Check = (v) => {
  const clientId = single(v.query, 'client_id');
  const redirectUri = single(v.query, 'redirect_uri');
  if (clientId === undefined) throw new OAuthError('invalid_request', 'client_id is missing. Send the client_id of your registered application.');
  if (redirectUri === undefined) throw new OAuthError('invalid_request', 'redirect_uri is missing. Send one of the redirect URIs registered for your application.');
  v.clientId = clientId;
  v.redirectUri = redirectUri;
};

/** Step 2: spec "`response_type` acceptable" — `code` is the only accepted value, and the default. */
const responseTypeAcceptable: Check = (v) => {
  const responseType = single(v.query, 'response_type') ?? 'code';
  if (responseType !== 'code') {
    throw new OAuthError('unsupported_response_type', 'response_type must be code (the only flow this service supports).');
  }
};

/** Step 3: spec "The application exists and is enabled." */
const applicationExistsAndIsEnabled: Check = async (v) => {
  const client = await v.findClient(learned(v.clientId, 'applicationExistsAndIsEnabled'));
  if (!client || !client.enabled) {
    // The same answer for both, so the endpoint does not tell which applications exist.
    throw new OAuthError('invalid_client', 'No enabled application has this client_id. Check the client_id, or ask the operator to enable the application.', {
      status: 400,
      detail: client ? 'application disabled' : 'unknown client_id',
    });
  }
  v.client = client;
};

/**
 * Step 4: spec "The redirect URI is registered" — "byte-identical to a registered URI". For an
 * application that registered itself (issue 39) a loopback redirect URI matches on any port (RFC 8252
 * §7.3); every other application keeps the byte-for-byte rule.
 */
const redirectUriIsRegistered: Check = (v) => {
  const client = learned(v.client, 'redirectUriIsRegistered');
  const redirectUri = learned(v.redirectUri, 'redirectUriIsRegistered');
  const registered = client.redirectUris.includes(redirectUri) || (client.dynamic && redirectUriMatchesDynamic(client.redirectUris, redirectUri));
  if (!registered) {
    throw new OAuthError('invalid_request', 'redirect_uri is not registered for this application. Send a registered redirect URI exactly as registered, byte for byte.');
  }
};

/** Step 5: spec "Every requested scope is permitted" — known, and registered for the application. */
const everyRequestedScopeIsPermitted: Check = (v) => {
  const client = learned(v.client, 'everyRequestedScopeIsPermitted');
  const raw = single(v.query, 'scope');
  // spec: "The default scope when none is sent is `openid profile`."
  const sent = raw === undefined ? [] : parseScopeParameter(raw);
  const requested: string[] = sent.length === 0 ? [...DEFAULT_SCOPE] : sent;
  const unknown = requested.filter((s) => !isKnownScope(s));
  if (unknown.length > 0) {
    throw new OAuthError('invalid_scope', `Unknown scope ${unknown.map((s) => `"${s}"`).join(', ')}. Known scopes are ${KNOWN_SCOPES.join(', ')}.`);
  }
  const notPermitted = requested.filter((s) => isKnownScope(s) && !client.scopes.includes(s));
  if (notPermitted.length > 0) {
    throw new OAuthError('invalid_scope', `The scope ${notPermitted.join(', ')} is not registered for this application. Request only ${client.scopes.join(', ')}, or ask the operator to register it.`);
  }
  v.scope = formatScope(requested).split(' ').filter(isKnownScope);
};

/** The spec's validation order, visible in one place. */
export const AUTHORIZE_CHECKS: readonly Check[] = [
  clientIdAndRedirectUriPresent,
  responseTypeAcceptable,
  applicationExistsAndIsEnabled,
  redirectUriIsRegistered,
  everyRequestedScopeIsPermitted,
];

/**
 * The longest `state` accepted. The spec does not limit it, but every pending request stores it and
 * every callback carries it; 2,000 characters leave ample room for any per-attempt value (the spec asks
 * for a URL-safe random one) while keeping the row and the callback URL small.
 */
export const MAX_STATE_LENGTH = 2000;

/** RFC 7636 §4.2: `code-challenge = 43*128unreserved`, `unreserved = ALPHA / DIGIT / "-" / "." / "_" / "~"`. */
const CODE_CHALLENGE_SYNTAX = /^[A-Za-z0-9\-._~]{43,128}$/;

/** After the spec's five: `state` within its cap. */
const stateWithinLimit: Check = (v) => {
  const state = single(v.query, 'state');
  if (state !== undefined && state.length > MAX_STATE_LENGTH) {
    throw new OAuthError('invalid_request', `state is longer than ${MAX_STATE_LENGTH} characters. Send a short random value (e.g. 32 random bytes as hex or unpadded base64url).`);
  }
};

/** After the spec's five: a `code_challenge` is what RFC 7636 says it is, so no stored value can grow without bound. */
const codeChallengeWellFormed: Check = (v) => {
  const challenge = single(v.query, 'code_challenge');
  if (challenge !== undefined && !CODE_CHALLENGE_SYNTAX.test(challenge)) {
    throw new OAuthError('invalid_request', 'code_challenge must be 43 to 128 characters of A-Z, a-z, 0-9, "-", ".", "_" and "~" (RFC 7636): for S256, the unpadded base64url SHA-256 of your code_verifier.');
  }
};

/**
 * After the spec's five, with SIGNET_COMPAT=legacy only: `state` goes into the callback's Location
 * header without escaping (spec: "echoed into the callback URL without escaping"), so a control character
 * (NUL, CR, LF …) or one beyond Latin-1 could not be sent at all — and the code minted for that callback
 * would be lost. Refused here, before anything exists; every value that can be carried (URL-safe ones
 * above all) stays byte for byte. By default `state` is form-encoded, so every value is carried.
 */
const stateCarriableUnescaped: Check = (v) => {
  if (v.compat !== 'legacy') return;
  const state = single(v.query, 'state');
  if (state !== undefined && /[\u0000-\u001f\u007f]|[^\u0000-\u00ff]/.test(state)) {
    throw new OAuthError('invalid_request', 'state holds a character that cannot be echoed into the callback URL unescaped (a control character or one beyond Latin-1). Send a URL-safe value such as hex or unpadded base64url.');
  }
};

/**
 * Issue 39, after the spec's five: an application that registered itself (RFC 7591) must use PKCE with
 * S256 (OAuth 2.1 §4.1.1, the MCP authorization spec) — it has no operator vouching for it, and a public
 * one has no other credential. Applications registered by an operator keep the spec's rules.
 */
const dynamicClientUsesS256: Check = (v) => {
  const client = learned(v.client, 'dynamicClientUsesS256');
  if (!client.dynamic) return;
  if (single(v.query, 'code_challenge') === undefined || single(v.query, 'code_challenge_method') !== 'S256') {
    throw new OAuthError('invalid_request', 'This application registered itself, so it must use PKCE with S256: send code_challenge (the unpadded base64url SHA-256 of your code_verifier) and code_challenge_method=S256.');
  }
};

/** Issue 39, after the spec's five: RFC 8707 `resource`, when sent, names the one resource this server knows, else `invalid_target`. */
const resourceIsKnown: Check = (v) => {
  // Without the served origin (a caller outside the endpoint) no resource is read at all.
  if (v.query.resource === undefined || v.origin === undefined) return;
  requestedResource(v.query.resource, v.origin);
};

/** Checks of the optional parameters, run only after the spec's five (whose order and answers stay as the spec says). */
export const PARAMETER_CHECKS: readonly Check[] = [stateWithinLimit, codeChallengeWellFormed, stateCarriableUnescaped, dynamicClientUsesS256, resourceIsKnown];

/** OpenID Connect Core §3.1.2.1, for an OpenID application: nonce, prompt, max_age, login_hint, id_token_hint, acr_values. */
function readOidcParameters(query: AuthorizeQuery): OidcRequest {
  const bounded = (name: string, max = MAX_OIDC_PARAMETER_LENGTH) => {
    const value = single(query, name);
    if (value !== undefined && value.length > max) throw new OAuthError('invalid_request', `${name} is longer than ${max} characters.`);
    return value;
  };
  const maxAgeText = single(query, 'max_age');
  // Core §3.1.2.1: "max_age — Maximum Authentication Age … in seconds"
  if (maxAgeText !== undefined && !/^\d{1,9}$/.test(maxAgeText)) throw new OAuthError('invalid_request', 'max_age must be a whole number of seconds.');
  const prompt = single(query, 'prompt')?.split(' ').filter((p) => p === 'login' || p === 'consent');
  const acrValues = bounded('acr_values')?.split(' ').filter(Boolean);
  const claims = claimsRequestOf(bounded('claims', 2000));
  const uiLocales = bounded('ui_locales')?.split(' ').filter(Boolean);
  return {
    nonce: bounded('nonce'),
    ...(prompt && prompt.length > 0 ? { prompt } : {}),
    ...(maxAgeText === undefined ? {} : { maxAge: Number(maxAgeText) }),
    loginHint: bounded('login_hint'),
    idTokenHint: bounded('id_token_hint', 8000),
    ...(acrValues && acrValues.length > 0 ? { acrValues } : {}),
    ...(claims.idToken ? { idTokenClaims: claims.idToken } : {}),
    ...(claims.userinfo ? { userinfoClaims: claims.userinfo } : {}),
    ...(uiLocales && uiLocales.length > 0 ? { uiLocales } : {}),
  };
}

/** Runs the five checks in order, then checks and reads the optional parameters. Throws the first failure. */
export async function validateAuthorizeRequest(
  db: Db,
  query: AuthorizeQuery,
  compat?: 'legacy' | undefined,
  origin?: string,
  lookUpClient: (clientId: string) => Promise<Client | undefined> = (clientId) => findClient(db, clientId),
): Promise<AuthorizeRequest> {
  const v: Validation = { query, db, compat, origin, findClient: lookUpClient };
  for (const check of AUTHORIZE_CHECKS) await check(v);
  for (const check of PARAMETER_CHECKS) await check(v);

  const state = single(query, 'state') ?? null;
  const codeChallenge = single(query, 'code_challenge') ?? null;
  const method = single(query, 'code_challenge_method');
  const prompt = single(query, 'prompt');
  const client = learned(v.client, 'validateAuthorizeRequest');
  const oidc = client.oidc ? readOidcParameters(query) : null;
  const scope = withUserinfoClaimScopes(learned(v.scope, 'validateAuthorizeRequest'), client, oidc);
  return {
    client,
    redirectUri: learned(v.redirectUri, 'validateAuthorizeRequest'),
    scope,
    state,
    codeChallenge,
    // spec: "only the exact string `S256` selects SHA-256; any other value, including `s256`, is treated as `plain`"
    codeChallengeMethod: codeChallenge === null ? null : normalizeChallengeMethod(method),
    methodReadAsPlain: codeChallenge === null ? null : (methodReadAsPlainAgainstIntent(method) ?? null),
    prompt: prompt === 'none' ? 'none' : null,
    oidc,
    resource: origin === undefined ? null : requestedResource(query.resource, origin),
  };
}

/**
 * Core §5.5: claims the `userinfo` member names "are being requested to be added to any Claims that are
 * being requested using scope values". Signet releases a claim only with its scope (spec "Scopes"), so
 * such a claim asks for its scope: the consent page shows it, and userinfo returns the claim when the
 * person allows it. A scope the application is not registered for is left out (Core: a claim the OP
 * cannot release is simply not returned), never an error — and only an OpenID request (`openid`) widens.
 */
function withUserinfoClaimScopes(scope: Scope[], client: Client, oidc: OidcRequest | null): Scope[] {
  if (!oidc?.userinfoClaims || !scope.includes('openid')) return scope;
  const added = scopesReleasing(oidc.userinfoClaims).filter((s) => client.scopes.includes(s));
  return formatScope([...scope, ...added]).split(' ').filter(isKnownScope);
}
