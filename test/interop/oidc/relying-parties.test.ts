// issue 28: OpenID Connect with relying-party libraries nobody here wrote — openid-client through
// discovery, oauth4webapi with requireIdToken, Python's Authlib — against a listening Signet; the person's
// browser is a direct HTTP session (http-browser.ts). And the spec's rule for everyone else: an
// application without --oidc never gets an id_token.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import { createAccount } from '../../../src/accounts/accounts.ts';
import { registerClient } from '../../../src/clients/clients.ts';
import { issueTokenPair } from '../../../src/oauth/token/issue-tokens.ts';
import { sqliteDatabase } from '../../helpers/databases.ts';
import { startSignet, type RunningSignet } from '../../helpers/live-server.ts';
import { skipUnlessAvailable } from '../../helpers/services.ts';
import { HttpBrowser } from './http-browser.ts';

const PERSON = { login: 'grace@example.com', password: 'compiler-1952-flowmatic' };
const CALLBACK = 'https://rp.example/callback';
const LOGGED_OUT = 'https://rp.example/logged-out';

function claimsOf(idToken: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(idToken.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}
function headerOf(idToken: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(idToken.split('.')[0]!, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** Authlib is there when Debian's python3-authlib is installed: else a printed skip (a failure in CI). */
function authlibUnavailableReason(): string | undefined {
  const probe = spawnSync('/usr/bin/python3', ['-c', 'import authlib'], { encoding: 'utf8' });
  return probe.status === 0 ? undefined : `/usr/bin/python3 cannot import authlib (install Debian's python3-authlib): ${(probe.stderr || probe.error?.message || '').trim().split('\n').pop()}`;
}

describe('OpenID Connect with real relying-party libraries', () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let server: RunningSignet;
  let sub: string;
  let es256: { clientId: string; clientSecret: string };
  let rs256: { clientId: string; clientSecret: string };
  let plainOAuth: { clientId: string; clientSecret: string };

  before(async () => {
    database = await sqliteDatabase();
    server = await startSignet(database);
    const { db, clock, keys } = server.deps;
    sub = (await createAccount(db, clock, { email: PERSON.login, name: 'Grace Hopper', emailVerified: true, password: PERSON.password })).sub;
    const register = async (name: string, extra: Parameters<typeof registerClient>[3] extends infer I ? Partial<I> : never) => {
      const r = await registerClient(db, clock, keys.tokenHash, { name, redirectUris: [CALLBACK], scopes: ['openid', 'profile', 'email'], ...extra });
      return { clientId: r.client.clientId, clientSecret: r.clientSecret! };
    };
    es256 = await register('OIDC App', { oidc: true, postLogoutRedirectUris: [LOGGED_OUT] });
    rs256 = await register('RS256 App', { oidc: true, idTokenAlg: 'RS256' });
    plainOAuth = await register('Plain OAuth App', {});
  });

  after(async () => {
    await server?.close();
    await database?.dispose();
  });

  const discovered = (app: { clientId: string; clientSecret: string }, metadata: Partial<client.ClientMetadata> = {}) =>
    client.discovery(new URL(server.baseUrl), app.clientId, { client_secret: app.clientSecret, ...metadata }, client.ClientSecretPost(app.clientSecret), {
      execute: [client.allowInsecureRequests, client.enableNonRepudiationChecks],
    });

  test('openid-client through discovery: the id_token verifies (signature from jwks_uri, iss, aud, exp, nonce), and a refresh brings a fresh one', async () => {
    const config = await discovered(es256, { id_token_signed_response_alg: 'ES256' });
    const nonce = client.randomNonce();
    const state = client.randomState();
    const browser = new HttpBrowser();
    const landed = await browser.authorize(client.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: 'openid profile', state, nonce }), PERSON);
    // enableNonRepudiationChecks: openid-client checks the JWS signature with the key from jwks_uri.
    const tokens = await client.authorizationCodeGrant(config, landed, { expectedState: state, expectedNonce: nonce, idTokenExpected: true });
    const claims = tokens.claims()!;
    assert.equal(claims.iss, server.baseUrl, 'iss: the host that was asked, as discovery says');
    assert.equal(claims.sub, sub);
    assert.equal(claims.aud, es256.clientId);
    assert.equal(claims.nonce, nonce);
    assert.deepEqual(claims.amr, ['pwd']);
    assert.equal(typeof claims.auth_time, 'number');
    assert.equal(typeof claims.sid, 'string');
    assert.equal(claims.exp - claims.iat, 3600);
    assert.equal(headerOf(tokens.id_token!).alg, 'ES256');
    assert.equal(typeof headerOf(tokens.id_token!).kid, 'string');
    assert.equal(claims.email, undefined, 'profile and e-mail claims stay in userinfo');

    // OpenID Connect Core §12.2: a fresh id_token on refresh, same sub and auth_time, no nonce.
    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    const again = refreshed.claims()!;
    assert.notEqual(refreshed.id_token, tokens.id_token);
    assert.equal(again.sub, sub);
    assert.equal(again.auth_time, claims.auth_time);
    assert.equal(again.nonce, undefined);
    assert.equal(again.sid, claims.sid);
  });

  test('openid-client (issue 36): a chain from before migration 0011 gets an id_token on refresh that the library accepts (signature, iss, aud, exp)', async () => {
    const config = await discovered(es256, { id_token_signed_response_alg: 'ES256' });
    const { db, clock, keys } = server.deps;
    const old = await issueTokenPair(db, keys.tokenHash, clock(), { clientId: es256.clientId, sub, scope: 'openid profile', expiresAt: clock() + 30 * 24 * 3600 * 1000 });
    const refreshed = await client.refreshTokenGrant(config, old.refresh_token);
    const claims = refreshed.claims();
    assert.ok(claims, 'an id_token came with the refresh');
    assert.equal(claims.sub, sub);
    assert.equal(claims.iss, server.baseUrl);
    assert.equal(claims.auth_time, undefined, 'the sign-in of an old chain was never recorded: no auth_time');
  });

  test('openid-client (issue 36): claims={"userinfo":{"email":…}} with scope openid — consent asks for email, and fetchUserInfo returns it', async () => {
    const config = await discovered(es256, { id_token_signed_response_alg: 'ES256' });
    const state = client.randomState();
    const nonce = client.randomNonce();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: 'openid', state, nonce, claims: JSON.stringify({ userinfo: { email: { essential: true } } }) });
    const tokens = await client.authorizationCodeGrant(config, await new HttpBrowser().authorize(url, PERSON), { expectedState: state, expectedNonce: nonce });
    assert.equal(tokens.scope, 'openid email');
    const info = await client.fetchUserInfo(config, tokens.access_token, sub);
    assert.equal(info.email, PERSON.login);
    assert.equal(info.name, undefined, 'profile was neither asked for nor granted');
  });

  test('openid-client: an id_token whose nonce differs from the one sent is refused', async () => {
    const config = await discovered(es256, { id_token_signed_response_alg: 'ES256' });
    const state = client.randomState();
    const landed = await new HttpBrowser().authorize(client.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: 'openid', state, nonce: client.randomNonce() }), PERSON);
    await assert.rejects(client.authorizationCodeGrant(config, landed, { expectedState: state, expectedNonce: client.randomNonce() }), (e: unknown) => /"nonce"/.test(String((e as Error).cause)));
  });

  test('oauth4webapi with requireIdToken: ES256 for the application that asked for it, RS256 for the one registered with --id-token-alg RS256', async () => {
    const issuer = new URL(server.baseUrl);
    const insecure = { [oauth.allowInsecureRequests]: true };
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, insecure));
    for (const [app, alg] of [
      [es256, 'ES256'],
      [rs256, 'RS256'],
    ] as const) {
      const c: oauth.Client = { client_id: app.clientId, id_token_signed_response_alg: alg };
      const nonce = oauth.generateRandomNonce();
      const state = oauth.generateRandomState();
      const url = new URL(as.authorization_endpoint!);
      url.search = new URLSearchParams({ client_id: c.client_id, redirect_uri: CALLBACK, response_type: 'code', scope: 'openid email', state, nonce }).toString();
      const params = oauth.validateAuthResponse(as, c, await new HttpBrowser().authorize(url, PERSON), state);
      const response = await oauth.authorizationCodeGrantRequest(as, c, oauth.ClientSecretPost(app.clientSecret), params, CALLBACK, oauth.nopkce, insecure);
      const tokens = await oauth.processAuthorizationCodeResponse(as, c, response, { expectedNonce: nonce, requireIdToken: true });
      const claims = oauth.getValidatedIdTokenClaims(tokens)!;
      assert.equal(claims.sub, sub);
      assert.equal(claims.aud, app.clientId);
      // the signature, with the key from jwks_uri
      await oauth.validateApplicationLevelSignature(as, response, insecure);
      assert.equal(headerOf(tokens.id_token!).alg, alg);
    }
  });

  test("Authlib's parse_id_token verifies the id_token with the JWKS (signature, iss, aud, exp, nonce, at_hash); a changed token is refused", { skip: skipUnlessAvailable('Authlib (python3-authlib)', authlibUnavailableReason()) }, async () => {
    const config = await discovered(es256, { id_token_signed_response_alg: 'ES256' });
    const nonce = client.randomNonce();
    const state = client.randomState();
    const landed = await new HttpBrowser().authorize(client.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: 'openid profile', state, nonce }), PERSON);
    const tokens = await client.authorizationCodeGrant(config, landed, { expectedState: state, expectedNonce: nonce });
    const script = fileURLToPath(new URL('./authlib_parse_id_token.py', import.meta.url));
    // Not spawnSync: the Python process fetches discovery and the JWKS from this very process's server.
    const run = (token: object, expectedNonce: string) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn('/usr/bin/python3', [script, `${server.baseUrl}/.well-known/openid-configuration`, es256.clientId, expectedNonce]);
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
        child.on('error', reject);
        child.on('close', (status) => resolve({ status, stdout, stderr }));
        child.stdin.end(JSON.stringify(token));
      });
    const body = { access_token: tokens.access_token, token_type: 'Bearer', id_token: tokens.id_token };
    const ok = await run(body, nonce);
    assert.equal(ok.status, 0, ok.stderr);
    const claims = JSON.parse(ok.stdout) as Record<string, unknown>;
    assert.equal(claims.sub, sub);
    assert.equal(claims.nonce, nonce);
    assert.equal(claims.iss, server.baseUrl);

    const wrongNonce = await run(body, 'another-nonce');
    assert.equal(wrongNonce.status, 1, 'a nonce other than the one sent is refused');
    assert.match(wrongNonce.stderr, /nonce/);
    const [h, p, s] = tokens.id_token!.split('.') as [string, string, string];
    const changed = Buffer.from(JSON.stringify({ ...claimsOf(tokens.id_token!), sub: 'someone-else' })).toString('base64url');
    const forged = await run({ ...body, id_token: `${h}.${changed}.${s}` }, nonce);
    assert.equal(forged.status, 1, 'a changed id_token fails its signature');
    assert.match(forged.stderr, /BadSignature/);
    const wrongAtHash = await run({ ...body, access_token: 'x'.repeat(44), id_token: `${h}.${p}.${s}` }, nonce);
    assert.equal(wrongAtHash.status, 1, 'at_hash binds the id_token to its access token');
  });

  test('spec rule 5 ("No id_token is issued") holds for an application registered without --oidc: no id_token in the code exchange or on refresh, even when it asks for openid with a nonce', async () => {
    const state = 'plain-state';
    const url = new URL(`${server.baseUrl}/oauth/authorize`);
    url.search = new URLSearchParams({ client_id: plainOAuth.clientId, redirect_uri: CALLBACK, scope: 'openid profile', state, nonce: 'n-0S6_WzA2Mj', prompt: 'login' }).toString();
    const landed = await new HttpBrowser().authorize(url, PERSON);
    const code = landed.searchParams.get('code')!;
    const exchange = await fetch(`${server.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'authorization_code', code, client_id: plainOAuth.clientId, client_secret: plainOAuth.clientSecret, redirect_uri: CALLBACK }),
    });
    const tokens = (await exchange.json()) as Record<string, unknown>;
    assert.deepEqual(Object.keys(tokens).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
    const refresh = await fetch(`${server.baseUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'refresh_token', refresh_token: String(tokens.refresh_token), client_id: plainOAuth.clientId, client_secret: plainOAuth.clientSecret }),
    });
    assert.deepEqual(Object.keys((await refresh.json()) as object).sort(), ['access_token', 'expires_in', 'refresh_token', 'scope', 'token_type']);
  });

  test('an OpenID application that was not granted openid gets no id_token', async () => {
    const config = await discovered(es256, { id_token_signed_response_alg: 'ES256' });
    const state = client.randomState();
    const landed = await new HttpBrowser().authorize(client.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: 'profile', state }), PERSON);
    const tokens = await client.authorizationCodeGrant(config, landed, { expectedState: state });
    assert.equal(tokens.id_token, undefined);
  });

  test('RP-initiated logout: end_session_endpoint with a fresh id_token_hint ends the Signet session and returns to the registered post_logout_redirect_uri with state', async () => {
    const config = await discovered(es256, { id_token_signed_response_alg: 'ES256' });
    const browser = new HttpBrowser();
    const state = client.randomState();
    const landed = await browser.authorize(client.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: 'openid', state }), PERSON);
    const tokens = await client.authorizationCodeGrant(config, landed, { expectedState: state });
    const logoutUrl = client.buildEndSessionUrl(config, { id_token_hint: tokens.id_token!, post_logout_redirect_uri: LOGGED_OUT, state: 'bye-1' });
    assert.equal(logoutUrl.pathname, '/oauth/end-session');
    const back = await browser.follow(logoutUrl, server.baseUrl);
    assert.equal(back.url.href, `${LOGGED_OUT}?state=bye-1`);
    // The session is gone: the next authorization asks for the password again.
    const next = await browser.follow(client.buildAuthorizationUrl(config, { redirect_uri: CALLBACK, scope: 'openid', state }), server.baseUrl);
    assert.equal(next.url.pathname, '/signin');
  });
});
