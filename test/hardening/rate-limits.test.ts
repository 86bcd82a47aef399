// Hardening 9, "No rate limits on token, revoke and userinfo": refused requests are counted per client
// address (and failed client authentications per application) in the database's fixed-window counters;
// past a limit the answer is 429 `temporarily_unavailable` with Retry-After. Successes count nothing.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import * as oauth from 'oauth4webapi';
import { MINUTE } from '../../src/config/clock.ts';
import {
  CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT,
  CLIENT_ENDPOINT_FAILURES_PER_ADDRESS,
  USERINFO_FAILURES_PER_ADDRESS,
  type FailureLimit,
} from '../../src/oauth/rate-limits.ts';
import { testApp, TEST_BASE_URL } from '../helpers/app.ts';
import { forEachDatabase, type TestDatabase } from '../helpers/databases.ts';
import { assertFrameHeaders } from '../oauth/authorize-support.ts';
import { HOST, oauthFixture, REDIRECT_URI, type OAuthFixture } from '../oauth/token-fixtures.ts';

type Injectable = Pick<OAuthFixture, 'app'>;

function postFrom(f: Injectable, address: string, url: string, form: Record<string, string>): Promise<LightMyRequestResponse> {
  return f.app.inject({
    method: 'POST',
    url,
    remoteAddress: address,
    headers: { host: HOST, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(form).toString(),
  });
}

function userinfoFrom(f: Injectable, address: string, authorization?: string): Promise<LightMyRequestResponse> {
  return f.app.inject({ method: 'GET', url: '/oauth/userinfo', remoteAddress: address, headers: { host: HOST, ...(authorization === undefined ? {} : { authorization }) } });
}

/** The 429: OAuth error shape, Retry-After in seconds, never cached, the security headers, and no Bearer challenge. */
function assertTooMany(res: LightMyRequestResponse, retryAfterSeconds: number): void {
  assert.equal(res.statusCode, 429, res.body);
  const body = res.json<{ error: string; error_description: string }>();
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
  assert.equal(body.error, 'temporarily_unavailable');
  assert.match(body.error_description, new RegExp(`Try again in ${retryAfterSeconds} seconds\\.$`));
  assert.equal(res.headers['retry-after'], String(retryAfterSeconds));
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers['www-authenticate'], undefined);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assertFrameHeaders(res.headers);
}

/**
 * Puts a counter `below` refusals short of its limit, as if the earlier refusals of the window had been
 * counted (each real one costs a database write; a thousand of them per test would take most of a minute).
 */
async function nearLimit(f: Pick<OAuthFixture, 'deps'>, limit: FailureLimit, subject: string, below = 5): Promise<void> {
  await f.deps.db.insertInto('signin_throttle').values({ key: `${limit.name}:${subject}`, failures: limit.max - below, window_started_at: f.deps.clock(), locked_until: null }).execute();
}

async function counter(database: TestDatabase, key: string): Promise<number | undefined> {
  const row = await database.db.selectFrom('signin_throttle').select('failures').where('key', '=', key).executeTakeFirst();
  return row === undefined ? undefined : Number(row.failures);
}

/** An inject answer as a fetch Response, to hand to a client library. */
function asResponse(res: LightMyRequestResponse): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : String(value));
  return new Response(new Uint8Array(res.rawPayload), { status: res.statusCode, headers });
}

const WINDOW_SECONDS = CLIENT_ENDPOINT_FAILURES_PER_ADDRESS.windowMs / 1000;

forEachDatabase('rate limits at token, revoke and userinfo', (open) => {
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

  test('revoke shares the per-address count with the token endpoint (a client authenticates the same way at both)', async () => {
    const database = await open();
    const f = await oauthFixture(database);
    const flood = '192.0.2.20';
    const wrongSecret = { client_id: 'no-such-client', client_secret: 'x', token: 'y' };
    await nearLimit(f, CLIENT_ENDPOINT_FAILURES_PER_ADDRESS, flood, 10);
    for (let i = 0; i < 10; i++) {
      assert.equal((await postFrom(f, flood, i % 2 === 0 ? '/oauth/token' : '/oauth/revoke', { grant_type: 'refresh_token', refresh_token: 'r', ...wrongSecret })).statusCode, 401);
    }
    assertTooMany(await postFrom(f, flood, '/oauth/revoke', wrongSecret), WINDOW_SECONDS);
    assertTooMany(await postFrom(f, flood, '/oauth/revoke', { client_id: f.confidential.client.clientId, client_secret: f.confidential.secret, token: 'y' }), WINDOW_SECONDS);
    assert.equal(await counter(database, `${CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT.name}:no-such-client`), undefined, 'an unknown client_id grows no counter of its own');
    await f.app.close();
  });

  test(`per application: after ${CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT.max} failed client authentications from any addresses, a further wrong secret gets 429 — but the right secret is never refused, so knowing a client_id cannot cut its application off`, async () => {
    const f = await oauthFixture(await open());
    const wrong = { client_id: f.confidential.client.clientId, client_secret: 'not-the-secret', token: 'anything' };
    await nearLimit(f, CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT, f.confidential.client.clientId);
    for (let i = 0; i < 5; i++) {
      assert.equal((await postFrom(f, `198.51.100.${i}`, i % 2 === 0 ? '/oauth/revoke' : '/oauth/token', { grant_type: 'refresh_token', refresh_token: 'r', ...wrong })).statusCode, 401);
    }
    assertTooMany(await postFrom(f, '203.0.113.1', '/oauth/revoke', wrong), CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT.windowMs / 1000);
    assertTooMany(await postFrom(f, '203.0.113.2', '/oauth/token', { grant_type: 'refresh_token', refresh_token: 'r', ...wrong }), CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT.windowMs / 1000);
    const tokens = await f.exchange();
    assert.equal((await postFrom(f, '203.0.113.1', '/oauth/revoke', { ...wrong, client_secret: f.confidential.secret, token: tokens.access_token })).statusCode, 200);
    assert.equal((await f.refresh(tokens.refresh_token)).statusCode, 200);
    assert.equal((await postFrom(f, '203.0.113.3', '/oauth/revoke', { client_id: f.other.client.clientId, client_secret: 'wrong', token: 'x' })).statusCode, 401, 'another application');
    await f.app.close();
  });

  test(`userinfo: ${USERINFO_FAILURES_PER_ADDRESS.max} requests without a token or with an unknown one from one address get the usual 401, the next 429 without a Bearer challenge; expired tokens do not count`, async () => {
    const database = await open();
    const f = await oauthFixture(database);
    const { access_token } = await f.exchange();
    const flood = '192.0.2.30';
    await nearLimit(f, USERINFO_FAILURES_PER_ADDRESS, flood, 10);
    for (let i = 0; i < 10; i++) {
      const res = await userinfoFrom(f, flood, i % 2 === 0 ? `Bearer unknown-${i}` : undefined);
      assert.equal(res.statusCode, 401, res.body);
      assert.match(String(res.headers['www-authenticate']), /^Bearer realm="signet"/);
    }
    assertTooMany(await userinfoFrom(f, flood, 'Bearer one-more'), USERINFO_FAILURES_PER_ADDRESS.windowMs / 1000);
    assertTooMany(await userinfoFrom(f, flood, `Bearer ${access_token}`), USERINFO_FAILURES_PER_ADDRESS.windowMs / 1000);
    assert.equal((await userinfoFrom(f, '192.0.2.31', `Bearer ${access_token}`)).statusCode, 200);

    f.clock.advance(2 * 60 * MINUTE); // the access token expires; the window is over too
    for (let i = 0; i < 20; i++) assert.equal((await userinfoFrom(f, '192.0.2.32', `Bearer ${access_token}`)).statusCode, 401);
    assert.equal(await counter(database, `${USERINFO_FAILURES_PER_ADDRESS.name}:192.0.2.32`), undefined, 'an expired token is not a flood');
    await f.app.close();
  });

  test('the counters are in the database: two server processes on one database add up to one limit', async () => {
    const database = await open();
    const f = await oauthFixture(database);
    const second = await testApp(database);
    const flood = '192.0.2.40';
    await nearLimit(f, USERINFO_FAILURES_PER_ADDRESS, flood, 10);
    for (let i = 0; i < 10; i++) {
      const res = await userinfoFrom(i % 2 === 0 ? f : second, flood, `Bearer unknown-${i}`);
      assert.equal(res.statusCode, 401);
    }
    assert.equal((await userinfoFrom(second, flood, 'Bearer x')).statusCode, 429);
    assert.equal((await userinfoFrom(f, flood, 'Bearer y')).statusCode, 429);
    await second.app.close();
    await f.app.close();
  });

  test('a request that succeeds counts nothing: a code exchange, a refresh, userinfo and revocation leave no counter behind', async () => {
    const database = await open();
    const f = await oauthFixture(database);
    const tokens = await f.exchange();
    assert.equal((await f.refresh(tokens.refresh_token)).statusCode, 200);
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 200);
    assert.equal((await f.revoke({ client_id: f.confidential.client.clientId, client_secret: f.confidential.secret, token: tokens.access_token })).statusCode, 200);
    assert.deepEqual(await database.db.selectFrom('signin_throttle').selectAll().execute(), []);
    await f.app.close();
  });

  test('what client libraries make of the 429: oauth4webapi raises the token and revocation answers as ResponseBodyError (error, status 429, Retry-After readable), and the userinfo answer as a non-conforming response — not as a Bearer challenge that would make the application drop a valid token', async () => {
    const f = await oauthFixture(await open());
    const flood = '192.0.2.50';
    const as: oauth.AuthorizationServer = { issuer: TEST_BASE_URL };
    const client: oauth.Client = { client_id: f.confidential.client.clientId };
    const bad = { grant_type: 'refresh_token', refresh_token: 'r', client_id: 'nobody', client_secret: 'x' };
    await nearLimit(f, CLIENT_ENDPOINT_FAILURES_PER_ADDRESS, flood, 0);

    const token = await postFrom(f, flood, '/oauth/token', bad);
    const tokenError = await oauth.processRefreshTokenResponse(as, client, asResponse(token)).then(
      () => assert.fail('expected an error'),
      (error: unknown) => error,
    );
    assert.ok(tokenError instanceof oauth.ResponseBodyError, String(tokenError));
    assert.equal(tokenError.error, 'temporarily_unavailable');
    assert.equal(tokenError.status, 429);
    assert.equal(tokenError.response.headers.get('retry-after'), String(WINDOW_SECONDS));

    await assert.rejects(oauth.processRevocationResponse(asResponse(await postFrom(f, flood, '/oauth/revoke', bad))), (error: unknown) => {
      assert.ok(error instanceof oauth.ResponseBodyError);
      assert.equal(error.status, 429);
      return true;
    });

    await nearLimit(f, USERINFO_FAILURES_PER_ADDRESS, flood, 0);
    assert.equal((await userinfoFrom(f, flood, 'Bearer nope')).statusCode, 429);
    const { access_token } = await f.exchange();
    const userinfo = asResponse(await userinfoFrom(f, flood, `Bearer ${access_token}`));
    await assert.rejects(oauth.processUserInfoResponse(as, client, oauth.skipSubjectCheck, userinfo), (error: unknown) => {
      assert.ok(!(error instanceof oauth.WWWAuthenticateChallengeError), 'not a challenge: the token was not judged');
      assert.ok(error instanceof oauth.OperationProcessingError);
      assert.equal(error.code, oauth.RESPONSE_IS_NOT_CONFORM);
      return true;
    });
    assert.equal(userinfo.headers.get('retry-after'), String(USERINFO_FAILURES_PER_ADDRESS.windowMs / 1000));
    // The contrast: the 401 for an unknown token is a challenge, which libraries treat as "this token is bad".
    await assert.rejects(oauth.processUserInfoResponse(as, client, oauth.skipSubjectCheck, asResponse(await userinfoFrom(f, '192.0.2.51', 'Bearer nope'))), oauth.WWWAuthenticateChallengeError);
    await f.app.close();
  });
});
