// GET /oauth/authorize: parameters, defaults, the five-step validation order, and what is stored.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as clients from '../../src/clients/clients.ts';
import { AUTHORIZE_CHECKS } from '../../src/oauth/authorize.ts';
import { BROWSER_BINDING_COOKIE, PENDING_REQUEST_LIFETIME_MS, pendingRequestKey } from '../../src/oauth/authorization-requests.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { assertFrameHeaders, flowSetup, REDIRECT_URI, TinyBrowser, type Flow } from './authorize-support.ts';

async function refused(flow: Flow, query: string, error: string): Promise<void> {
  const res = await flow.app.inject({ url: `/oauth/authorize?${query}`, headers: { host: flow.host } });
  assert.equal(res.statusCode, 400, `${query} → 400`);
  assert.equal(res.headers.location, undefined, 'spec: "nothing is redirected to the callback"');
  assert.match(String(res.headers['content-type']), /application\/json/);
  const body = res.json() as { error: string; error_description: string };
  assert.equal(body.error, error, `${query}: ${body.error_description}`);
  assert.ok(body.error_description.length > 0);
  assertFrameHeaders(res.headers);
}

const enc = encodeURIComponent;

test('validation order: the five checks are named in spec order', () => {
  assert.deepEqual(
    AUTHORIZE_CHECKS.map((check) => check.name),
    ['clientIdAndRedirectUriPresent', 'responseTypeAcceptable', 'applicationExistsAndIsEnabled', 'redirectUriIsRegistered', 'everyRequestedScopeIsPermitted'],
  );
});

forEachDatabase('GET /oauth/authorize', (open) => {
  test('validation step 1: "`client_id` and `redirect_uri` present" — each missing one is invalid_request', async () => {
    const flow = await flowSetup(await open());
    await refused(flow, `redirect_uri=${enc(REDIRECT_URI)}`, 'invalid_request');
    await refused(flow, `client_id=${flow.clientId}`, 'invalid_request');
    await refused(flow, `client_id=&redirect_uri=${enc(REDIRECT_URI)}`, 'invalid_request');
    await refused(flow, '', 'invalid_request');
  });

  test('validation step 2: "`response_type` acceptable" — `code` is the only accepted value', async () => {
    const flow = await flowSetup(await open());
    for (const type of ['token', 'id_token', 'code token', 'CODE']) {
      await refused(flow, `client_id=${flow.clientId}&redirect_uri=${enc(REDIRECT_URI)}&response_type=${enc(type)}`, 'unsupported_response_type');
    }
  });

  test('validation step 3: "The application exists and is enabled" — unknown or disabled is invalid_client, status 400', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    await refused(flow, `client_id=nope&redirect_uri=${enc(REDIRECT_URI)}`, 'invalid_client');
    await clients.updateClient(database.db, flow.clock, flow.clientId, { enabled: false });
    await refused(flow, `client_id=${flow.clientId}&redirect_uri=${enc(REDIRECT_URI)}`, 'invalid_client');
  });

  test('validation step 4: "The redirect URI is registered" — byte for byte', async () => {
    const flow = await flowSetup(await open());
    for (const uri of ['https://app.example/callback/', 'https://APP.example/callback', 'https://app.example/callback?x=1', 'https://evil.example/callback', 'https://app.example/Callback']) {
      await refused(flow, `client_id=${flow.clientId}&redirect_uri=${enc(uri)}`, 'invalid_request');
    }
  });

  test('validation step 5: "Every requested scope is permitted" — unknown or unregistered scope is invalid_scope', async () => {
    const flow = await flowSetup(await open(), {}, ['openid', 'profile']);
    await refused(flow, `client_id=${flow.clientId}&redirect_uri=${enc(REDIRECT_URI)}&scope=${enc('openid address')}`, 'invalid_scope');
    await refused(flow, `client_id=${flow.clientId}&redirect_uri=${enc(REDIRECT_URI)}&scope=${enc('openid email')}`, 'invalid_scope');
    await refused(flow, `client_id=${flow.clientId}&redirect_uri=${enc(REDIRECT_URI)}&scope=${enc('OPENID')}`, 'invalid_scope');
  });

  test('validation order: the first failure is reported — a request failing steps 2 and 4 reports step 2', async () => {
    const flow = await flowSetup(await open());
    const bad = { responseType: 'token', redirect: 'https://evil.example/cb', scope: 'admin' };
    // steps 2 and 4
    await refused(flow, `client_id=${flow.clientId}&redirect_uri=${enc(bad.redirect)}&response_type=${bad.responseType}`, 'unsupported_response_type');
    // steps 1 and 2
    await refused(flow, `redirect_uri=${enc(REDIRECT_URI)}&response_type=${bad.responseType}`, 'invalid_request');
    // steps 2 and 3
    await refused(flow, `client_id=nope&redirect_uri=${enc(REDIRECT_URI)}&response_type=${bad.responseType}`, 'unsupported_response_type');
    // steps 3 and 4
    await refused(flow, `client_id=nope&redirect_uri=${enc(bad.redirect)}`, 'invalid_client');
    // steps 4 and 5
    await refused(flow, `client_id=${flow.clientId}&redirect_uri=${enc(bad.redirect)}&scope=${bad.scope}`, 'invalid_request');
    // steps 3 and 5
    await refused(flow, `client_id=nope&redirect_uri=${enc(REDIRECT_URI)}&scope=${bad.scope}`, 'invalid_client');
  });

  test('a parameter sent twice is invalid_request; a duplicated client_id is step 1\'s failure, before step 2', async () => {
    const flow = await flowSetup(await open());
    const base = `client_id=${flow.clientId}&redirect_uri=${enc(REDIRECT_URI)}`;
    await refused(flow, `${base}&client_id=${flow.clientId}&response_type=token`, 'invalid_request');
    await refused(flow, `${base}&redirect_uri=${enc(REDIRECT_URI)}`, 'invalid_request');
    await refused(flow, `${base}&response_type=code&response_type=code`, 'invalid_request');
    await refused(flow, `${base}&scope=openid&scope=profile`, 'invalid_request');
    await refused(flow, `${base}&state=a&state=b`, 'invalid_request');
    await refused(flow, `${base}&code_challenge=a&code_challenge=b`, 'invalid_request');
    await refused(flow, `${base}&prompt=none&prompt=none`, 'invalid_request');
  });

  test('success: "`302` to the sign-in and consent page. No code exists yet at that point."', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const res = await flow.app.inject({ url: flow.authorizePath({ state: 'st-1' }), headers: { host: flow.host } });
    assert.equal(res.statusCode, 302);
    assertFrameHeaders(res.headers);
    const location = new URL(String(res.headers.location));
    assert.equal(location.origin, 'http://signet.test');
    assert.equal(location.pathname, '/signin');
    const id = location.searchParams.get('request')!;
    assert.ok(id.length >= 43, 'the pending request id is unguessable (32 random bytes)');
    assert.equal((await database.db.selectFrom('token_chains').selectAll().execute()).length, 0, 'no code yet');
    const rows = await database.db.selectFrom('authorization_requests').selectAll().execute();
    assert.equal(rows.length, 1);
    const row = rows[0]!;
    const binding = res.cookies.find((c) => c.name === BROWSER_BINDING_COOKIE)?.value ?? '';
    assert.equal(row.id_hash, pendingRequestKey(flow.deps.keys.tokenHash, id, binding), 'the id is stored only as a keyed hash, with the binding of the browser that started it');
    assert.ok(!JSON.stringify(row).includes(id));
    assert.equal(row.client_id, flow.clientId);
    assert.equal(row.redirect_uri, REDIRECT_URI);
    assert.equal(row.state, 'st-1');
    assert.equal(row.origin, 'http://signet.test');
    assert.equal(Number(row.expires_at) - Number(row.created_at), PENDING_REQUEST_LIFETIME_MS, 'the pending request expires');
  });

  test('"The default scope when none is sent is `openid profile`"; a sent scope is stored in canonical order', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const browser = new TinyBrowser(flow);
    await browser.authorize();
    await browser.authorize({ scope: 'email  openid' });
    await browser.authorize({ response_type: 'code', scope: '' });
    const scopes = (await database.db.selectFrom('authorization_requests').select(['scope', 'created_at']).execute()).map((r) => r.scope).sort();
    assert.deepEqual(scopes, ['openid email', 'openid profile', 'openid profile']);
  });

  test('code_challenge_method: "only the exact string `S256` selects SHA-256; any other value, including `s256`, is treated as `plain`"', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const browser = new TinyBrowser(flow);
    // RFC 7636 challenges (43 to 128 unreserved characters), one per case.
    const c = (name: string) => name.padEnd(43, '0');
    const cases: Array<[Record<string, string>, string | null, string | null]> = [
      [{ code_challenge: c('c-S256'), code_challenge_method: 'S256' }, c('c-S256'), 'S256'],
      [{ code_challenge: c('c-s256'), code_challenge_method: 's256' }, c('c-s256'), 'plain'],
      [{ code_challenge: c('c-none') }, c('c-none'), 'plain'],
      [{ code_challenge: c('c-plain'), code_challenge_method: 'plain' }, c('c-plain'), 'plain'],
      [{ code_challenge: c('c-sha'), code_challenge_method: 'SHA256' }, c('c-sha'), 'plain'],
      [{}, null, null],
    ];
    for (const [params, challenge, method] of cases) {
      await database.db.deleteFrom('authorization_requests').execute();
      await browser.authorize(params);
      const row = await database.db.selectFrom('authorization_requests').select(['code_challenge', 'code_challenge_method']).executeTakeFirstOrThrow();
      assert.deepEqual([row.code_challenge, row.code_challenge_method], [challenge, method], JSON.stringify(params));
    }
  });

  test('the flow works on both hosts: the pending request belongs to the host that received it', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const alt = new TinyBrowser(flow, 'alt.signet.test');
    const res = await alt.get(flow.authorizePath());
    const location = new URL(String(res.headers.location));
    assert.equal(location.origin, 'http://alt.signet.test');
    const id = location.searchParams.get('request')!;
    const onOtherHost = await new TinyBrowser(flow).get(`/signin?request=${id}`);
    assert.equal(onOtherHost.statusCode, 400, 'the other host does not serve this request');
    const callback = await alt.fullFlow();
    assert.equal(callback.origin + callback.pathname, REDIRECT_URI);
    assert.equal(callback.searchParams.get('code')?.length, 44);
  });
});
