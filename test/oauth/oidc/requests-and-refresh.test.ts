// issue 36: the OpenID request parameters that were ignored — ui_locales picks the page language when
// Signet has it; the claims parameter's userinfo member asks for the scopes of the claims it names — and
// refresh-token chains without a recorded id_token context (from before migration 0011, or begun before
// the application was --oidc) get an id_token on refresh once the application is an OpenID one.
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { describe, test } from 'node:test';
import * as clients from '../../../src/clients/clients.ts';
import { DAY, MINUTE } from '../../../src/config/clock.ts';
import { keyedHash, newOpaqueToken } from '../../../src/oauth/secrets.ts';
import { issueTokenPair } from '../../../src/oauth/token/issue-tokens.ts';
import * as store from '../../../src/oauth/tokens.store.ts';
import { createAccount } from '../../../src/accounts/accounts.ts';
import { EMAIL, PASSWORD, TinyBrowser } from '../authorize-support.ts';
import { completeFlow, decode, exchange, oidcFlowOnSqlite, refresh, signatureVerifies } from './support.ts';

describe('ui_locales (OpenID Connect Core §3.1.2.1)', () => {
  const fixture = oidcFlowOnSqlite();

  const pageLanguage = async (browser: TinyBrowser, params: Record<string, string>) => {
    const id = await browser.authorize({ nonce: 'n', ...params });
    const page = await browser.get(`/signin?request=${id}`);
    assert.equal(page.statusCode, 200, page.body);
    return { language: page.headers['content-language'], body: page.body, id };
  };

  test('"ui_locales — End-User\'s preferred languages … ordered by preference": the first language Signet has decides the sign-in and consent pages', async () => {
    const browser = new TinyBrowser(fixture.flow, undefined, { 'accept-language': 'en' });
    const signin = await pageLanguage(browser, { ui_locales: 'fr-CA zh-Hans en' });
    assert.equal(signin.language, 'zh-CN', 'fr-CA is not there; zh-Hans is zh-CN');
    assert.match(signin.body, /<html lang="zh-CN"/);
    assert.equal((await browser.signIn(signin.id)).statusCode, 303);
    const consent = await browser.get(`/consent?request=${signin.id}`);
    assert.equal(consent.headers['content-language'], 'zh-CN', 'the consent page of that request too');
  });

  test('"an error SHOULD NOT result if some or all of the requested locales are not supported": none we have → the browser\'s Accept-Language', async () => {
    const browser = new TinyBrowser(fixture.flow, undefined, { 'accept-language': 'zh-CN,zh;q=0.9' });
    assert.equal((await pageLanguage(browser, { ui_locales: 'zh-CN' })).language, 'zh-CN');
    // A later request without ui_locales forgets the earlier one's language.
    const english = new TinyBrowser(fixture.flow, undefined, { 'accept-language': 'en' });
    assert.equal((await pageLanguage(english, { ui_locales: 'zh' })).language, 'zh-CN');
    assert.equal((await pageLanguage(english, {})).language, 'en', 'no ui_locales: Accept-Language again');
    assert.equal((await pageLanguage(english, { ui_locales: 'fr de' })).language, 'en');
  });

  test('discovery says which ui_locales it has: ui_locales_supported ["en", "zh-CN"]', async () => {
    const doc = (await fixture.flow.app.inject({ url: '/.well-known/openid-configuration', headers: { host: fixture.flow.host } })).json<{ ui_locales_supported: string[] }>();
    assert.deepEqual(doc.ui_locales_supported, ['en', 'zh-CN']);
  });

  test('the person\'s own choice on the language switch wins over ui_locales', async () => {
    const browser = new TinyBrowser(fixture.flow, undefined, { 'accept-language': 'en' });
    const first = await pageLanguage(browser, { ui_locales: 'zh-CN' });
    const csrf = /name="_csrf" value="([^"]+)"/.exec(first.body)![1]!;
    assert.equal((await browser.post('/language', { _csrf: csrf, lang: 'en', return: `/signin?request=${first.id}` })).statusCode, 303);
    assert.equal((await pageLanguage(browser, { ui_locales: 'zh-CN' })).language, 'en');
  });
});

describe('the claims parameter\'s userinfo member (OpenID Connect Core §5.5)', () => {
  const fixture = oidcFlowOnSqlite({}, { scopes: ['openid', 'profile', 'email'] });

  const userinfo = async (accessToken: string) => {
    const res = await fixture.flow.app.inject({ url: '/oauth/userinfo', headers: { host: fixture.flow.host, authorization: `Bearer ${accessToken}` } });
    assert.equal(res.statusCode, 200, res.body);
    return res.json<Record<string, unknown>>();
  };

  test('"the listed Claims are being requested to be added to any Claims that are being requested using scope values": email asked in userinfo with scope openid → consent asks for email, and userinfo returns it once allowed', async () => {
    const browser = new TinyBrowser(fixture.flow);
    const claims = JSON.stringify({ userinfo: { email: { essential: true } } });
    const id = await browser.authorize({ scope: 'openid', claims, nonce: 'n' });
    assert.equal((await browser.signIn(id)).statusCode, 303);
    const page = await browser.get(`/consent?request=${id}`);
    assert.match(page.body, /name="scope" value="email"/, 'the consent page asks for the scope that releases the claim');
    const allowed = await browser.consent(id, 'allow');
    const tokens = await exchange(fixture.flow, new URL(String(allowed.headers.location)));
    assert.equal(tokens.scope, 'openid email', 'the granted scope says what was released');
    const answer = await userinfo(tokens.access_token);
    assert.equal(answer.email, EMAIL);
    assert.equal(answer.email_verified, false);
    assert.equal('name' in answer, false, 'nothing beyond what was asked and granted');
    assert.equal('email' in decode(tokens.id_token!).claims, false, 'the userinfo member puts nothing in the id_token');
  });

  test('"within the granted scopes\' rules": unticking the scope on the consent page keeps the claim out of userinfo', async () => {
    // Another person: the first test's grant would skip the consent page.
    await createAccount(fixture.database.db, fixture.flow.clock, { email: 'second@example.com', password: PASSWORD });
    const browser = new TinyBrowser(fixture.flow);
    const id = await browser.authorize({ scope: 'openid', claims: JSON.stringify({ userinfo: { email: null } }), nonce: 'n' });
    assert.equal((await browser.signIn(id, 'second@example.com')).statusCode, 303);
    const denied = await browser.consent(id, 'allow', ['openid']);
    const tokens = await exchange(fixture.flow, new URL(String(denied.headers.location)));
    assert.equal(tokens.scope, 'openid');
    assert.deepEqual(Object.keys(await userinfo(tokens.access_token)), ['sub']);
  });

  test('a claim whose scope the application is not registered for is simply not returned (no error): phone_number for an application without phone', async () => {
    const callback = await completeFlow(new TinyBrowser(fixture.flow), { scope: 'openid', claims: JSON.stringify({ userinfo: { phone_number: null } }), nonce: 'n' });
    assert.equal(callback.searchParams.get('error'), null);
    const tokens = await exchange(fixture.flow, callback);
    assert.equal(tokens.scope, 'openid');
    assert.equal('phone_number' in (await userinfo(tokens.access_token)), false);
  });

  test('a malformed claims parameter is invalid_request with a description that says what to send', async () => {
    const res = await fixture.flow.app.inject({ url: fixture.flow.authorizePath({ claims: '{userinfo:' }), headers: { host: fixture.flow.host } });
    assert.equal(res.statusCode, 400);
    assert.equal(res.json<{ error: string }>().error, 'invalid_request');
    assert.match(res.json<{ error_description: string }>().error_description, /JSON object/);
  });
});

describe('refresh of a chain without a recorded id_token context (issue 36)', () => {
  const fixture = oidcFlowOnSqlite();

  const discoveryIssuer = async () => (await fixture.flow.app.inject({ url: '/.well-known/openid-configuration', headers: { host: fixture.flow.host } })).json<{ issuer: string }>().issuer;

  test('a chain from before migration 0011 (no context stored) gets a verifiable id_token on refresh: iss, sub, aud, at_hash; no auth_time, amr or nonce, which were never recorded', async () => {
    const { flow } = fixture;
    const pair = await issueTokenPair(fixture.database.db, flow.deps.keys.tokenHash, flow.clock(), { clientId: flow.clientId, sub: flow.sub, scope: 'openid profile', expiresAt: flow.clock() + 30 * DAY });
    flow.clock.advance(MINUTE);
    const refreshed = await refresh(flow, pair.refresh_token);
    assert.ok(refreshed.id_token, 'an id_token now that the application is --oidc');
    assert.equal(await signatureVerifies(flow, refreshed.id_token), true);
    const { claims } = decode(refreshed.id_token);
    assert.equal(claims.iss, await discoveryIssuer());
    assert.equal(claims.sub, flow.sub);
    assert.equal(claims.aud, flow.clientId);
    assert.equal(typeof claims.at_hash, 'string');
    for (const unknown of ['auth_time', 'amr', 'nonce', 'sid']) assert.equal(unknown in claims, false, `${unknown} is not guessed`);
    // and the next refresh of that chain too
    assert.ok((await refresh(flow, refreshed.refresh_token)).id_token);
  });

  test('a refresh token from before migration 0010 (its own row) rotates into a chain and gets an id_token too', async () => {
    const { flow } = fixture;
    const refreshToken = newOpaqueToken();
    const now = flow.clock();
    await store.insertRefreshToken(fixture.database.db, {
      token_hash: keyedHash(flow.deps.keys.tokenHash, refreshToken),
      client_id: flow.clientId,
      sub: flow.sub,
      scope: 'openid profile',
      chain_id: randomUUID(),
      created_at: now,
      chain_expires_at: now + 30 * DAY,
      rotated_at: null,
      revoked_at: null,
    });
    const refreshed = await refresh(flow, refreshToken);
    assert.ok(refreshed.id_token);
    assert.equal(await signatureVerifies(flow, refreshed.id_token), true);
    assert.equal(decode(refreshed.id_token).claims.sub, flow.sub);
  });

  test('a chain begun while the application was not --oidc gets an id_token on refresh after `client update --oidc`; without openid granted, still none', async () => {
    const { flow } = fixture;
    const { client, clientSecret } = await clients.registerClient(fixture.database.db, flow.clock, flow.deps.keys.tokenHash, { name: 'Later OIDC', redirectUris: ['https://app.example/cb'], scopes: ['openid', 'profile'] });
    const later = { ...flow, clientId: client.clientId, clientSecret: clientSecret! };
    const withOpenid = await issueTokenPair(fixture.database.db, flow.deps.keys.tokenHash, flow.clock(), { clientId: client.clientId, sub: flow.sub, scope: 'openid profile', expiresAt: flow.clock() + 30 * DAY });
    const withoutOpenid = await issueTokenPair(fixture.database.db, flow.deps.keys.tokenHash, flow.clock(), { clientId: client.clientId, sub: flow.sub, scope: 'profile', expiresAt: flow.clock() + 30 * DAY });
    const before = await refresh(later, withOpenid.refresh_token);
    assert.equal(before.id_token, undefined, 'spec rule 5 while the application is not --oidc');
    await clients.updateClient(fixture.database.db, flow.clock, client.clientId, { oidc: true });
    const after = await refresh(later, before.refresh_token);
    assert.ok(after.id_token);
    assert.equal(decode(after.id_token).claims.aud, client.clientId);
    assert.equal((await refresh(later, withoutOpenid.refresh_token)).id_token, undefined, 'no openid in the chain: no id_token');
  });
});
