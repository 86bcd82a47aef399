// issue 43: OAuth for services and devices — the client_credentials grant (RFC 6749 §4.4), the device
// authorization grant (RFC 8628) with its /device page, each opt-in per application (`--grant`), on
// SQLite and PostgreSQL. Time moves on the injected clock only.
import assert from 'node:assert/strict';
import { before, after, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { registerClient, updateClient, ClientError, type Client } from '../../src/clients/clients.ts';
import { MINUTE, SECOND } from '../../src/config/clock.ts';
import { verifyAccessToken } from '../../src/oauth/access-tokens.ts';
import { DEVICE_CODE_GRANT_TYPE } from '../../src/oauth/device/device-authorizations.ts';
import { AccountError } from '../../src/accounts/accounts.ts';
import { addRoleAsOperator, setPasswordAsOperator, updateAccountAsOperator } from '../../src/admin/operator-changes.ts';
import { Registry } from 'prom-client';
import { auditCounters, registerAuditCounters } from '../../src/audit/audit-metrics.ts';
import { tokenGrantsByGrantSince } from '../../src/oauth/token-stats.ts';
import { sweepExpired } from '../../src/web/housekeeping.ts';
import { forEachDatabase, type TestDatabase } from '../helpers/databases.ts';
import { csrfOf, EMAIL, flowSetup, PASSWORD, TinyBrowser, type Flow } from './authorize-support.ts';
import { assertOAuthError } from './token-fixtures.ts';

type Setup = Flow & {
  service: { client: Client; secret: string };
  device: Client;
  deviceConfidential: { client: Client; secret: string };
  form(url: string, form: Record<string, string>, headers?: Record<string, string>): Promise<LightMyRequestResponse>;
  startDevice(clientId?: string, extra?: Record<string, string>): Promise<DeviceStart>;
  poll(deviceCode: string, clientId?: string): Promise<LightMyRequestResponse>;
};
type DeviceStart = { device_code: string; user_code: string; verification_uri: string; verification_uri_complete: string; expires_in: number; interval: number };

async function setup(database: TestDatabase): Promise<Setup> {
  const flow = await flowSetup(database);
  const { db } = flow.deps;
  const key = flow.deps.keys.tokenHash;
  const service = await registerClient(db, flow.clock, key, { name: 'Nightly converter', redirectUris: [], scopes: ['openid', 'profile'], grants: ['client_credentials'] });
  const device = await registerClient(db, flow.clock, key, { name: 'Living-room TV', redirectUris: [], scopes: ['openid', 'profile', 'email'], isPublic: true, grants: ['device_code'] });
  const deviceConfidential = await registerClient(db, flow.clock, key, { name: 'Kiosk', redirectUris: [], scopes: ['openid', 'profile'], grants: ['device_code'] });
  const form = (url: string, body: Record<string, string>, headers: Record<string, string> = {}) =>
    flow.app.inject({ method: 'POST', url, headers: { host: flow.host, 'content-type': 'application/x-www-form-urlencoded', ...headers }, payload: new URLSearchParams(body).toString() });
  const s: Setup = {
    ...flow,
    service: { client: service.client, secret: service.clientSecret! },
    device: device.client,
    deviceConfidential: { client: deviceConfidential.client, secret: deviceConfidential.clientSecret! },
    form,
    async startDevice(clientId = device.client.clientId, extra = {}) {
      const res = await form('/oauth/device_authorization', { client_id: clientId, ...extra });
      assert.equal(res.statusCode, 200, res.body);
      return res.json<DeviceStart>();
    },
    poll: (deviceCode, clientId = device.client.clientId) => form('/oauth/token', { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: deviceCode, client_id: clientId }),
  };
  return s;
}

/** The person at /device: types the code, signs in, and answers the consent page. */
async function approveAtDevicePage(s: Setup, browser: TinyBrowser, typed: string, decision: 'allow' | 'deny'): Promise<LightMyRequestResponse> {
  const entered = await browser.submit('/device', '/device', { user_code: typed });
  assert.equal(entered.statusCode, 303, entered.body);
  const confirm = String(entered.headers.location);
  assert.match(confirm, /^\/device\/confirm\?request=/);
  let page = await browser.get(confirm);
  if (page.statusCode === 302) {
    const signin = String(page.headers.location);
    assert.equal(signin, `/signin?return=${encodeURIComponent(confirm)}`);
    const signedIn = await browser.submit(signin, '/signin', { identifier: EMAIL, password: PASSWORD, return: confirm });
    assert.equal(signedIn.statusCode, 303, signedIn.body);
    assert.equal(signedIn.headers.location, confirm, 'the sign-in comes back to the device page');
    page = await browser.get(confirm);
  }
  assert.equal(page.statusCode, 200, page.body);
  assert.match(page.body, /Allow/);
  assert.match(page.body, /Deny/);
  const ticked = [...page.body.matchAll(/name="scope" value="([a-z]+)" checked(?! disabled)/g)].map((m) => m[1]!);
  const request = /name="request" value="([^"]+)"/.exec(page.body)![1]!;
  return browser.post('/device/confirm', { _csrf: csrfOf(page.body), request, decision, scope: ticked });
}

// The counters count once a metrics registry holds them, as a server with SIGNET_METRICS_ADDR set does.
registerAuditCounters(new Registry());

forEachDatabase('issue 43: services and devices', (open) => {
  let s: Setup;
  before(async () => {
    s = await setup(await open());
  });
  after(async () => {
    await s.app.close();
  });

  // ——— the opt-in ———

  test('"an application without --grant gets unsupported_grant_type for both new grants", byte for byte as the spec\'s other unknown grants', async () => {
    const unknown = await s.form('/oauth/token', { grant_type: 'made_up_grant', client_id: s.clientId, client_secret: s.clientSecret });
    assertOAuthError(unknown, 400, 'unsupported_grant_type');
    const bodies: Array<Record<string, string>> = [
      { grant_type: 'client_credentials', client_id: s.clientId, client_secret: s.clientSecret },
      { grant_type: DEVICE_CODE_GRANT_TYPE, client_id: s.clientId, device_code: 'x' },
      // an application with the other grant only, and a client_id nobody registered
      { grant_type: 'client_credentials', client_id: s.device.clientId },
      { grant_type: DEVICE_CODE_GRANT_TYPE, client_id: s.service.client.clientId, client_secret: s.service.secret, device_code: 'x' },
      { grant_type: 'client_credentials', client_id: 'no-such-application', client_secret: 'x' },
    ];
    for (const body of bodies) {
      const res = await s.form('/oauth/token', body);
      assert.equal(res.statusCode, unknown.statusCode);
      assert.equal(res.body, unknown.body, `${body.grant_type} for ${body.client_id}`);
      assert.equal(res.headers['content-type'], unknown.headers['content-type']);
      assert.equal(res.headers['cache-control'], unknown.headers['cache-control']);
    }
  });

  test('device authorization for an application without --grant device_code fails because it is unauthorized_client (RFC 8628 §3.2)', async () => {
    const res = await s.form('/oauth/device_authorization', { client_id: s.clientId, client_secret: s.clientSecret });
    assertOAuthError(res, 400, 'unauthorized_client');
  });

  test('"client_credentials needs a confidential application" (RFC 6749 §4.4): a public one is refused at registration', async () => {
    await assert.rejects(registerClient(s.deps.db, s.clock, s.deps.keys.tokenHash, { name: 'x', redirectUris: [], isPublic: true, grants: ['client_credentials'] }), (e) => e instanceof ClientError && e.code === 'invalid_grant');
    await assert.rejects(registerClient(s.deps.db, s.clock, s.deps.keys.tokenHash, { name: 'x', redirectUris: [], grants: ['password'] }), (e) => e instanceof ClientError && e.code === 'invalid_grant');
    await assert.rejects(registerClient(s.deps.db, s.clock, s.deps.keys.tokenHash, { name: 'x', redirectUris: [] }), (e) => e instanceof ClientError && e.code === 'invalid_redirect_uri');
  });

  // ——— client_credentials ———

  test('client_credentials: "access tokens only (no refresh token, no id_token)"; default scope is every registered scope (RFC 6749 §3.3)', async () => {
    const res = await s.form('/oauth/token', { grant_type: 'client_credentials', client_id: s.service.client.clientId, client_secret: s.service.secret });
    assert.equal(res.statusCode, 200, res.body);
    const body = res.json<Record<string, unknown>>();
    assert.deepEqual(Object.keys(body).sort(), ['access_token', 'expires_in', 'scope', 'token_type']);
    assert.equal(body.token_type, 'Bearer');
    assert.equal(body.expires_in, 7200);
    assert.equal(body.scope, 'openid profile');
    assert.equal(String(body.access_token).length, 44);
    assert.equal(res.headers['cache-control'], 'no-store');
  });

  test('client_credentials: "scopes limited to what the application was registered with"', async () => {
    const narrower = await s.form('/oauth/token', { grant_type: 'client_credentials', client_id: s.service.client.clientId, client_secret: s.service.secret, scope: 'profile' });
    assert.equal(narrower.json<{ scope: string }>().scope, 'profile');
    const beyond = await s.form('/oauth/token', { grant_type: 'client_credentials', client_id: s.service.client.clientId, client_secret: s.service.secret, scope: 'openid email' });
    assertOAuthError(beyond, 400, 'invalid_scope');
  });

  test('client_credentials fails because the client_secret is wrong or missing (invalid_client, 401)', async () => {
    assertOAuthError(await s.form('/oauth/token', { grant_type: 'client_credentials', client_id: s.service.client.clientId, client_secret: 'wrong' }), 401, 'invalid_client');
    assertOAuthError(await s.form('/oauth/token', { grant_type: 'client_credentials', client_id: s.service.client.clientId }), 401, 'invalid_client');
  });

  test('client_credentials: "no person: userinfo refuses them" with 401 invalid_token; the document APIs\' check sees the service identity', async () => {
    const { access_token } = (await s.form('/oauth/token', { grant_type: 'client_credentials', client_id: s.service.client.clientId, client_secret: s.service.secret })).json<{ access_token: string }>();
    const res = await s.app.inject({ method: 'GET', url: '/oauth/userinfo', headers: { host: s.host, authorization: `Bearer ${access_token}` } });
    assertOAuthError(res, 401, 'invalid_token');
    assert.match(String(res.headers['www-authenticate']), /error="invalid_token"/);
    // verifyAccessToken: refused where a person is needed, a service caller where services are accepted.
    await assert.rejects(verifyAccessToken(s.deps.db, s.deps.keys.tokenHash, s.clock(), access_token), /invalid_token/);
    const verified = await verifyAccessToken(s.deps.db, s.deps.keys.tokenHash, s.clock(), access_token, { services: true });
    assert.ok('service' in verified);
    assert.equal(verified.service.sub, s.service.client.serviceSub);
    assert.equal(verified.client.clientId, s.service.client.clientId);
    // A disabled application's service token stops working.
    await updateClient(s.deps.db, s.clock, s.service.client.clientId, { enabled: false });
    await assert.rejects(verifyAccessToken(s.deps.db, s.deps.keys.tokenHash, s.clock(), access_token, { services: true }), /invalid_token/);
    await updateClient(s.deps.db, s.clock, s.service.client.clientId, { enabled: true });
  });

  test('client_credentials: the service identity "service-account-<client_id>" can never sign in', async () => {
    const row = await s.deps.db.selectFrom('users').selectAll().where('sub', '=', s.service.client.serviceSub!).executeTakeFirstOrThrow();
    assert.equal(row.name, `service-account-${s.service.client.clientId}`);
    assert.equal(row.email, null);
    assert.equal(row.phone_number, null);
    const browser = new TinyBrowser(s);
    const res = await browser.submit('/signin', '/signin', { identifier: row.name!, password: 'any password at all' });
    assert.equal(res.statusCode, 401, 'no e-mail or phone, so nothing names it at sign-in');
  });

  test('client_credentials: an operator cannot give the service identity an e-mail, a password or a role (it fails because it is no person)', async () => {
    const op = { db: s.deps.db, clock: s.clock, hashKey: s.deps.keys.tokenHash, objects: s.deps.objects, actor: 'cli' as const, ip: null };
    const sub = s.service.client.serviceSub!;
    const refused = (e: unknown) => e instanceof AccountError && e.code === 'service_account';
    await assert.rejects(updateAccountAsOperator(op, sub, { email: 'svc@example.com' }), refused);
    await assert.rejects(setPasswordAsOperator(op, sub, 'a long enough password'), refused);
    await assert.rejects(addRoleAsOperator(op, sub, 'operator'), refused);
  });

  // ——— the device grant ———

  test('device authorization (RFC 8628 §3.2): user_code "XXXX-XXXX" from an unambiguous alphabet, verification_uri {base}/device, verification_uri_complete, expires_in, interval', async () => {
    const start = await s.startDevice();
    assert.match(start.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    assert.equal(start.verification_uri, 'http://signet.test/device');
    assert.equal(start.verification_uri_complete, `http://signet.test/device?user_code=${start.user_code}`);
    assert.equal(start.expires_in, 900);
    assert.equal(start.interval, 5);
    assert.equal(start.device_code.length, 44);
    const stored = await s.deps.db.selectFrom('device_authorizations').selectAll().execute();
    assert.ok(stored.every((r) => r.device_code_hash !== start.device_code && r.user_code_hash !== start.user_code.replace('-', '')), 'device and user codes are stored as keyed hashes only');
  });

  test('device authorization fails because a confidential application sent no secret (invalid_client) or asked for an unregistered scope (invalid_scope)', async () => {
    assertOAuthError(await s.form('/oauth/device_authorization', { client_id: s.deviceConfidential.client.clientId }), 401, 'invalid_client');
    assertOAuthError(await s.form('/oauth/device_authorization', { client_id: s.device.clientId, scope: 'openid phone' }), 400, 'invalid_scope');
  });

  test('RFC 8628 §3.5 "authorization_pending": the person has not decided yet', async () => {
    const start = await s.startDevice();
    assertOAuthError(await s.poll(start.device_code), 400, 'authorization_pending');
  });

  test('RFC 8628 §3.5 "slow_down": polling sooner than the interval — "the interval MUST be increased by 5 seconds for this and all subsequent requests"', async () => {
    const start = await s.startDevice();
    assertOAuthError(await s.poll(start.device_code), 400, 'authorization_pending');
    s.clock.advance(1 * SECOND);
    assertOAuthError(await s.poll(start.device_code), 400, 'slow_down');
    // The interval is 10 s now: 6 s later is still too soon (and makes it 15 s).
    s.clock.advance(6 * SECOND);
    assertOAuthError(await s.poll(start.device_code), 400, 'slow_down');
    s.clock.advance(14 * SECOND);
    assertOAuthError(await s.poll(start.device_code), 400, 'slow_down');
    s.clock.advance(20 * SECOND);
    assertOAuthError(await s.poll(start.device_code), 400, 'authorization_pending');
    const row = await s.deps.db.selectFrom('device_authorizations').select('interval_seconds').where('status', '=', 'pending').orderBy('interval_seconds', 'desc').executeTakeFirstOrThrow();
    assert.equal(row.interval_seconds, 20);
  });

  test('RFC 8628 §3.5 "expired_token": the device code has expired after expires_in', async () => {
    const start = await s.startDevice();
    s.clock.advance(15 * MINUTE);
    assertOAuthError(await s.poll(start.device_code), 400, 'expired_token');
    // and the person can no longer enter it
    const browser = new TinyBrowser(s);
    const res = await browser.submit('/device', '/device', { user_code: start.user_code });
    assert.equal(res.statusCode, 400);
  });

  test('device grant: a person enters the code at /device (case- and dash-insensitive), signs in, chooses Allow; "You can return to your device"; the poll gets tokens', async () => {
    const start = await s.startDevice();
    const browser = new TinyBrowser(s);
    const done = await approveAtDevicePage(s, browser, start.user_code.toLowerCase().replace('-', ''), 'allow');
    assert.equal(done.statusCode, 200, done.body);
    assert.match(done.body, /You can return to your device/);
    s.clock.advance(5 * SECOND);
    const res = await s.poll(start.device_code);
    assert.equal(res.statusCode, 200, res.body);
    const tokens = res.json<{ access_token: string; refresh_token: string; scope: string; expires_in: number; token_type: string }>();
    assert.equal(tokens.scope, 'openid profile');
    assert.equal(tokens.expires_in, 7200);
    const me = await s.app.inject({ method: 'GET', url: '/oauth/userinfo', headers: { host: s.host, authorization: `Bearer ${tokens.access_token}` } });
    assert.equal(me.statusCode, 200);
    assert.equal(me.json<{ sub: string }>().sub, s.sub);
    // The device code is single use.
    s.clock.advance(5 * SECOND);
    assertOAuthError(await s.poll(start.device_code), 400, 'invalid_grant');
    // A public application with --grant device_code refreshes without a secret (RFC 6749 §6); rotation goes on as usual.
    const refreshed = await s.form('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: s.device.clientId });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assertOAuthError(await s.form('/oauth/token', { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: s.device.clientId }), 400, 'invalid_grant');
    // The grant is the person's, listed on /account like any other.
    const grant = await s.deps.db.selectFrom('grants').selectAll().where('sub', '=', s.sub).where('client_id', '=', s.device.clientId).executeTakeFirst();
    assert.ok(grant);
  });

  test('RFC 8628 §3.5 "access_denied": the person chose Deny', async () => {
    const start = await s.startDevice();
    const browser = new TinyBrowser(s);
    const done = await approveAtDevicePage(s, browser, start.user_code, 'deny');
    assert.equal(done.statusCode, 200);
    s.clock.advance(10 * SECOND);
    assertOAuthError(await s.poll(start.device_code), 400, 'access_denied');
  });

  test('device grant: a confidential application polls with its client_secret; another application\'s device code is invalid_grant', async () => {
    const res = await s.form('/oauth/device_authorization', { client_id: s.deviceConfidential.client.clientId, client_secret: s.deviceConfidential.secret });
    assert.equal(res.statusCode, 200, res.body);
    const start = res.json<DeviceStart>();
    assertOAuthError(await s.form('/oauth/token', { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: start.device_code, client_id: s.deviceConfidential.client.clientId }), 401, 'invalid_client');
    assertOAuthError(await s.form('/oauth/token', { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: start.device_code, client_id: s.deviceConfidential.client.clientId, client_secret: s.deviceConfidential.secret }), 400, 'authorization_pending');
    assertOAuthError(await s.poll(start.device_code), 400, 'invalid_grant');
  });

  test('"brute-force limits on user-code entry": per browser, then per address; 429 with Retry-After', async () => {
    s.clock.advance(20 * MINUTE); // a fresh window
    const browser = new TinyBrowser(s, s.host, { 'x-forwarded-for': '203.0.113.7' });
    for (let i = 0; i < 10; i++) assert.equal((await browser.submit('/device', '/device', { user_code: 'BBBB-BBBB' })).statusCode, 400);
    const refused = await browser.submit('/device', '/device', { user_code: 'BBBB-BBBB' });
    assert.equal(refused.statusCode, 429);
    assert.ok(Number(refused.headers['retry-after']) > 0);
    assert.match(refused.body, /Too many codes/);
    // Other browsers from the same address: up to the address's limit (20 entries), then refused too.
    let status = 0;
    for (let i = 0; i < 10 && status !== 429; i++) status = (await new TinyBrowser(s).submit('/device', '/device', { user_code: 'BBBB-BBBB' })).statusCode;
    assert.equal(status, 429);
  });

  test('"audit events and the token metrics per grant": token.client_credentials, device.approved / device.denied, the statistics and signet_tokens_issued_total by grant', async () => {
    const types = (await s.deps.db.selectFrom('audit_events').select('type').execute()).map((e) => e.type);
    for (const type of ['token.client_credentials', 'device.approved', 'device.denied', 'device.code_throttled']) assert.ok(types.includes(type), type);
    const counts = await tokenGrantsByGrantSince(s.deps.db, 0);
    assert.deepEqual(counts, { authorization_code: 0, client_credentials: 3, device_code: 1 });
    const issued = (await auditCounters.tokensIssued.get()).values;
    for (const grant of ['client_credentials', 'device_code']) assert.ok((issued.find((v) => v.labels.grant === grant)?.value ?? 0) >= 1, grant);
  });

  test('the sweep forgets device authorizations a day after they ended', async () => {
    s.clock.advance(2 * 24 * 60 * MINUTE);
    const removed = await sweepExpired(s.deps.db, s.clock);
    assert.ok(removed.deviceAuthorizations! > 0);
    assert.equal((await s.deps.db.selectFrom('device_authorizations').selectAll().execute()).length, 0);
  });

  test('discovery lists device_authorization_endpoint and the extra grant_types_supported', async () => {
    const doc = (await s.app.inject({ method: 'GET', url: '/.well-known/openid-configuration', headers: { host: s.host } })).json<Record<string, unknown>>();
    assert.equal(doc.device_authorization_endpoint, 'http://signet.test/oauth/device_authorization');
    assert.deepEqual(doc.grant_types_supported, ['authorization_code', 'refresh_token', 'client_credentials', DEVICE_CODE_GRANT_TYPE]);
  });
});
