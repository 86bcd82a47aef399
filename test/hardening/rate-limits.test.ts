// Hardening 9, "No rate limits on token, revoke and userinfo": refused requests are counted per client
// address (and failed client authentications per application) in the database's fixed-window counters;
// past a limit the answer is 429 `temporarily_unavailable` with Retry-After. Successes count nothing.
// Revocation and userinfo here; the token endpoint's cases are in rate-limits-token.test.ts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as oauth from 'oauth4webapi';
import { MINUTE } from '../../src/config/clock.ts';
import { CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT, CLIENT_ENDPOINT_FAILURES_PER_ADDRESS, USERINFO_FAILURES_PER_ADDRESS } from '../../src/oauth/rate-limits.ts';
import { testApp, TEST_BASE_URL } from '../helpers/app.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { oauthFixture } from '../oauth/token-fixtures.ts';
import { asResponse, assertTooMany, counter, nearLimit, postFrom, userinfoFrom } from './rate-limit-support.ts';

const WINDOW_SECONDS = CLIENT_ENDPOINT_FAILURES_PER_ADDRESS.windowMs / 1000;

forEachDatabase('rate limits at revoke and userinfo', (open) => {
  test(`revoke: up to ${CLIENT_ENDPOINT_FAILURES_PER_ADDRESS.max} refused requests per 10 minutes from one address are answered as usual, the next is 429 with Retry-After; then even valid credentials from that address wait (the verdict is remembered: no database write), other addresses do not, and a new window starts afresh`, async () => {
    const database = await open();
    const f = await oauthFixture(database);
    const flood = '192.0.2.20';
    const wrongSecret = { client_id: 'no-such-client', client_secret: 'x', token: 'y' };
    const valid = { client_id: f.confidential.client.clientId, client_secret: f.confidential.secret, token: 'y' };
    await nearLimit(f, CLIENT_ENDPOINT_FAILURES_PER_ADDRESS, flood);
    for (let i = 0; i < 5; i++) assert.equal((await postFrom(f, flood, '/oauth/revoke', wrongSecret)).statusCode, 401, `request ${i + 1}`);
    assertTooMany(await postFrom(f, flood, '/oauth/revoke', wrongSecret), WINDOW_SECONDS);
    f.clock.advance(MINUTE);
    assertTooMany(await postFrom(f, flood, '/oauth/revoke', valid), WINDOW_SECONDS - 60);
    const key = `${CLIENT_ENDPOINT_FAILURES_PER_ADDRESS.name}:${flood}`;
    assert.equal(await counter(database, key), CLIENT_ENDPOINT_FAILURES_PER_ADDRESS.max + 1, 'a remembered verdict costs no database write');
    assert.equal(await counter(database, `${CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT.name}:no-such-client`), undefined, 'an unknown client_id grows no counter of its own');
    assert.equal((await postFrom(f, '192.0.2.21', '/oauth/revoke', valid)).statusCode, 200, 'another address');
    f.clock.advance(CLIENT_ENDPOINT_FAILURES_PER_ADDRESS.windowMs);
    assert.equal((await postFrom(f, flood, '/oauth/revoke', wrongSecret)).statusCode, 401, 'a new window');
    assert.equal(await counter(database, key), 1);
    await f.app.close();
  });

  test(`per application: after ${CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT.max} failed client authentications from any addresses, a further wrong secret gets 429 — but the right secret is never refused, so knowing a client_id cannot cut its application off`, async () => {
    const f = await oauthFixture(await open());
    const wrong = { client_id: f.confidential.client.clientId, client_secret: 'not-the-secret', token: 'anything' };
    await nearLimit(f, CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT, f.confidential.client.clientId);
    for (let i = 0; i < 5; i++) assert.equal((await postFrom(f, `198.51.100.${i}`, '/oauth/revoke', wrong)).statusCode, 401);
    assertTooMany(await postFrom(f, '203.0.113.1', '/oauth/revoke', wrong), CLIENT_AUTHENTICATION_FAILURES_PER_CLIENT.windowMs / 1000);
    const tokens = await f.exchange();
    assert.equal((await postFrom(f, '203.0.113.1', '/oauth/revoke', { ...wrong, client_secret: f.confidential.secret, token: tokens.access_token })).statusCode, 200);
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

  test('what client libraries make of the 429: oauth4webapi raises the revocation answer as ResponseBodyError (error, status 429, Retry-After readable), and the userinfo answer as a non-conforming response — not as a Bearer challenge that would make the application drop a valid token', async () => {
    const f = await oauthFixture(await open());
    const flood = '192.0.2.50';
    const as: oauth.AuthorizationServer = { issuer: TEST_BASE_URL };
    const client: oauth.Client = { client_id: f.confidential.client.clientId };
    await nearLimit(f, CLIENT_ENDPOINT_FAILURES_PER_ADDRESS, flood, 0);
    const revoked = asResponse(await postFrom(f, flood, '/oauth/revoke', { client_id: 'nobody', client_secret: 'x', token: 'y' }));
    await assert.rejects(oauth.processRevocationResponse(revoked), (error: unknown) => {
      assert.ok(error instanceof oauth.ResponseBodyError, String(error));
      assert.equal(error.error, 'temporarily_unavailable');
      assert.equal(error.status, 429);
      assert.equal(error.response.headers.get('retry-after'), String(WINDOW_SECONDS));
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
