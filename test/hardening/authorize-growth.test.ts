// Hardening 4, "/oauth/authorize growth": `state` is capped (a 1,000-character URL-safe state still
// round-trips exactly), `code_challenge` must match RFC 7636, pending requests expire after 10 minutes,
// and one address can open only so many of them — every refusal JSON at the endpoint, and only after
// the spec's five checks.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { MINUTE } from '../../src/config/clock.ts';
import { MAX_STATE_LENGTH } from '../../src/oauth/authorize.ts';
import { PENDING_REQUEST_LIFETIME_MS, PENDING_REQUESTS_PER_ADDRESS } from '../../src/oauth/authorization-requests.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { assertFrameHeaders, flowSetup, TinyBrowser, type Flow } from '../oauth/authorize-support.ts';

async function authorize(flow: Flow, params: Record<string, string>, address = '127.0.0.1') {
  return flow.app.inject({ url: flow.authorizePath(params), headers: { host: flow.host }, remoteAddress: address });
}

async function refusedAsJson(flow: Flow, params: Record<string, string>, error: string, status = 400): Promise<void> {
  const res = await authorize(flow, params);
  assert.equal(res.statusCode, status, `${JSON.stringify(params).slice(0, 120)} → ${res.body}`);
  assert.equal(res.headers.location, undefined, 'never redirected');
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assert.equal(res.json<{ error: string }>().error, error);
  assertFrameHeaders(res.headers);
}

forEachDatabase('/oauth/authorize growth', (open) => {
  test('"Cap `state`": a 1,000-character URL-safe state round-trips exactly; one over 2,000 characters is invalid_request, and nothing is stored', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const state = randomBytes(750).toString('base64url');
    assert.equal(state.length, 1000);
    const callback = await new TinyBrowser(flow).fullFlow({ state });
    assert.equal(callback.searchParams.get('state'), state);
    assert.ok(callback.href.endsWith(`state=${state}`) || callback.href.includes(`state=${state}&`), 'byte for byte in the URL');

    await database.db.deleteFrom('authorization_requests').execute();
    assert.equal((await authorize(flow, { state: 'x'.repeat(MAX_STATE_LENGTH) })).statusCode, 302, 'exactly at the cap is accepted');
    await database.db.deleteFrom('authorization_requests').execute();
    await refusedAsJson(flow, { state: 'x'.repeat(MAX_STATE_LENGTH + 1) }, 'invalid_request');
    assert.equal((await database.db.selectFrom('authorization_requests').selectAll().execute()).length, 0);
  });

  test('"`code_challenge` must match RFC 7636 (43–128 characters of [A-Za-z0-9-._~])", else invalid_request as JSON', async () => {
    const flow = await flowSetup(await open());
    const ok = ['a'.repeat(43), 'A-z.0_9~'.repeat(16), 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM'];
    for (const challenge of ok) assert.equal((await authorize(flow, { code_challenge: challenge, code_challenge_method: 'S256' })).statusCode, 302, challenge);
    const bad = ['a'.repeat(42), 'a'.repeat(129), `${'a'.repeat(42)}=`, `${'a'.repeat(42)}+`, `${'a'.repeat(42)}/`, `${'a'.repeat(42)} `, `${'a'.repeat(42)}é`, 'c-S256'];
    for (const challenge of bad) await refusedAsJson(flow, { code_challenge: challenge, code_challenge_method: 'S256' }, 'invalid_request');
  });

  test('the new checks come after the spec\'s five: a request failing step 5 and both new checks reports step 5 (invalid_scope)', async () => {
    const flow = await flowSetup(await open(), {}, ['openid', 'profile']);
    await refusedAsJson(flow, { scope: 'openid email', state: 'x'.repeat(MAX_STATE_LENGTH + 1), code_challenge: 'short' }, 'invalid_scope');
    await refusedAsJson(flow, { response_type: 'token', code_challenge: 'short' }, 'unsupported_response_type');
  });

  test('"keep pending-request expiry short": a pending request expires after 10 minutes', async () => {
    const flow = await flowSetup(await open());
    assert.equal(PENDING_REQUEST_LIFETIME_MS, 10 * MINUTE);
    const browser = new TinyBrowser(flow);
    const id = await browser.authorize();
    flow.clock.advance(10 * MINUTE - 1);
    assert.equal((await browser.get(`/signin?request=${id}`)).statusCode, 200, 'still open just before');
    flow.clock.advance(1);
    const expired = await browser.get(`/signin?request=${id}`);
    assert.equal(expired.statusCode, 400);
    assert.match(expired.body, /start signing in again/);
  });

  test(`rate limit: one address opens at most ${PENDING_REQUESTS_PER_ADDRESS} pending requests per 10 minutes (a DB-backed counter); then 429 with Retry-After, while other addresses and prompt=none are unaffected`, async () => {
    const database = await open();
    const flow = await flowSetup(database);
    for (let i = 0; i < PENDING_REQUESTS_PER_ADDRESS; i++) assert.equal((await authorize(flow, {}, '192.0.2.1')).statusCode, 302);
    const over = await authorize(flow, {}, '192.0.2.1');
    assert.equal(over.statusCode, 429, over.body);
    assert.equal(over.json<{ error: string }>().error, 'temporarily_unavailable');
    assert.equal(over.headers['retry-after'], String(10 * 60));
    assertFrameHeaders(over.headers);
    const rows = await database.db.selectFrom('authorization_requests').select('id_hash').execute();
    assert.equal(rows.length, PENDING_REQUESTS_PER_ADDRESS, 'the refused one stored nothing');
    assert.equal((await authorize(flow, {}, '192.0.2.2')).statusCode, 302, 'another address');
    const silent = await authorize(flow, { prompt: 'none' }, '192.0.2.1');
    assert.equal(silent.statusCode, 302, 'prompt=none stores no pending request and is not limited');
    assert.match(String(silent.headers.location), /error=login_required/);
    flow.clock.advance(10 * MINUTE);
    assert.equal((await authorize(flow, {}, '192.0.2.1')).statusCode, 302, 'a new window');
  });
});
