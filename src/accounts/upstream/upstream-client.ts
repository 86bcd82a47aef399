// Talking to an upstream (issue 33) through openid-client (itself built on oauth4webapi and jose):
// discovery of an OpenID Provider's metadata, the authorization URL with state, PKCE S256 and nonce, and
// the callback's checks — the state and RFC 9207 `iss` of the authorization response, then the code
// exchange and the id_token: its signature against the upstream's JWKS (enableNonRepudiationChecks),
// `iss`, `aud`, `exp` and `nonce`. GitHub speaks OAuth 2.0 only: its token, then its `/user` and
// `/user/emails` API. Every request has a deadline; the discovery document (and with it the JWKS the
// configuration caches) is kept for an hour per provider and version.
import * as oidc from 'openid-client';
import type { Provider } from './providers.ts';
import type { UpstreamIdentity } from './links.ts';

/** How a call to an upstream failed, in the words the pages use. */
export type UpstreamFailure =
  /** it did not answer in time, or could not be reached */
  | 'unavailable'
  /** the person cancelled (or was refused) at the upstream: `error=access_denied` */
  | 'access_denied'
  /** the upstream answered with an error (a wrong client secret, a used code, …) */
  | 'refused'
  /** the id_token did not verify: signature, issuer, audience, expiry or nonce */
  | 'invalid_id_token'
  /** the answer was not what the protocol says (no e-mail list, no user id, …) */
  | 'invalid_response';

export class UpstreamError extends Error {
  readonly failure: UpstreamFailure;
  /** a short machine-readable reason for the audit trail */
  readonly reason: string;
  constructor(failure: UpstreamFailure, reason: string, message: string) {
    super(message);
    this.failure = failure;
    this.reason = reason;
    this.name = 'UpstreamError';
  }
}

export type UpstreamClientOptions = {
  /** deadline of each request to the upstream */
  timeoutMs: number;
  /** how long a discovery document (with the JWKS the configuration caches) is kept */
  cacheMs: number;
  now: () => number;
};

/** GitHub's documented endpoints, under its web address (github.com, or a GitHub Enterprise Server). */
export function githubEndpoints(issuer: string): { authorize: string; token: string; api: string } {
  const web = new URL(issuer).origin;
  // github.com keeps its API on api.github.com; a GitHub Enterprise Server under /api/v3 of its own host.
  const api = web === 'https://github.com' ? 'https://api.github.com' : `${web}/api/v3`;
  return { authorize: `${web}/login/oauth/authorize`, token: `${web}/login/oauth/access_token`, api };
}

function isLoopbackHttp(issuer: string): boolean {
  const url = new URL(issuer);
  return url.protocol === 'http:' && (url.hostname === '127.0.0.1' || url.hostname === 'localhost' || url.hostname === '[::1]');
}

type ProviderWithSecret = Provider & { clientSecret: string };

/** What the application's request asked of the sign-in's age (OpenID Connect Core §3.1.2.1), passed on upstream. */
export type Freshness = { login: boolean; maxAge: number | undefined };
type Cached = { config: oidc.Configuration; at: number };

export function createUpstreamClient(options: UpstreamClientOptions) {
  const cache = new Map<string, Cached>();
  const timeout = Math.max(1, Math.ceil(options.timeoutMs / 1000));

  /** The provider's configuration: discovered (OpenID Provider) or built from GitHub's endpoints. */
  async function configFor(provider: ProviderWithSecret): Promise<oidc.Configuration> {
    const key = `${provider.slug}\n${provider.issuer}\n${provider.clientId}\n${provider.updatedAt}`;
    const hit = cache.get(key);
    if (hit && options.now() - hit.at < options.cacheMs) return hit.config;
    const insecure = isLoopbackHttp(provider.issuer) ? [oidc.allowInsecureRequests] : [];
    let config: oidc.Configuration;
    if (provider.kind === 'github') {
      const endpoints = githubEndpoints(provider.issuer);
      config = new oidc.Configuration({ issuer: provider.issuer, authorization_endpoint: endpoints.authorize, token_endpoint: endpoints.token }, provider.clientId, provider.clientSecret, oidc.ClientSecretPost(provider.clientSecret));
      for (const apply of insecure) apply(config);
    } else {
      const discovered = await guarded('discovery', () => oidc.discovery(new URL(provider.issuer), provider.clientId, undefined, oidc.None(), { timeout, execute: insecure }));
      const metadata = discovered.serverMetadata();
      // RFC 8414: without a list, client_secret_basic is the default.
      const methods = metadata.token_endpoint_auth_methods_supported ?? ['client_secret_basic'];
      const auth = methods.includes('client_secret_basic') || !methods.includes('client_secret_post') ? oidc.ClientSecretBasic(provider.clientSecret) : oidc.ClientSecretPost(provider.clientSecret);
      config = new oidc.Configuration(metadata, provider.clientId, provider.clientSecret, auth);
      for (const apply of insecure) apply(config);
      // The id_token's signature is checked against the upstream's JWKS, not only trusted for arriving over TLS.
      oidc.enableNonRepudiationChecks(config);
    }
    config.timeout = timeout;
    if (cache.size > 200) cache.clear();
    cache.set(key, { config, at: options.now() });
    return config;
  }

  return {
    /** The address to send the person to, with state, PKCE S256 and (OpenID) nonce. */
    async authorizationUrl(provider: ProviderWithSecret, input: { redirectUri: string; state: string; nonce: string; codeVerifier: string; freshness?: Freshness | undefined }): Promise<URL> {
      const config = await configFor(provider);
      const params: Record<string, string> = {
        redirect_uri: input.redirectUri,
        scope: provider.scope,
        state: input.state,
        code_challenge: await oidc.calculatePKCECodeChallenge(input.codeVerifier),
        code_challenge_method: 'S256',
      };
      if (provider.kind === 'oidc') {
        params['nonce'] = input.nonce;
        // The application asked for a fresh sign-in (prompt=login, max_age): the upstream is asked the same.
        if (input.freshness?.login) params['prompt'] = 'login';
        if (input.freshness?.maxAge !== undefined) params['max_age'] = String(input.freshness.maxAge);
      }
      return oidc.buildAuthorizationUrl(config, params);
    },

    /**
     * The callback: checks the authorization response (state, RFC 9207 `iss` when sent — or required
     * when the upstream advertises it), exchanges the code with the PKCE verifier, checks the id_token,
     * and returns who the person is at the upstream.
     */
    async identify(provider: ProviderWithSecret, input: { callbackUrl: URL; state: string; nonce: string; codeVerifier: string; maxAge?: number | undefined }): Promise<UpstreamIdentity> {
      const config = await configFor(provider);
      if (provider.kind === 'github') {
        const tokens = await guarded('token', () => oidc.authorizationCodeGrant(config, input.callbackUrl, { expectedState: input.state, pkceCodeVerifier: input.codeVerifier }));
        return githubIdentity(config, provider, tokens.access_token);
      }
      const tokens = await guarded('token', () => oidc.authorizationCodeGrant(config, input.callbackUrl, { expectedState: input.state, expectedNonce: input.nonce, pkceCodeVerifier: input.codeVerifier, idTokenExpected: true, ...(input.maxAge === undefined ? {} : { maxAge: input.maxAge }) }));
      const claims = tokens.claims();
      if (!claims) throw new UpstreamError('invalid_id_token', 'no_id_token', 'the upstream sent no id_token');
      let email = typeof claims['email'] === 'string' ? claims['email'] : undefined;
      let emailVerified = claims['email_verified'] === true;
      let name = typeof claims['name'] === 'string' ? claims['name'] : undefined;
      // Not every provider puts the profile into the id_token (Signet does not): ask userinfo, whose
      // `sub` must be the id_token's.
      if ((email === undefined || name === undefined) && config.serverMetadata().userinfo_endpoint) {
        const info = await guarded('userinfo', () => oidc.fetchUserInfo(config, tokens.access_token, claims.sub));
        if (email === undefined && typeof info.email === 'string') {
          email = info.email;
          emailVerified = info.email_verified === true;
        }
        if (name === undefined && typeof info.name === 'string') name = info.name;
      }
      return { sub: claims.sub, email, emailVerified, name, amr: registeredAmr(claims['amr']) };
    },

    /** Forgets every cached configuration (tests; an operator's change is picked up by its new version anyway). */
    clear(): void {
      cache.clear();
    },
  };
}

export type UpstreamClient = ReturnType<typeof createUpstreamClient>;

/** RFC 8176 §2's registered values (and `pop`, registered later): others from an upstream are dropped. */
const RFC8176_AMR = new Set(['face', 'fpt', 'geo', 'hwk', 'iris', 'kba', 'mca', 'mfa', 'otp', 'pin', 'pop', 'pwd', 'rba', 'retina', 'sc', 'sms', 'swk', 'tel', 'user', 'vbm', 'wia']);

export function registeredAmr(value: unknown): string[] {
  return Array.isArray(value) ? [...new Set(value.filter((v): v is string => typeof v === 'string' && RFC8176_AMR.has(v)))] : [];
}

/** GitHub: `GET /user` (its numeric `id` is the identity) and `GET /user/emails` (the verified primary e-mail). */
async function githubIdentity(config: oidc.Configuration, provider: Provider, accessToken: string): Promise<UpstreamIdentity> {
  const { api } = githubEndpoints(provider.issuer);
  const headers = () => new Headers({ accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28' });
  const user = await guarded('github_user', async () => githubJson(await oidc.fetchProtectedResource(config, accessToken, new URL(`${api}/user`), 'GET', undefined, headers())));
  const id = typeof user === 'object' && user !== null ? (user as Record<string, unknown>)['id'] : undefined;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) throw new UpstreamError('invalid_response', 'github_user', 'GitHub answered /user without a numeric id');
  const profile = user as Record<string, unknown>;
  const emails = await guarded('github_emails', async () => githubJson(await oidc.fetchProtectedResource(config, accessToken, new URL(`${api}/user/emails`), 'GET', undefined, headers())));
  if (!Array.isArray(emails)) throw new UpstreamError('invalid_response', 'github_emails', 'GitHub answered /user/emails without a list');
  const listed = emails.filter((e): e is { email: string; primary?: unknown; verified?: unknown } => typeof e === 'object' && e !== null && typeof (e as Record<string, unknown>)['email'] === 'string');
  const chosen = listed.find((e) => e.primary === true && e.verified === true) ?? listed.find((e) => e.verified === true) ?? listed.find((e) => e.primary === true);
  const name = typeof profile['name'] === 'string' && profile['name'] ? profile['name'] : typeof profile['login'] === 'string' ? profile['login'] : undefined;
  return { sub: String(id), email: chosen?.email, emailVerified: chosen?.verified === true, name, amr: [] };
}

async function githubJson(response: Response): Promise<unknown> {
  if (!response.ok) throw new UpstreamError('refused', `github_http_${response.status}`, `GitHub answered ${response.status}`);
  return response.json();
}

/** Runs a call to the upstream and names its failure. */
async function guarded<T>(step: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    throw classify(step, error);
  }
}

/** The `code`s and names along an error's cause chain (openid-client wraps the fetch and oauth4webapi errors). */
function chainOf(error: unknown): { codes: string[]; names: string[] } {
  const codes: string[] = [];
  const names: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 6 && current instanceof Error; depth++) {
    names.push(current.name);
    if ('code' in current && typeof current.code === 'string') codes.push(current.code);
    current = current.cause;
  }
  return { codes, names };
}

function messagesOf(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    parts.push(current.message);
    current = current.cause;
  }
  return parts.length > 0 ? parts.join(': ') : String(error);
}

function classify(step: string, error: unknown): UpstreamError {
  if (error instanceof UpstreamError) return error;
  if (error instanceof oidc.AuthorizationResponseError) {
    return error.error === 'access_denied' ? new UpstreamError('access_denied', 'access_denied', 'the person cancelled at the upstream') : new UpstreamError('refused', `authorize_${safeCode(error.error)}`, `the upstream answered ${error.error}`);
  }
  if (error instanceof oidc.ResponseBodyError) return new UpstreamError('refused', `${step}_${safeCode(error.error)}`, `the upstream answered ${error.error} (${error.status})`);
  const { codes, names } = chainOf(error);
  const code = codes[0] ?? '';
  const unreachable = codes.some((c) => c === 'OAUTH_TIMEOUT' || /^(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|UND_ERR_\w+)$/.test(c));
  if (unreachable || names.includes('TimeoutError') || names.includes('AbortError') || (error instanceof TypeError && error.message === 'fetch failed')) {
    return new UpstreamError('unavailable', `${step}_unavailable`, `the upstream did not answer (${step})`);
  }
  // openid-client wraps oauth4webapi's error: the words that say what failed are in the cause.
  const message = messagesOf(error);
  if (step === 'token' && (code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED' || code === 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED' || code === 'OAUTH_KEY_SELECTION_FAILED' || /JWT|ID Token|signature/i.test(message))) {
    return new UpstreamError('invalid_id_token', 'id_token_invalid', `the id_token did not verify: ${message}`);
  }
  if (code === 'OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED' || /"iss"/.test(message)) return new UpstreamError('refused', `${step}_iss_mismatch`, `the upstream's answer named another issuer: ${message}`);
  return new UpstreamError('invalid_response', `${step}_invalid`, `the upstream's answer was not understood (${step}): ${message}`);
}

function safeCode(value: string): string {
  return value.toLowerCase().replace(/[^a-z0-9_]/g, '_').slice(0, 40);
}
