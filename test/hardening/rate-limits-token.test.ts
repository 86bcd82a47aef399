// Hardening 9 at the token endpoint (src/oauth/token/token.routes.ts): refusals counted per address —
// together with revocation — and failed client authentications per application; a browser's client_id
// with a NUL character is invalid_request, never a 500 (the CORS lookup runs before the parameters are
// checked, and PostgreSQL cannot compare a NUL).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as oauth from 'oauth4webapi';
import { MINUTE } from '../../src/config/clock.ts';
import { CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT, CLIENT_ENDPOINT_FAILURES_PER_ADDRESS } from '../../src/oauth/rate-limits.ts';
import { TEST_BASE_URL } from '../helpers/app.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { BROWSER_ORIGIN, oauthFixture, REDIRECT_URI } from '../oauth/token-fixtures.ts';
import { asResponse, assertTooMany, counter, nearLimit, postFrom } from './rate-limit-support.ts';

const WINDOW_SECONDS = CLIENT_ENDPOINT_FAILURES_PER_ADDRESS.windowMs / 1000;

forEachDatabase('rate limits at the token endpoint', (open) => {
  test(`token: up to ${CLIENT_ENDPOINT_FAILURES_PER_ADDRESS.max} refused requests per 10 minutes from one address are answered as usual, the next is 429 with Retry-After; then even a valid request from that address waits, other addresses do not, and a new window starts afresh`, async () => {
    const database = await open();
    const f = await oauthFixture(database);
    const flood = '192.0.2.10';
    const bad = { grant_type: 'authorization_code', code: 'guess', redirect_uri: REDIRECT_URI, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret };
    await nearLimit(f, CLIENT_ENDPOINT_FAILURES_PER_ADDRESS, flood);
    for (let i = 0; i < 5; i++) {
      const res = await postFrom(f, flood, '/oauth/token', bad);
      assert.equal(res.statusCode, 400, `request ${i + 1}: ${res.body}`);
    }
    assertTooMany(await postFrom(f, flood, '/oauth/token', bad), WINDOW_SECONDS);

    const code = await f.mintCode();
    const valid = { ...bad, code };
    f.clock.advance(MINUTE);
    assertTooMany(await postFrom(f, flood, '/oauth/token', valid), WINDOW_SECONDS - 60);
    const key = `${CLIENT_ENDPOINT_FAILURES_PER_ADDRESS.name}:${flood}`;
    assert.equal(await counter(database, key), CLIENT_ENDPOINT_FAILURES_PER_ADDRESS.max + 1, 'a remembered verdict costs no database write');

    assert.equal((await postFrom(f, '192.0.2.11', '/oauth/token', valid)).statusCode, 200, 'another address');
    f.clock.advance(CLIENT_ENDPOINT_FAILURES_PER_ADDRESS.windowMs);
    assert.equal((await postFrom(f, flood, '/oauth/token', bad)).statusCode, 400, 'a new window');
    assert.equal(await counter(database, key), 1);
    await f.app.close();
  });

  test('token and revoke share the per-address count (a client authenticates the same way at both)', async () => {
    const f = await oauthFixture(await open());
    const flood = '192.0.2.20';
    const wrongSecret = { client_id: 'no-such-client', client_secret: 'x', token: 'y' };
    await nearLimit(f, CLIENT_ENDPOINT_FAILURES_PER_ADDRESS, flood, 10);
    for (let i = 0; i < 10; i++) {
      assert.equal((await postFrom(f, flood, i % 2 === 0 ? '/oauth/token' : '/oauth/revoke', { grant_type: 'refresh_token', refresh_token: 'r', ...wrongSecret })).statusCode, 401);
    }
    assertTooMany(await postFrom(f, flood, '/oauth/revoke', wrongSecret), WINDOW_SECONDS);
    assertTooMany(await postFrom(f, flood, '/oauth/token', { grant_type: 'refresh_token', refresh_token: 'r', ...wrongSecret }), WINDOW_SECONDS);
    await f.app.close();
  });

  test('per application at the token endpoint: past the limit a wrong secret gets 429, the right secret still gets its tokens', async () => {
    const f = await oauthFixture(await open());
    const wrong = { grant_type: 'refresh_token', refresh_token: 'r', client_id: f.confidential.client.clientId, client_secret: 'not-the-secret' };
    await nearLimit(f, CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT, f.confidential.client.clientId, 2);
    for (let i = 0; i < 2; i++) assert.equal((await postFrom(f, `198.51.100.${i}`, '/oauth/token', wrong)).statusCode, 401);
    assertTooMany(await postFrom(f, '203.0.113.2', '/oauth/token', wrong), CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT.windowMs / 1000);
    const tokens = await f.exchange();
    assert.equal((await f.refresh(tokens.refresh_token)).statusCode, 200);
    await f.app.close();
  });

  test('oauth4webapi raises the token endpoint\'s 429 as ResponseBodyError: error temporarily_unavailable, status 429, Retry-After readable', async () => {
    const f = await oauthFixture(await open());
    const flood = '192.0.2.50';
    await nearLimit(f, CLIENT_ENDPOINT_FAILURES_PER_ADDRESS, flood, 0);
    const res = asResponse(await postFrom(f, flood, '/oauth/token', { grant_type: 'refresh_token', refresh_token: 'r', client_id: 'nobody', client_secret: 'x' }));
    const as: oauth.AuthorizationServer = { issuer: TEST_BASE_URL };
    await assert.rejects(oauth.processRefreshTokenResponse(as, { client_id: 'nobody' }, res), (error: unknown) => {
      assert.ok(error instanceof oauth.ResponseBodyError, String(error));
      assert.equal(error.error, 'temporarily_unavailable');
      assert.equal(error.status, 429);
      assert.equal(error.response.headers.get('retry-after'), String(WINDOW_SECONDS));
      return true;
    });
    await f.app.close();
  });

  test('fuzz finding: a client_id with a NUL character, sent from a browser (Origin), is invalid_request — never a 500 (the CORS lookup ran before the parameters were checked; PostgreSQL cannot compare a NUL)', async () => {
    const f = await oauthFixture(await open());
    for (const url of ['/oauth/token', '/oauth/revoke']) {
      const res = await f.post(url, 'grant_type=refresh_token&refresh_token=x&token=x&client_id=%00&client_secret=y', { origin: BROWSER_ORIGIN });
      assert.equal(res.statusCode, 400, `${url}: ${res.body}`);
      assert.equal(res.json<{ error: string }>().error, 'invalid_request');
    }
    await f.app.close();
  });
});
