// Issue 39, "Authorization for agents": dynamic client registration (RFC 7591), resource indicators
// (RFC 8707), protected resource and authorization server metadata (RFC 9728, RFC 8414), and the consent
// page for an application that registered itself — over HTTP (app.inject), on SQLite and PostgreSQL.
import assert from 'node:assert/strict';
import { before, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { verifyAccessToken } from '../../src/oauth/access-tokens.ts';
import { findClient, listClients, registerClient, toView } from '../../src/clients/clients.ts';
import { HOUR, DAY, MINUTE } from '../../src/config/clock.ts';
import { mcpChallenge, MCP_RESOURCE_PATH } from '../../src/oauth/resources.ts';
import { s256Challenge } from '../../src/oauth/pkce.ts';
import { sweepExpired } from '../../src/web/housekeeping.ts';
import { listAuditEvents } from '../../src/audit/audit.ts';
import { TEST_BASE_URL, testApp } from '../helpers/app.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { flowSetup, REDIRECT_URI, TinyBrowser, type Flow } from './authorize-support.ts';

const MCP = `${TEST_BASE_URL}${MCP_RESOURCE_PATH}`;
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r7wW1gFWFOEjXk';
const PKCE = { code_challenge: s256Challenge(VERIFIER), code_challenge_method: 'S256' };

type Registered = { client_id: string; client_secret?: string; client_secret_expires_at?: number; client_id_issued_at: number; [k: string]: unknown };

forEachDatabase('authorization for agents (issue 39)', (open) => {
  let f: Flow;
  let address = 0;
  /** Each test registers from its own address, so the per-address limit counts only what the test does. */
  const nextAddress = () => `198.51.100.${++address}`;

  before(async () => {
    f = await flowSetup(await open(), {}, ['openid', 'profile', 'email', 'phone', 'documents']);
  });

  const register = (body: unknown, ip = nextAddress(), contentType = 'application/json') =>
    f.app.inject({ method: 'POST', url: '/oauth/register', remoteAddress: ip, headers: { host: f.host, 'content-type': contentType }, payload: typeof body === 'string' ? body : JSON.stringify(body) });

  const token = (form: Record<string, string>) =>
    f.app.inject({ method: 'POST', url: '/oauth/token', headers: { host: f.host, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(form).toString() });

  function assertError(res: LightMyRequestResponse, status: number, error: string): void {
    assert.equal(res.statusCode, status, res.body);
    assert.equal(res.json<{ error: string }>().error, error, res.body);
    assert.equal(typeof res.json<{ error_description: string }>().error_description, 'string');
  }

  /** Registers a public agent with a loopback redirect URI, then runs the flow in a fresh browser; returns the callback URL. */
  async function publicAgent(redirectUri = 'http://127.0.0.1:33418/callback'): Promise<Registered> {
    const res = await register({ client_name: 'Claude', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], scope: 'documents' });
    assert.equal(res.statusCode, 201, res.body);
    return res.json<Registered>();
  }

  /** A code through the person's flow: sign in, then allow — or straight back when an earlier grant covers the request. */
  async function codeFor(clientId: string, redirectUri: string, params: Record<string, string>): Promise<string> {
    const browser = new TinyBrowser(f);
    const id = await browser.authorize({ client_id: clientId, redirect_uri: redirectUri, scope: 'documents', ...PKCE, ...params });
    const signedIn = await browser.signIn(id);
    assert.equal(signedIn.statusCode, 303, signedIn.body);
    let next = String(signedIn.headers.location);
    if (next.startsWith('/consent')) {
      const page = await browser.get(next);
      next = String((page.statusCode === 200 ? await browser.consent(id, 'allow') : page).headers.location);
    }
    const landed = new URL(next);
    const code = landed.searchParams.get('code');
    assert.ok(code, `a code at the callback: ${landed.href}`);
    return code;
  }

  test('RFC 7591 §3.2.1: a public client (token_endpoint_auth_method none) registers with https, loopback http (127.0.0.1, [::1], localhost) and private-use (reverse-domain, RFC 8252 §7.1) redirect URIs — 201 with client_id, client_id_issued_at and its metadata, no secret; `dynamic: true` in the registry', async () => {
    const redirectUris = ['https://agent.example/cb', 'http://127.0.0.1/callback', 'http://[::1]:8080/cb', 'http://localhost:3000/oauth/callback', 'com.example.agent:/oauth2redirect'];
    const res = await register({ client_name: 'Claude', redirect_uris: redirectUris, token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], scope: 'openid documents', client_uri: 'https://agent.example', logo_uri: 'https://agent.example/logo.png', unknown_field: 'ignored (RFC 7591 §2)' });
    assert.equal(res.statusCode, 201, res.body);
    assert.equal(res.headers['cache-control'], 'no-store');
    const body = res.json<Registered>();
    assert.match(body.client_id, /^[0-9a-f]{32}$/);
    assert.equal(body.client_id_issued_at, Math.floor(f.clock() / 1000));
    assert.equal(body.client_secret, undefined);
    assert.deepEqual(
      { ...body, client_id: 'x', client_id_issued_at: 0 },
      { client_id: 'x', client_id_issued_at: 0, client_name: 'Claude', redirect_uris: redirectUris, grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', scope: 'openid documents', client_uri: 'https://agent.example', logo_uri: 'https://agent.example/logo.png' },
    );
    const client = (await findClient(f.deps.db, body.client_id))!;
    assert.equal(client.dynamic, true);
    assert.equal(client.isPublic, true);
    assert.equal(toView(client).dynamic, true, 'signet client list and the admin API show dynamic: true');
    assert.ok((await listClients(f.deps.db)).some((c) => c.clientId === body.client_id && c.dynamic));
    assert.equal(toView((await findClient(f.deps.db, f.clientId))!).dynamic, false, 'an application an operator registered is not dynamic');
  });

  test('RFC 7591 §3.2.1: a confidential client (client_secret_post) gets its secret once, with client_secret_expires_at 0; only a keyed hash of it is stored', async () => {
    const res = await register({ client_name: 'Server agent', redirect_uris: ['https://agent.example/cb'], token_endpoint_auth_method: 'client_secret_post' });
    assert.equal(res.statusCode, 201, res.body);
    const body = res.json<Registered>();
    assert.equal(typeof body.client_secret, 'string');
    assert.equal(body.client_secret_expires_at, 0);
    assert.equal(body.scope, 'openid profile documents', 'no scope sent: openid profile documents');
    const client = (await findClient(f.deps.db, body.client_id))!;
    assert.equal(client.isPublic, false);
    assert.ok(client.secretHash && client.secretHash !== body.client_secret && !client.secretHash.includes(body.client_secret!));
    assert.ok(!f.logs.join('').includes(body.client_secret!), 'the secret is never logged');
  });

  test('RFC 7591 §3.2.2 invalid_redirect_uri for anything but https:, loopback http: or a private-use scheme — plain http: to another host, javascript:, data:, a fragment, user info, a bare scheme, none at all', async () => {
    for (const uris of [['http://agent.example/cb'], ['javascript:alert(1)'], ['data:text/html,hi'], ['https://agent.example/cb#frag'], ['https://user:pw@agent.example/cb'], ['myapp:/cb'], ['http://127.0.0.1.evil.example/cb'], ['not a uri'], [], 'https://agent.example/cb', [42]]) {
      const res = await register({ client_name: 'Bad', redirect_uris: uris, token_endpoint_auth_method: 'none' });
      assertError(res, 400, 'invalid_redirect_uri');
    }
    assertError(await register({ client_name: 'Bad' }), 400, 'invalid_redirect_uri');
  });

  test('RFC 7591 §3.2.2 invalid_client_metadata for other bad fields: client_secret_basic, an unknown scope, response_types token, grant_types without authorization_code, logo_uri over http, a name with control characters, a body that is not a JSON object', async () => {
    const ok = { redirect_uris: ['https://agent.example/cb'] };
    for (const extra of [{ token_endpoint_auth_method: 'client_secret_basic' }, { scope: 'openid admin' }, { response_types: ['token'] }, { grant_types: ['refresh_token'] }, { grant_types: ['client_credentials', 'authorization_code'] }, { logo_uri: 'http://agent.example/logo.png' }, { client_uri: 'javascript:alert(1)' }, { client_name: 'Bad\u0000name' }, { client_name: 42 }]) {
      assertError(await register({ ...ok, ...extra }), 400, 'invalid_client_metadata');
    }
    assertError(await register('[1,2]'), 400, 'invalid_client_metadata');
    assertError(await register('{"redirect_uris":'), 400, 'invalid_client_metadata');
    assertError(await register('redirect_uris=https://agent.example/cb', nextAddress(), 'application/x-www-form-urlencoded'), 400, 'invalid_client_metadata');
    const get = await f.app.inject({ url: '/oauth/register', headers: { host: f.host } });
    assert.equal(get.statusCode, 405);
  });

  test('rate limit per address: the 21st registration within an hour from one address is 429 with Retry-After; another address and the next hour are not affected', async () => {
    const ip = nextAddress();
    for (let i = 0; i < 20; i++) assert.equal((await register({ redirect_uris: ['https://agent.example/cb'], token_endpoint_auth_method: 'none' }, ip)).statusCode, 201);
    const refused = await register({ redirect_uris: ['https://agent.example/cb'], token_endpoint_auth_method: 'none' }, ip);
    assertError(refused, 429, 'temporarily_unavailable');
    assert.ok(Number(refused.headers['retry-after']) > 0 && Number(refused.headers['retry-after']) <= 3600);
    assert.equal((await register({ redirect_uris: ['https://agent.example/cb'], token_endpoint_auth_method: 'none' })).statusCode, 201, 'another address');
    f.clock.advance(HOUR + MINUTE);
    assert.equal((await register({ redirect_uris: ['https://agent.example/cb'], token_endpoint_auth_method: 'none' }, ip)).statusCode, 201, 'the next hour');
  });

  test('registrations never used for a grant expire after a day (injected clock): the sweep deletes an unused one older than a day and keeps a younger one and one a person allowed; audited client.registered and client.expired', async () => {
    const unused = await publicAgent();
    const used = await publicAgent('http://127.0.0.1:40000/cb');
    await codeFor(used.client_id, 'http://127.0.0.1:40000/cb', {});
    f.clock.advance(DAY - MINUTE);
    const younger = await publicAgent();
    f.clock.advance(2 * MINUTE);
    await sweepExpired(f.deps.db, f.clock);
    assert.equal(await findClient(f.deps.db, unused.client_id), undefined, 'unused for a day: gone');
    assert.ok(await findClient(f.deps.db, used.client_id), 'used for a grant: kept');
    assert.ok(await findClient(f.deps.db, younger.client_id), 'younger than a day: kept');
    const events = (await listAuditEvents(f.deps.db, { clientId: unused.client_id })).events.map((e) => e.type);
    assert.deepEqual(events.sort(), ['client.expired', 'client.registered']);
  });

  test('SIGNET_CLIENT_REGISTRATION=closed: POST /oauth/register is 403 with an RFC 7591 error body, and the RFC 8414 metadata names no registration_endpoint', async () => {
    const closed = await testApp(await open(), { SIGNET_CLIENT_REGISTRATION: 'closed' });
    const res = await closed.app.inject({ method: 'POST', url: '/oauth/register', headers: { host: f.host, 'content-type': 'application/json' }, payload: JSON.stringify({ redirect_uris: ['https://agent.example/cb'] }) });
    assertError(res, 403, 'access_denied');
    assert.deepEqual(await listClients(closed.deps.db).then((all) => all.filter((c) => c.dynamic)), []);
    const metadata = (await closed.app.inject({ url: '/.well-known/oauth-authorization-server', headers: { host: f.host } })).json<Record<string, unknown>>();
    assert.equal(metadata.registration_endpoint, undefined);
    await closed.app.close();
  });

  test('metadata shapes: RFC 9728 at /.well-known/oauth-protected-resource/mcp and the root variant; RFC 8414 at /.well-known/oauth-authorization-server (the discovery facts plus registration_endpoint, S256, documents); mcpChallenge names the first', async () => {
    for (const path of ['/.well-known/oauth-protected-resource/mcp', '/.well-known/oauth-protected-resource']) {
      const res = await f.app.inject({ url: path, headers: { host: f.host } });
      assert.equal(res.statusCode, 200);
      assert.equal(res.headers['access-control-allow-origin'], '*');
      assert.deepEqual(res.json(), { resource: MCP, authorization_servers: [TEST_BASE_URL], scopes_supported: ['documents'], bearer_methods_supported: ['header'], resource_name: 'Signet documents (MCP)' });
    }
    const as = (await f.app.inject({ url: '/.well-known/oauth-authorization-server', headers: { host: f.host } })).json<Record<string, unknown>>();
    const discovery = (await f.app.inject({ url: '/.well-known/openid-configuration', headers: { host: f.host } })).json<Record<string, unknown>>();
    for (const field of ['issuer', 'authorization_endpoint', 'token_endpoint', 'revocation_endpoint', 'jwks_uri', 'response_types_supported', 'grant_types_supported']) assert.deepEqual(as[field], discovery[field], field);
    assert.equal(as.registration_endpoint, `${TEST_BASE_URL}/oauth/register`);
    assert.deepEqual(as.code_challenge_methods_supported, ['S256']);
    assert.deepEqual(as.scopes_supported, ['openid', 'profile', 'email', 'phone', 'documents']);
    assert.deepEqual(as.token_endpoint_auth_methods_supported, ['client_secret_post', 'none']);
    assert.equal(as.client_id_metadata_document_supported, true, 'Client ID Metadata Documents are accepted while registration is open');
    assert.equal(as.introspection_endpoint, `${TEST_BASE_URL}/oauth/introspect`);
    assert.deepEqual(as.protected_resources, [MCP]);
    assert.deepEqual(discovery.scopes_supported, ['openid', 'profile', 'email', 'phone'], 'spec Versioning 3: the discovery document keeps the four');
    assert.equal(mcpChallenge(TEST_BASE_URL), `Bearer resource_metadata="${TEST_BASE_URL}/.well-known/oauth-protected-resource/mcp"`);
    assert.equal(mcpChallenge(`${TEST_BASE_URL}/`, { error: 'insufficient_scope' }), `Bearer resource_metadata="${TEST_BASE_URL}/.well-known/oauth-protected-resource/mcp", error="insufficient_scope", scope="documents"`);
  });

  test('RFC 8707 §2 `resource` on authorize: an absolute URI without a fragment naming {base}/mcp; anything else — another resource, a relative one, a fragment — is invalid_target, as JSON at the endpoint after the spec\'s five checks', async () => {
    const browser = new TinyBrowser(f);
    for (const resource of ['https://other.example/mcp', `${TEST_BASE_URL}/mcp/`, '/mcp', `${MCP}#x`, `${TEST_BASE_URL}/v1`]) {
      assertError(await browser.get(f.authorizePath({ resource })), 400, 'invalid_target');
    }
    // the spec's order first: an unknown scope is still invalid_scope, whatever the resource
    assertError(await browser.get(f.authorizePath({ resource: 'https://other.example/mcp', scope: 'admin' })), 400, 'invalid_scope');
    const ok = await browser.get(f.authorizePath({ resource: MCP, scope: 'documents' }));
    assert.equal(ok.statusCode, 302, ok.body);
  });

  test('RFC 8707: the resource goes from the authorize request through the code to the tokens — verifyAccessToken returns it; the same resource at the token endpoint is accepted, another is invalid_target; a refresh keeps it', async () => {
    const code = await codeFor(f.clientId, REDIRECT_URI, { resource: MCP });
    const exchange = { grant_type: 'authorization_code', client_id: f.clientId, client_secret: f.clientSecret, code, redirect_uri: REDIRECT_URI, code_verifier: VERIFIER };
    assertError(await token({ ...exchange, resource: 'https://other.example/mcp' }), 400, 'invalid_target');
    const issued = await token({ ...exchange, resource: MCP });
    assert.equal(issued.statusCode, 200, issued.body);
    const pair = issued.json<{ access_token: string; refresh_token: string; scope: string }>();
    assert.equal(pair.scope, 'documents');
    const verified = await verifyAccessToken(f.deps.db, f.deps.keys.tokenHash, f.clock(), pair.access_token);
    assert.equal(verified.resource, MCP);
    const refresh = { grant_type: 'refresh_token', client_id: f.clientId, client_secret: f.clientSecret };
    assertError(await token({ ...refresh, refresh_token: pair.refresh_token, resource: `${TEST_BASE_URL}/other` }), 400, 'invalid_target');
    const withResource = await token({ ...refresh, refresh_token: pair.refresh_token, resource: MCP });
    assert.equal(withResource.statusCode, 200, withResource.body);
    const second = withResource.json<{ access_token: string; refresh_token: string }>();
    assert.equal((await verifyAccessToken(f.deps.db, f.deps.keys.tokenHash, f.clock(), second.access_token)).resource, MCP, 'kept across a refresh that names it');
    const without = await token({ ...refresh, refresh_token: second.refresh_token });
    assert.equal(without.statusCode, 200, without.body);
    assert.equal((await verifyAccessToken(f.deps.db, f.deps.keys.tokenHash, f.clock(), without.json<{ access_token: string }>().access_token)).resource, MCP, 'kept across a refresh that does not');
  });

  test('a token without resource keeps today\'s behaviour: verifyAccessToken gives resource null; a resource at the token endpoint for a code issued without one is invalid_target', async () => {
    const plain = await codeFor(f.clientId, REDIRECT_URI, {});
    const exchange = { grant_type: 'authorization_code', client_id: f.clientId, client_secret: f.clientSecret, redirect_uri: REDIRECT_URI, code_verifier: VERIFIER };
    assertError(await token({ ...exchange, code: plain, resource: MCP }), 400, 'invalid_target');
    const code = await codeFor(f.clientId, REDIRECT_URI, {});
    const issued = await token({ ...exchange, code });
    assert.equal(issued.statusCode, 200, issued.body);
    const verified = await verifyAccessToken(f.deps.db, f.deps.keys.tokenHash, f.clock(), issued.json<{ access_token: string }>().access_token);
    assert.equal(verified.resource, null);
  });

  test('RFC 8252 §7.3 "MUST allow any port … for loopback IP redirect URIs" for self-registered clients only; an application an operator registered keeps "byte-identical to a registered URI"', async () => {
    const agent = await publicAgent('http://127.0.0.1/callback');
    const browser = new TinyBrowser(f);
    for (const uri of ['http://127.0.0.1:49152/callback', 'http://127.0.0.1/callback']) {
      const res = await browser.get(`/oauth/authorize?${new URLSearchParams({ client_id: agent.client_id, redirect_uri: uri, scope: 'documents', ...PKCE })}`);
      assert.equal(res.statusCode, 302, `${uri}: ${res.body}`);
    }
    for (const uri of ['http://127.0.0.1:49152/other', 'http://localhost:49152/callback', 'https://127.0.0.1:49152/callback']) {
      assertError(await browser.get(`/oauth/authorize?${new URLSearchParams({ client_id: agent.client_id, redirect_uri: uri, scope: 'documents', ...PKCE })}`), 400, 'invalid_request');
    }
    const { client } = await registerClient(f.deps.db, f.clock, f.deps.keys.tokenHash, { name: 'Native app', redirectUris: ['http://127.0.0.1/callback'], isPublic: true });
    assertError(await browser.get(`/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: 'http://127.0.0.1:49152/callback', ...PKCE })}`), 400, 'invalid_request');
  });

  test('a self-registered application must use PKCE with S256 (OAuth 2.1, MCP authorization): without code_challenge, or with plain, authorize is invalid_request', async () => {
    const agent = await publicAgent();
    const browser = new TinyBrowser(f);
    const base = { client_id: agent.client_id, redirect_uri: 'http://127.0.0.1:33418/callback', scope: 'documents' };
    assertError(await browser.get(`/oauth/authorize?${new URLSearchParams(base)}`), 400, 'invalid_request');
    assertError(await browser.get(`/oauth/authorize?${new URLSearchParams({ ...base, code_challenge: VERIFIER, code_challenge_method: 'plain' })}`), 400, 'invalid_request');
  });

  test('a public self-registered client exchanges its code with PKCE and refreshes with its client_id alone (OAuth 2.1 §4.3.1); its tokens carry the resource; an operator\'s public application still needs client_secret to refresh (spec "client_secret — always")', async () => {
    const redirectUri = 'http://127.0.0.1:33418/callback';
    const agent = await publicAgent(redirectUri);
    const code = await codeFor(agent.client_id, redirectUri.replace('33418', '51234'), { resource: MCP });
    const issued = await token({ grant_type: 'authorization_code', client_id: agent.client_id, code, redirect_uri: redirectUri.replace('33418', '51234'), code_verifier: VERIFIER, resource: MCP });
    assert.equal(issued.statusCode, 200, issued.body);
    const refreshed = await token({ grant_type: 'refresh_token', client_id: agent.client_id, refresh_token: issued.json<{ refresh_token: string }>().refresh_token });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    assert.equal((await verifyAccessToken(f.deps.db, f.deps.keys.tokenHash, f.clock(), refreshed.json<{ access_token: string }>().access_token)).resource, MCP);
    assertError(await token({ grant_type: 'refresh_token', client_id: agent.client_id, refresh_token: issued.json<{ refresh_token: string }>().refresh_token }), 400, 'invalid_grant');

    const { client } = await registerClient(f.deps.db, f.clock, f.deps.keys.tokenHash, { name: 'Native app', redirectUris: [REDIRECT_URI], isPublic: true });
    const ordinary = await codeFor(client.clientId, REDIRECT_URI, { scope: 'openid' });
    const pair = await token({ grant_type: 'authorization_code', client_id: client.clientId, code: ordinary, redirect_uri: REDIRECT_URI, code_verifier: VERIFIER });
    assert.equal(pair.statusCode, 200, pair.body);
    assertError(await token({ grant_type: 'refresh_token', client_id: client.clientId, refresh_token: pair.json<{ refresh_token: string }>().refresh_token }), 401, 'invalid_client');
  });

  test('the consent page shows a self-registered application as such: its name quoted as it calls itself ("registered itself"), the host of its redirect URI, and that Signet has not verified it — in English and Simplified Chinese; an ordinary application\'s page has none of it', async () => {
    const agent = await publicAgent('http://localhost:8976/cb');
    for (const [language, named, warning] of [['en', '“Claude” (registered itself)', 'has not verified this application'], ['zh-CN', '“Claude”（自行注册）', '未验证此应用']] as const) {
      const browser = new TinyBrowser(f, f.host, { 'accept-language': language });
      const id = await browser.authorize({ client_id: agent.client_id, redirect_uri: 'http://localhost:8976/cb', scope: 'documents', ...PKCE });
      await browser.signIn(id);
      const page = await browser.get(`/consent?request=${id}`);
      assert.equal(page.statusCode, 200);
      assert.ok(page.body.includes(named.replace('“', '&#8220;')) || page.body.includes(named), `${language}: ${named}`);
      assert.ok(page.body.includes(warning), `${language}: the warning`);
      assert.ok(page.body.includes('<strong>localhost:8976</strong>'), `${language}: the redirect host`);
      assert.ok(page.body.includes(language === 'en' ? 'Read, parse and translate your documents' : '读取、解析和翻译你的文档'), `${language}: the scope documents`);
    }
    const ordinary = new TinyBrowser(f);
    const id = await ordinary.authorize({ scope: 'openid documents' });
    await ordinary.signIn(id);
    const page = await ordinary.get(`/consent?request=${id}`);
    assert.ok(page.body.includes('Demo App') && !page.body.includes('registered itself') && !page.body.includes('has not verified'));
  });
});
