// Interoperability: OAuth client libraries nobody here wrote (openid-client, oauth4webapi) sign a
// person in through real Chromium on Signet's pages, then exchange, refresh, read userinfo and revoke.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import * as oauth from 'oauth4webapi';
import * as client from 'openid-client';
import type { Browser } from 'playwright-core';
import { createAccount } from '../../src/accounts/accounts.ts';
import { registerClient } from '../../src/clients/clients.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { startCallbackServer, type CallbackServer } from '../helpers/callback-server.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';
import { authorizeInBrowser } from './support.ts';

const PERSON = { login: 'ada@example.com', password: 'analytical-engine' };

describe('interoperability with openid-client and oauth4webapi', { skip: chromiumSkip() }, () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let server: RunningSignet;
  let browser: Browser;
  let callback: CallbackServer;
  let sub: string;
  let confidential: { clientId: string; clientSecret: string };
  let publicClientId: string;

  before(async () => {
    database = await sqliteDatabase();
    server = await startSignet(database);
    callback = await startCallbackServer();
    browser = await launchChromium();
    const { db, clock, keys } = server.deps;
    sub = (await createAccount(db, clock, { email: PERSON.login, name: 'Ada Lovelace', emailVerified: true, password: PERSON.password })).sub;
    const registered = await registerClient(db, clock, keys.tokenHash, { name: 'Confidential App', redirectUris: [callback.url], scopes: ['openid', 'profile', 'email'] });
    confidential = { clientId: registered.client.clientId, clientSecret: registered.clientSecret! };
    publicClientId = (await registerClient(db, clock, keys.tokenHash, { name: 'Public App', redirectUris: [callback.url], scopes: ['openid', 'profile'], isPublic: true })).client.clientId;
  });

  after(async () => {
    await browser?.close();
    await callback?.close();
    await server?.close();
    await database?.dispose();
  });

  const byHand = (clientId: string, auth: client.ClientAuth, metadata: Partial<client.ClientMetadata> = {}) => {
    const config = new client.Configuration(
      {
        issuer: server.baseUrl,
        authorization_endpoint: `${server.baseUrl}/oauth/authorize`,
        token_endpoint: `${server.baseUrl}/oauth/token`,
        userinfo_endpoint: `${server.baseUrl}/oauth/userinfo`,
        revocation_endpoint: `${server.baseUrl}/oauth/revoke`,
      },
      clientId,
      metadata,
      auth,
    );
    client.allowInsecureRequests(config);
    return config;
  };

  test('openid-client, configured by hand: code + PKCE S256 (public client), then userinfo', async () => {
    const config = byHand(publicClientId, client.None());
    const verifier = client.randomPKCECodeVerifier();
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: callback.url,
      scope: 'openid profile',
      code_challenge: await client.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      state,
    });
    const landed = await authorizeInBrowser(browser, url, callback, PERSON);
    assert.equal(landed.searchParams.get('code')?.length, 44);
    const tokens = await client.authorizationCodeGrant(config, landed, { pkceCodeVerifier: verifier, expectedState: state });
    assert.equal(tokens.token_type.toLowerCase(), 'bearer');
    assert.equal(tokens.expires_in, 7200);
    assert.equal(tokens.access_token.length, 44);
    assert.ok(tokens.refresh_token);
    const profile = await client.fetchUserInfo(config, tokens.access_token, sub);
    assert.equal(profile.sub, sub);
    assert.equal(profile.name, 'Ada Lovelace');
    assert.equal(profile.picture, '', 'spec: picture is "Empty string if unset"');
    assert.equal(profile.email, undefined, 'the email scope was not requested');
  });

  test('openid-client through discovery: code + client_secret_post, refresh (rotation), userinfo, revoke', async () => {
    const config = await client.discovery(new URL(server.baseUrl), confidential.clientId, confidential.clientSecret, client.ClientSecretPost(confidential.clientSecret), {
      execute: [client.allowInsecureRequests],
    });
    const state = client.randomState();
    const url = client.buildAuthorizationUrl(config, { redirect_uri: callback.url, scope: 'openid profile email', state });
    const landed = await authorizeInBrowser(browser, url, callback, PERSON);
    const tokens = await client.authorizationCodeGrant(config, landed, { expectedState: state });
    assert.equal(tokens.scope, 'openid profile email');

    const refreshed = await client.refreshTokenGrant(config, tokens.refresh_token!);
    assert.notEqual(refreshed.refresh_token, tokens.refresh_token, 'spec: a new refresh token is issued on every token call');
    assert.notEqual(refreshed.access_token, tokens.access_token);
    await assert.rejects(client.refreshTokenGrant(config, tokens.refresh_token!), (e: unknown) => e instanceof client.ResponseBodyError && e.error === 'invalid_grant');
    // replay revoked the whole family, the new tokens included
    await assert.rejects(client.fetchUserInfo(config, refreshed.access_token, sub));

    const second = await client.authorizationCodeGrant(
      config,
      await authorizeInBrowser(browser, client.buildAuthorizationUrl(config, { redirect_uri: callback.url, scope: 'openid profile email', state }), callback, PERSON),
      { expectedState: state },
    );
    const profile = await client.fetchUserInfo(config, second.access_token, sub);
    assert.equal(profile.email, PERSON.login);
    assert.equal(profile.email_verified, true);
    await client.tokenRevocation(config, second.access_token);
    await assert.rejects(client.fetchUserInfo(config, second.access_token, sub));
    await client.tokenRevocation(config, second.refresh_token!, { token_type_hint: 'refresh_token' });
    await assert.rejects(client.refreshTokenGrant(config, second.refresh_token!), (e: unknown) => e instanceof client.ResponseBodyError && e.error === 'invalid_grant');
  });

  test('oauth4webapi through discovery: code + PKCE S256 with client_secret_post, refresh, userinfo, revoke', async () => {
    const issuer = new URL(server.baseUrl);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { [oauth.allowInsecureRequests]: true }));
    assert.deepEqual(as.code_challenge_methods_supported, ['plain', 'S256']);
    const c: oauth.Client = { client_id: confidential.clientId };
    const auth = oauth.ClientSecretPost(confidential.clientSecret);
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: c.client_id,
      redirect_uri: callback.url,
      response_type: 'code',
      scope: 'openid email',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    }).toString();
    const landed = await authorizeInBrowser(browser, url, callback, PERSON);
    const params = oauth.validateAuthResponse(as, c, landed, state);
    const insecure = { [oauth.allowInsecureRequests]: true };
    const tokens = await oauth.processAuthorizationCodeResponse(as, c, await oauth.authorizationCodeGrantRequest(as, c, auth, params, callback.url, verifier, insecure));
    assert.equal(tokens.scope, 'openid email');
    const refreshed = await oauth.processRefreshTokenResponse(as, c, await oauth.refreshTokenGrantRequest(as, c, auth, tokens.refresh_token!, insecure));
    const profile = await oauth.processUserInfoResponse(as, c, sub, await oauth.userInfoRequest(as, c, refreshed.access_token, insecure));
    assert.deepEqual(profile, { sub, email: PERSON.login, email_verified: true });
    await oauth.processRevocationResponse(await oauth.revocationRequest(as, c, auth, refreshed.access_token, insecure));
    const after = await oauth.userInfoRequest(as, c, refreshed.access_token, insecure);
    assert.equal(after.status, 401);
    assert.match(after.headers.get('www-authenticate') ?? '', /^Bearer/);
  });

  test('oauth4webapi configured by hand: a PKCE verifier mismatch is refused with "code_verifier 验证失败"', async () => {
    const as: oauth.AuthorizationServer = {
      issuer: server.baseUrl,
      authorization_endpoint: `${server.baseUrl}/oauth/authorize`,
      token_endpoint: `${server.baseUrl}/oauth/token`,
    };
    const c: oauth.Client = { client_id: publicClientId };
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({
      client_id: c.client_id,
      redirect_uri: callback.url,
      scope: 'openid profile',
      state,
      code_challenge: await oauth.calculatePKCECodeChallenge(oauth.generateRandomCodeVerifier()),
      code_challenge_method: 'S256',
    }).toString();
    const params = oauth.validateAuthResponse(as, c, await authorizeInBrowser(browser, url, callback, PERSON), state);
    const response = await oauth.authorizationCodeGrantRequest(as, c, oauth.None(), params, callback.url, oauth.generateRandomCodeVerifier(), { [oauth.allowInsecureRequests]: true });
    await assert.rejects(oauth.processAuthorizationCodeResponse(as, c, response), (e: unknown) => {
      return e instanceof oauth.ResponseBodyError && e.error === 'invalid_grant' && e.error_description === 'code_verifier 验证失败';
    });
  });
});
