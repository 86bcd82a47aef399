// Helpers of the OpenID Connect tests: an OpenID application on the flow's app, token calls, and an
// id_token checked the way a relying party checks it (signature with the JWKS key of its kid).
import assert from 'node:assert/strict';
import { after, before } from 'node:test';
import { createPublicKey, verify, type JsonWebKey } from 'node:crypto';
import * as clients from '../../../src/clients/clients.ts';
import { sqliteDatabase, type TestDatabase } from '../../helpers/databases.ts';
import { flowSetup, REDIRECT_URI, TinyBrowser, type Flow } from '../authorize-support.ts';

export const LOGGED_OUT = 'https://app.example/logged-out';

/** The flow of an application registered with --oidc (and its secret). */
export async function oidcFlowSetup(database: TestDatabase, env: Record<string, string> = {}, extra: Partial<clients.ClientInput> = {}): Promise<Flow> {
  const flow = await flowSetup(database, env);
  const { client, clientSecret } = await clients.registerClient(database.db, flow.clock, flow.deps.keys.tokenHash, {
    name: 'OIDC App',
    redirectUris: [REDIRECT_URI],
    scopes: ['openid', 'profile', 'email', 'phone'],
    oidc: true,
    postLogoutRedirectUris: [LOGGED_OUT],
    ...extra,
  });
  return {
    ...flow,
    clientId: client.clientId,
    clientSecret: clientSecret!,
    authorizePath(params = {}) {
      return `/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: REDIRECT_URI, scope: 'openid profile', ...params }).toString()}`;
    },
  };
}

/**
 * The shared fixture of the OpenID Connect tests (issue 36: one, not a copy per file): inside a
 * `describe`, a new SQLite database and an --oidc application's flow made before its tests and closed
 * after them. Read `fixture.flow` and `fixture.database` inside the tests.
 */
export function oidcFlowOnSqlite(env: Record<string, string> = {}, extra: Partial<clients.ClientInput> = {}): { readonly flow: Flow; readonly database: TestDatabase } {
  let database: (TestDatabase & { dispose(): Promise<void> }) | undefined;
  let flow: Flow | undefined;
  before(async () => {
    database = await sqliteDatabase();
    flow = await oidcFlowSetup(database, env, extra);
  });
  after(async () => {
    await flow?.app.close();
    await database?.dispose();
  });
  return {
    get flow() {
      if (!flow) throw new Error('the OIDC fixture is read before its before() hook ran');
      return flow;
    },
    get database() {
      if (!database) throw new Error('the OIDC fixture is read before its before() hook ran');
      return database;
    },
  };
}

export type TokenAnswer = { access_token: string; refresh_token: string; id_token?: string; scope: string };

export async function exchange(flow: Flow, callback: URL): Promise<TokenAnswer> {
  const res = await flow.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { host: flow.host, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'authorization_code', code: callback.searchParams.get('code')!, client_id: flow.clientId, client_secret: flow.clientSecret, redirect_uri: REDIRECT_URI }).toString(),
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<TokenAnswer>();
}

export async function refresh(flow: Flow, refreshToken: string): Promise<TokenAnswer> {
  const res = await flow.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { host: flow.host, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: flow.clientId, client_secret: flow.clientSecret }).toString(),
  });
  assert.equal(res.statusCode, 200, res.body);
  return res.json<TokenAnswer>();
}

export type IdTokenParts = { header: { alg: string; kid: string; typ?: string }; claims: Record<string, unknown> & { sub: string; iat: number; exp: number; auth_time: number } };

export function decode(idToken: string): IdTokenParts {
  const [h, p] = idToken.split('.') as [string, string];
  return { header: JSON.parse(Buffer.from(h, 'base64url').toString('utf8')), claims: JSON.parse(Buffer.from(p, 'base64url').toString('utf8')) };
}

/** Whether the id_token's signature checks with the key of its kid in the JWKS this app serves now. */
export async function signatureVerifies(flow: Pick<Flow, 'app' | 'host'>, idToken: string): Promise<boolean> {
  const { header } = decode(idToken);
  const jwks = (await flow.app.inject({ url: '/oauth/jwks', headers: { host: flow.host } })).json<{ keys: Array<JsonWebKey & { kid: string; alg: string }> }>();
  const jwk = jwks.keys.find((k) => k.kid === header.kid);
  if (!jwk || jwk.alg !== header.alg) return false;
  const [h, p, s] = idToken.split('.') as [string, string, string];
  const key = createPublicKey({ key: jwk, format: 'jwk' });
  return verify('sha256', Buffer.from(`${h}.${p}`), header.alg === 'ES256' ? { key, dsaEncoding: 'ieee-p1363' } : key, Buffer.from(s, 'base64url'));
}

/**
 * The interactive flow whatever the person's state: signs in when the sign-in page asks, allows when the
 * consent page asks (a grant from an earlier test skips it). Returns the callback URL.
 */
export async function completeFlow(browser: TinyBrowser, params: Record<string, string> = {}): Promise<URL> {
  const id = await browser.authorize(params);
  const signin = await browser.get(`/signin?request=${id}`);
  if (signin.statusCode === 200) assert.equal((await browser.signIn(id)).statusCode, 303);
  const consent = await browser.get(`/consent?request=${id}`);
  if (consent.statusCode === 302) return new URL(String(consent.headers.location));
  const allowed = await browser.consent(id, 'allow');
  assert.equal(allowed.statusCode, 303, allowed.body);
  return new URL(String(allowed.headers.location));
}
