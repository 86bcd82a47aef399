// Real upstreams for the tests of issue 33, and a browser over HTTP that keeps cookies per host (as a
// browser does: cookies ignore ports, so the two Signets live on 127.0.0.1 and localhost).
// - node-oidc-provider (the reference OpenID Provider) with its development login and consent pages, and
//   a hook on its token endpoint that lets a test change the id_token as an attacker in the path would.
// - a second Signet with an `--oidc` application.
// - a server answering GitHub's documented OAuth web flow and REST endpoints (github.com is out of reach).
import assert from 'node:assert/strict';
import { createHash, generateKeyPairSync, randomBytes, type KeyObject } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Provider from 'oidc-provider';
import { SignJWT, decodeJwt, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import * as accounts from '../../../src/accounts/accounts.ts';
import { addProvider } from '../../../src/accounts/upstream/providers.ts';
import * as clients from '../../../src/clients/clients.ts';
import { freePort, startSignet, type RunningSignet } from '../../helpers/live-server.ts';
import type { TestDatabase } from '../../helpers/databases.ts';
import { testApp } from '../../helpers/app.ts';
import { cookieHeader, rememberCookies } from '../../helpers/cookie-jar.ts';

// ---- a browser over HTTP ----

export class HostBrowser {
  /** cookies by host name (not port), as a browser keeps them */
  readonly jars = new Map<string, Map<string, string>>();

  private jar(url: URL): Map<string, string> {
    let jar = this.jars.get(url.hostname);
    if (!jar) this.jars.set(url.hostname, (jar = new Map()));
    return jar;
  }

  private remember(url: URL, response: Response): void {
    rememberCookies(this.jar(url), response);
  }

  private headers(url: URL): Record<string, string> {
    return cookieHeader(this.jar(url));
  }

  async get(target: string | URL): Promise<Response> {
    const url = new URL(target);
    const response = await fetch(url, { redirect: 'manual', headers: { accept: 'text/html', ...this.headers(url) } });
    this.remember(url, response);
    return response;
  }

  async post(target: string | URL, form: Record<string, string | string[]>): Promise<Response> {
    const url = new URL(target);
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const one of [v].flat()) body.append(k, one);
    const response = await fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: url.origin, accept: 'text/html', ...this.headers(url) }, body });
    this.remember(url, response);
    return response;
  }

  /** Follows redirects (on any host) until a page is shown or `stopAt` says the browser arrived. */
  async follow(start: string | URL, stopAt: (url: URL) => boolean = () => false): Promise<{ url: URL; page: string | undefined; status: number }> {
    let url = new URL(start);
    for (let hops = 0; hops < 15; hops += 1) {
      if (stopAt(url)) return { url, page: undefined, status: 0 };
      const response = await this.get(url);
      if (response.status >= 300 && response.status < 400) {
        url = new URL(response.headers.get('location')!, url);
        continue;
      }
      return { url, page: await response.text(), status: response.status };
    }
    throw new Error('too many redirects');
  }

  /** Posts a page's form (found by its action) and follows where it leads. */
  async submit(at: { url: URL; page: string | undefined }, action: RegExp, fields: Record<string, string | string[]>, stopAt?: (url: URL) => boolean) {
    assert.ok(at.page, `a page at ${at.url.href}`);
    const form = [...at.page.matchAll(/<form[^>]*action="([^"]*)"[^>]*>([\s\S]*?)<\/form>/g)].find((m) => action.test(m[1]!.replaceAll('&amp;', '&')));
    assert.ok(form, `a form posting to ${action} on ${at.url.pathname}: ${at.page.slice(0, 400)}`);
    const csrf = /name="_csrf" value="([^"]+)"/.exec(form[2]!)?.[1];
    const hidden = Object.fromEntries([...form[2]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"/g)].map((m) => [m[1]!, m[2]!.replaceAll('&amp;', '&')]));
    const response = await this.post(new URL(form[1]!.replaceAll('&amp;', '&'), at.url), { ...hidden, ...(csrf ? { _csrf: csrf } : {}), ...fields });
    if (response.status >= 300 && response.status < 400) return this.follow(new URL(response.headers.get('location')!, at.url), stopAt);
    return { url: at.url, page: await response.text(), status: response.status };
  }
}

/** The href of a link whose text is `name` (the accessible name of "Sign in with NAME"). */
export function linkNamed(page: string, name: string): string {
  const link = [...page.matchAll(/<a [^>]*href="([^"]+)"[^>]*>([^<]+)<\/a>/g)].find((m) => m[2]!.trim() === name);
  assert.ok(link, `a link named "${name}"`);
  return link[1]!.replaceAll('&amp;', '&');
}

// ---- the downstream Signet with an application ----

export type Downstream = RunningSignet & { clientId: string; clientSecret: string; redirectUri: string };

export async function startDownstream(database: TestDatabase, env: Record<string, string> = {}): Promise<Downstream> {
  const signet = await startSignet(database, { SIGNET_SIGNUP: 'open', ...env });
  const redirectUri = 'http://127.0.0.1:9/app/callback';
  const { client, clientSecret } = await clients.registerClient(database.db, signet.clock, signet.deps.keys.tokenHash, { name: 'Downstream App', redirectUris: [redirectUri], scopes: ['openid', 'profile', 'email'], oidc: true });
  return { ...signet, clientId: client.clientId, clientSecret: clientSecret!, redirectUri };
}

/** A new authorization request at the downstream (OpenID, PKCE S256); `verifier` for the token request. */
export function authorizeUrl(down: Downstream, extra: Record<string, string> = {}): { url: URL; verifier: string; nonce: string } {
  const verifier = randomBytes(32).toString('base64url');
  const nonce = randomBytes(8).toString('hex');
  const url = new URL('/oauth/authorize', down.baseUrl);
  for (const [k, v] of Object.entries({ response_type: 'code', client_id: down.clientId, redirect_uri: down.redirectUri, scope: 'openid profile email', state: 'app-state', nonce, code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256', ...extra })) url.searchParams.set(k, v);
  return { url, verifier, nonce };
}

/** Redeems the application's code at the downstream; returns the id_token's claims. */
export async function redeem(down: Downstream, callback: URL, verifier: string): Promise<Record<string, unknown>> {
  const code = callback.searchParams.get('code');
  assert.ok(code, `the application got a code: ${callback.href}`);
  const response = await fetch(new URL('/oauth/token', down.baseUrl), {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'authorization_code', code, redirect_uri: down.redirectUri, client_id: down.clientId, client_secret: down.clientSecret, code_verifier: verifier }),
  });
  const body = (await response.json()) as { id_token?: string };
  assert.equal(response.status, 200, JSON.stringify(body));
  assert.ok(body.id_token);
  return decodeJwt(body.id_token);
}

export const isAppCallback = (down: Downstream) => (url: URL) => url.href.startsWith(down.redirectUri);

// ---- node-oidc-provider ----

export type UpstreamPerson = { email: string; email_verified: boolean; name: string };

export type NodeOidcUpstream = {
  issuer: string;
  clientId: string;
  clientSecret: string;
  people: Map<string, UpstreamPerson>;
  /** changes the id_token of the next token responses (an attacker in the path); undefined: none */
  tamper: ((idToken: string) => Promise<string>) | undefined;
  /** signs claims with the upstream's own key (kid `up-1`) */
  signAsUpstream(claims: Record<string, unknown>): Promise<string>;
  /** signs with another key under the same kid (not in the upstream's JWKS) */
  signWithOtherKey(claims: Record<string, unknown>): Promise<string>;
  close(): Promise<void>;
};

async function signer(privateKey: KeyObject, claims: Record<string, unknown>): Promise<string> {
  const jwk = privateKey.export({ format: 'jwk' }) as JWK;
  return new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: 'up-1', typ: 'JWT' }).sign(await importJWK(jwk, 'RS256'));
}

/** node-oidc-provider on http://localhost:PORT, one confidential client for the downstream's redirect URI. */
export async function startNodeOidcUpstream(redirectUri: string): Promise<NodeOidcUpstream> {
  const port = await freePort();
  const issuer = `http://localhost:${port}`;
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const { privateKey: otherKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const people = new Map<string, UpstreamPerson>();
  const clientId = 'signet-downstream';
  const clientSecret = randomBytes(24).toString('base64url');
  const provider = new Provider(issuer, {
    clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: [redirectUri], grant_types: ['authorization_code'], response_types: ['code'], token_endpoint_auth_method: 'client_secret_basic' }],
    findAccount: async (_ctx, id) => {
      const person = people.get(id);
      return person ? { accountId: id, claims: async () => ({ sub: id, ...person }) } : undefined;
    },
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
    features: { devInteractions: { enabled: true }, userinfo: { enabled: true } },
    jwks: { keys: [{ ...(privateKey.export({ format: 'jwk' }) as JWK), alg: 'RS256', use: 'sig', kid: 'up-1' }] },
    cookies: { keys: [randomBytes(16).toString('hex')] },
  });
  const upstream: NodeOidcUpstream = {
    issuer,
    clientId,
    clientSecret,
    people,
    tamper: undefined,
    signAsUpstream: (claims) => signer(privateKey, claims),
    signWithOtherKey: (claims) => signer(otherKey, claims),
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { id_token?: unknown } | undefined;
    if (ctx.path === '/token' && upstream.tamper && body && typeof body.id_token === 'string') body.id_token = await upstream.tamper(body.id_token);
  });
  const server = http.createServer(provider.callback());
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return upstream;
}

/** The claims of an id_token and its header (for tampering tests). */
export function idTokenParts(idToken: string): { claims: Record<string, unknown>; kid: string | undefined } {
  return { claims: decodeJwt(idToken), kid: decodeProtectedHeader(idToken).kid };
}

/** At node-oidc-provider's development pages: sign in as `login`, then consent. */
export async function passNodeOidcPages(browser: HostBrowser, at: { url: URL; page: string | undefined }, login: string, stopAt: (url: URL) => boolean) {
  let now = await browser.submit(at, /\/interaction\//, { prompt: 'login', login, password: 'any' }, stopAt);
  if (now.page && /name="prompt" value="consent"/.test(now.page)) now = await browser.submit(now, /\/interaction\//, { prompt: 'consent' }, stopAt);
  return now;
}

// ---- a second Signet as the upstream ----

export type SignetUpstream = RunningSignet & { clientId: string; clientSecret: string; issuer: string };

/** A Signet on http://localhost:PORT with an `--oidc` application whose callback is the downstream's. */
export async function startSignetUpstream(database: TestDatabase, redirectUri: string, person: { email: string; password: string; name?: string }): Promise<SignetUpstream> {
  const port = await freePort();
  const baseUrl = `http://localhost:${port}`;
  const running = await testApp(database, { SIGNET_BASE_URL: baseUrl, SIGNET_LOG_LEVEL: 'warn' });
  await running.app.listen({ host: '127.0.0.1', port });
  await accounts.createAccount(database.db, running.clock, { ...person, emailVerified: true });
  const { client, clientSecret } = await clients.registerClient(database.db, running.clock, running.deps.keys.tokenHash, { name: 'Downstream Signet', redirectUris: [redirectUri], scopes: ['openid', 'profile', 'email'], oidc: true });
  return { ...running, baseUrl, altBaseUrl: baseUrl, issuer: baseUrl, clientId: client.clientId, clientSecret: clientSecret!, close: () => running.app.close() };
}

// ---- GitHub's documented shapes ----

/**
 * A server answering as GitHub does, following its documentation:
 * - "Authorizing OAuth apps" (docs.github.com/en/apps/oauth-apps/building-oauth-apps/authorizing-oauth-apps):
 *   GET /login/oauth/authorize (client_id, redirect_uri, scope, state, code_challenge S256) redirects back
 *   with `code` and `state` once the person clicks Authorize; POST /login/oauth/access_token (client_id,
 *   client_secret, code, redirect_uri, code_verifier) answers `{"access_token","token_type":"bearer","scope"}`
 *   with `Accept: application/json`, and errors such as `bad_verification_code` with status 200;
 * - "REST API endpoints for users" (docs.github.com/en/rest/users/users#get-the-authenticated-user):
 *   GET /user → `{"login","id","name","email",…}`;
 * - "REST API endpoints for emails" (docs.github.com/en/rest/users/emails#list-email-addresses-for-the-authenticated-user):
 *   GET /user/emails → `[{"email","primary","verified","visibility"}]`.
 * Served under a GitHub Enterprise Server's layout (web at the root, REST under /api/v3).
 */
export type GithubLike = {
  url: string;
  clientId: string;
  clientSecret: string;
  user: { id: number; login: string; name: string | null; email: string | null };
  emails: Array<{ email: string; primary: boolean; verified: boolean; visibility: string | null }>;
  close(): Promise<void>;
};

export async function startGithubLike(): Promise<GithubLike> {
  const clientId = 'Iv1.' + randomBytes(8).toString('hex');
  const clientSecret = randomBytes(20).toString('hex');
  const codes = new Map<string, { redirectUri: string; challenge: string | null }>();
  const tokens = new Set<string>();
  const gh: GithubLike = {
    url: '',
    clientId,
    clientSecret,
    user: { id: 583231, login: 'octocat', name: 'The Octocat', email: null },
    emails: [{ email: 'octocat@github.example', primary: true, verified: true, visibility: 'private' }],
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  const json = (res: http.ServerResponse, status: number, body: unknown) => res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' }).end(JSON.stringify(body));
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', gh.url);
    if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
      if (url.searchParams.get('client_id') !== clientId) return json(res, 404, { message: 'Not Found' });
      const code = randomBytes(10).toString('hex');
      codes.set(code, { redirectUri: url.searchParams.get('redirect_uri') ?? '', challenge: url.searchParams.get('code_challenge') });
      const back = new URL(url.searchParams.get('redirect_uri')!);
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      return res.writeHead(302, { location: back.href }).end();
    }
    if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
      let raw = '';
      req.on('data', (d: Buffer) => (raw += d.toString()));
      req.on('end', () => {
        const form = new URLSearchParams(raw);
        const basic = /^Basic (.+)$/.exec(req.headers.authorization ?? '')?.[1];
        const [id, secret] = basic ? Buffer.from(basic, 'base64').toString().split(':').map(decodeURIComponent) : [form.get('client_id'), form.get('client_secret')];
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        if (id !== clientId || secret !== clientSecret) return json(res, 200, { error: 'incorrect_client_credentials', error_description: 'The client_id and/or client_secret passed are incorrect.' });
        const verifierOk = grant && (grant.challenge === null || createHash('sha256').update(form.get('code_verifier') ?? '').digest('base64url') === grant.challenge);
        if (!grant || grant.redirectUri !== form.get('redirect_uri') || !verifierOk) return json(res, 200, { error: 'bad_verification_code', error_description: 'The code passed is incorrect or expired.' });
        const token = 'gho_' + randomBytes(18).toString('hex');
        tokens.add(token);
        if (!(req.headers.accept ?? '').includes('application/json')) return res.writeHead(200, { 'content-type': 'application/x-www-form-urlencoded' }).end(`access_token=${token}&scope=read%3Auser%2Cuser%3Aemail&token_type=bearer`);
        return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      });
      return;
    }
    if (req.method === 'GET' && (url.pathname === '/api/v3/user' || url.pathname === '/api/v3/user/emails')) {
      const token = /^(?:Bearer|token) (.+)$/i.exec(req.headers.authorization ?? '')?.[1];
      if (!token || !tokens.has(token)) return json(res, 401, { message: 'Requires authentication', documentation_url: 'https://docs.github.com/rest' });
      if (url.pathname === '/api/v3/user') return json(res, 200, { ...gh.user, node_id: 'MDQ6VXNlcjU4MzIzMQ==', avatar_url: 'https://avatars.github.example/u/583231', type: 'User' });
      return json(res, 200, gh.emails);
    }
    return json(res, 404, { message: 'Not Found' });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  gh.url = `http://localhost:${port}`;
  return gh;
}

/** Adds a provider to the downstream as `signet idp add` would. */
export function addUpstream(down: RunningSignet, input: Parameters<typeof addProvider>[3]) {
  return addProvider(down.deps.db, down.clock, down.deps.keys.upstreamSecret, input);
}

export { accounts };
export type { AddressInfo };
