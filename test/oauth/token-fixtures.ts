// Shared set-up for the token, userinfo, revoke, discovery and race tests: the real app on a test
// database with a manual clock, one person, a confidential and a public application, and helpers that
// speak form-encoded HTTP through app.inject.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import { createAccount, type NewAccount } from '../../src/accounts/accounts.ts';
import { registerClient, type Client } from '../../src/clients/clients.ts';
import { issueAuthorizationCode, type CodeChallengeMethod } from '../../src/oauth/codes.ts';
import { s256Challenge } from '../../src/oauth/pkce.ts';
import { testApp, TEST_BASE_URL, type TestApp } from '../helpers/app.ts';
import type { TestDatabase } from '../helpers/databases.ts';

export const HOST = new URL(TEST_BASE_URL).host;
export const REDIRECT_URI = 'https://app.example/callback?x=1';
export const BROWSER_ORIGIN = 'https://spa.example';
export const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r7wW1gFWFOEjXk';

export type TokenJson = { access_token: string; token_type: string; expires_in: number; refresh_token: string; scope: string };

export type OAuthFixture = TestApp & {
  sub: string;
  confidential: { client: Client; secret: string };
  publicClient: Client;
  /** another confidential application, to show tokens do not cross applications */
  other: { client: Client; secret: string };
  mintCode(options?: { sub?: string; clientId?: string; scope?: string; challenge?: string; method?: CodeChallengeMethod; redirectUri?: string }): Promise<string>;
  post(url: string, form: Record<string, string> | string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  token(form: Record<string, string> | string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  /** a code issued without PKCE, redeemed with the confidential client's secret */
  exchange(scope?: string, sub?: string): Promise<TokenJson>;
  refresh(refreshToken: string, extra?: Record<string, string>): Promise<LightMyRequestResponse>;
  userinfo(authorization?: string, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  revoke(form: Record<string, string>): Promise<LightMyRequestResponse>;
  /** every refresh chain of the person for an application that has tokens (one row per chain: its tokens carry its id and generation; a code not yet redeemed is not counted) */
  tokenRows(clientId: string): Promise<{ chains: Array<{ generation: number; revoked_at: number | null; refresh_revoked_at: number | null }> }>;
};

export async function oauthFixture(database: TestDatabase, env: Record<string, string> = {}, person: Partial<NewAccount> = {}): Promise<OAuthFixture> {
  const t = await testApp(database, env);
  const { db, clock, keys } = t.deps;
  const sub = (await createAccount(db, clock, { email: 'ada@example.com', name: 'Ada Lovelace', emailVerified: true, password: 'analytical-engine', ...person })).sub;
  const scopes = ['openid', 'profile', 'email', 'phone'];
  const conf = await registerClient(db, clock, keys.tokenHash, { name: 'Confidential', redirectUris: [REDIRECT_URI], scopes, allowedOrigins: [BROWSER_ORIGIN] });
  const pub = await registerClient(db, clock, keys.tokenHash, { name: 'Public', redirectUris: [REDIRECT_URI], scopes, isPublic: true, allowedOrigins: [BROWSER_ORIGIN] });
  const oth = await registerClient(db, clock, keys.tokenHash, { name: 'Other', redirectUris: [REDIRECT_URI], scopes });

  const post = (url: string, form: Record<string, string> | string, headers: Record<string, string> = {}) =>
    t.app.inject({
      method: 'POST',
      url,
      headers: { host: HOST, 'content-type': 'application/x-www-form-urlencoded', ...headers },
      payload: typeof form === 'string' ? form : new URLSearchParams(form).toString(),
    });
  const token = (form: Record<string, string> | string, headers?: Record<string, string>) => post('/oauth/token', form, headers);

  const fixture: OAuthFixture = {
    ...t,
    sub,
    confidential: { client: conf.client, secret: conf.clientSecret! },
    publicClient: pub.client,
    other: { client: oth.client, secret: oth.clientSecret! },
    mintCode: (options = {}) =>
      issueAuthorizationCode(db, keys.tokenHash, clock, {
        clientId: options.clientId ?? conf.client.clientId,
        sub: options.sub ?? sub,
        redirectUri: options.redirectUri ?? REDIRECT_URI,
        scope: options.scope ?? 'openid profile email',
        codeChallenge: options.challenge ?? null,
        codeChallengeMethod: options.challenge === undefined ? null : (options.method ?? 'S256'),
      }),
    post,
    token,
    async exchange(scope, forSub) {
      const code = await fixture.mintCode({ ...(scope === undefined ? {} : { scope }), ...(forSub === undefined ? {} : { sub: forSub }) });
      const res = await token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: conf.client.clientId, client_secret: conf.clientSecret! });
      assert.equal(res.statusCode, 200, res.body);
      return res.json<TokenJson>();
    },
    refresh: (refreshToken, extra = {}) =>
      token({ grant_type: 'refresh_token', refresh_token: refreshToken, client_id: conf.client.clientId, client_secret: conf.clientSecret!, ...extra }),
    userinfo: (authorization, headers = {}) =>
      t.app.inject({ method: 'GET', url: '/oauth/userinfo', headers: { host: HOST, ...(authorization === undefined ? {} : { authorization }), ...headers } }),
    revoke: (form) => post('/oauth/revoke', form),
    async tokenRows(clientId) {
      // Generation 0 is a code not redeemed yet: no tokens.
      const chains = await db.selectFrom('token_chains').select(['generation', 'revoked_at', 'refresh_revoked_at']).where('sub', '=', sub).where('client_id', '=', clientId).where('generation', '>', 0).execute();
      return { chains };
    },
  };
  return fixture;
}

export { s256Challenge };

export function assertOAuthError(res: LightMyRequestResponse, status: number, error: string, description?: string): void {
  assert.equal(res.statusCode, status, res.body);
  const body = res.json<{ error: string; error_description: string }>();
  assert.equal(body.error, error, res.body);
  if (description !== undefined) assert.equal(body.error_description, description);
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
  assert.equal(res.headers['cache-control'], 'no-store');
}
