// POST /oauth/introspect (RFC 7662, issue 43 part 1): every answer over HTTP (app.inject) on SQLite and
// PostgreSQL; then openid-client v6 (tokenIntrospection, through discovery) and Python's Authlib
// (OAuth2Session.introspect_token) against a listening Signet.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import { createAccount } from '../../src/accounts/accounts.ts';
import { findClient, registerClient, updateClient } from '../../src/clients/clients.ts';
import { DAY, HOUR } from '../../src/config/clock.ts';
import { issueTokenPair } from '../../src/oauth/token/issue-tokens.ts';
import { TEST_BASE_URL } from '../helpers/app.ts';
import { forEachDatabase, sqliteDatabase } from '../helpers/databases.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';
import { assertOAuthError, oauthFixture, type OAuthFixture } from './token-fixtures.ts';

const MCP = `${TEST_BASE_URL}/mcp`;

forEachDatabase('token introspection (RFC 7662)', (open) => {
  let f: OAuthFixture;
  before(async () => {
    f = await oauthFixture(await open());
  });
  after(() => f.app.close());

  const introspect = (form: Record<string, string>) => f.post('/oauth/introspect', { client_id: f.confidential.client.clientId, client_secret: f.confidential.secret, ...form });
  const inactive = async (form: Record<string, string>, why: string) => {
    const res = await introspect(form);
    assert.equal(res.statusCode, 200, `${why}: ${res.body}`);
    assert.equal(res.headers['cache-control'], 'no-store');
    // RFC 7662 §2.2: "{"active": false}" and nothing else — no hint of why
    assert.equal(res.body, '{"active":false}', why);
  };

  test('RFC 7662 §2.2: a live access token → {"active":true,"sub","client_id","scope","exp","iat","token_type":"Bearer","iss"}; no aud when it names no resource; the hint is only where the search starts', async () => {
    const tokens = await f.exchange('openid profile');
    const now = Math.floor(f.clock() / 1000);
    const expected = { active: true, sub: f.sub, client_id: f.confidential.client.clientId, scope: 'openid profile', exp: now + 7200, iat: now, token_type: 'Bearer', iss: TEST_BASE_URL };
    for (const hint of [{}, { token_type_hint: 'access_token' }, { token_type_hint: 'refresh_token' }, { token_type_hint: 'something_else' }] as Array<Record<string, string>>) {
      const res = await introspect({ token: tokens.access_token, ...hint });
      assert.equal(res.statusCode, 200, res.body);
      assert.equal(res.headers['content-type'], 'application/json; charset=utf-8');
      assert.deepEqual(res.json(), expected, JSON.stringify(hint));
    }
  });

  test('RFC 7662 §2.2 with RFC 8707: an access token issued for a resource has it as aud', async () => {
    f.clock.advance(1000);
    const tokens = await f.exchange('openid');
    // the chain just made, as if authorized with resource={base}/mcp (the flow itself is agents-oauth.test.ts's)
    await f.deps.db.updateTable('token_chains').set({ resource: MCP }).where('client_id', '=', f.confidential.client.clientId).where('created_at', '=', f.clock()).execute();
    const res = await introspect({ token: tokens.access_token });
    assert.equal(res.json<{ aud: string }>().aud, MCP);
  });

  test('RFC 7662: a live refresh token → active with token_type refresh_token and the chain\'s end as exp, with or without the hint ("extend its search across all of its supported token types")', async () => {
    f.clock.advance(1000);
    const tokens = await f.exchange('openid email');
    const chain = await f.deps.db.selectFrom('token_chains').select(['expires_at', 'created_at']).where('client_id', '=', f.confidential.client.clientId).where('created_at', '=', f.clock()).executeTakeFirstOrThrow();
    for (const hint of [{ token_type_hint: 'refresh_token' }, {}] as Array<Record<string, string>>) {
      const res = await introspect({ token: tokens.refresh_token, ...hint });
      assert.deepEqual(res.json(), { active: true, sub: f.sub, client_id: f.confidential.client.clientId, scope: 'openid email', exp: Math.floor(chain.expires_at / 1000), iat: Math.floor(chain.created_at / 1000), token_type: 'refresh_token', iss: TEST_BASE_URL });
    }
  });

  test('issue 43: {"active":false} and nothing else for anything not live — unknown, expired, revoked, replay-revoked, another application\'s tokens', async () => {
    await inactive({ token: 'not-a-token-this-server-issued' }, 'unknown');
    await inactive({ token: 'x'.repeat(44), token_type_hint: 'refresh_token' }, 'unknown, as a refresh token');

    // another application's access and refresh tokens (the caller is no resource they name)
    const theirs = await issueTokenPair(f.deps.db, f.deps.keys.tokenHash, f.clock(), { clientId: f.other.client.clientId, sub: f.sub, scope: 'openid', expiresAt: f.clock() + 30 * DAY });
    await inactive({ token: theirs.access_token }, "another application's access token");
    await inactive({ token: theirs.refresh_token, token_type_hint: 'refresh_token' }, "another application's refresh token");

    // revoked (RFC 7009 through /oauth/revoke)
    const revoked = await f.exchange();
    assert.equal((await f.revoke({ client_id: f.confidential.client.clientId, client_secret: f.confidential.secret, token: revoked.access_token })).statusCode, 200);
    assert.equal((await f.revoke({ client_id: f.confidential.client.clientId, client_secret: f.confidential.secret, token: revoked.refresh_token, token_type_hint: 'refresh_token' })).statusCode, 200);
    await inactive({ token: revoked.access_token }, 'revoked access token');
    await inactive({ token: revoked.refresh_token, token_type_hint: 'refresh_token' }, 'revoked refresh token');

    // rotated, then replayed: every token of the chain revoked (spec "treated as replay")
    const first = await f.exchange();
    const rotated = (await f.refresh(first.refresh_token)).json<{ access_token: string; refresh_token: string }>();
    await inactive({ token: first.refresh_token, token_type_hint: 'refresh_token' }, 'a rotated refresh token');
    assert.equal((await introspect({ token: rotated.access_token })).json<{ active: boolean }>().active, true);
    assert.equal((await f.refresh(first.refresh_token)).statusCode, 400, 'the replay');
    await inactive({ token: rotated.access_token }, 'access token after the replay');
    await inactive({ token: rotated.refresh_token, token_type_hint: 'refresh_token' }, 'refresh token after the replay');

    // expired: the access token after 2 hours (the injected clock), the refresh token after the chain's 30 days
    const aging = await f.exchange();
    f.clock.advance(2 * HOUR);
    await inactive({ token: aging.access_token }, 'expired access token');
    assert.equal((await introspect({ token: aging.refresh_token })).json<{ active: boolean }>().active, true, 'the refresh token lives on');
    f.clock.advance(30 * DAY);
    await inactive({ token: aging.refresh_token, token_type_hint: 'refresh_token' }, 'expired refresh chain');
  });

  test('a disabled application\'s tokens are not live (a disabled application gets no access)', async () => {
    const tokens = await f.exchange();
    await updateClient(f.deps.db, f.clock, f.confidential.client.clientId, { enabled: false });
    try {
      await inactive({ token: tokens.access_token }, 'access token of a disabled application');
      await inactive({ token: tokens.refresh_token, token_type_hint: 'refresh_token' }, 'refresh token of a disabled application');
    } finally {
      await updateClient(f.deps.db, f.clock, f.confidential.client.clientId, { enabled: true });
    }
  });

  test('RFC 7662 §2.1 "the protected resource … MUST … authenticate": client_secret_post as at the token endpoint — no secret, a wrong one, a public client, HTTP Basic → 401 invalid_client; no token → invalid_request; GET → 405', async () => {
    const tokens = await f.exchange();
    const basic = `Basic ${Buffer.from(`${f.confidential.client.clientId}:${f.confidential.secret}`).toString('base64')}`;
    assertOAuthError(await f.post('/oauth/introspect', { client_id: f.confidential.client.clientId, token: tokens.access_token }), 401, 'invalid_client');
    assertOAuthError(await f.post('/oauth/introspect', { client_id: f.confidential.client.clientId, client_secret: 'wrong', token: tokens.access_token }), 401, 'invalid_client');
    assertOAuthError(await f.post('/oauth/introspect', { client_id: f.publicClient.clientId, token: tokens.access_token }), 401, 'invalid_client');
    assertOAuthError(await f.post('/oauth/introspect', { token: tokens.access_token }, { authorization: basic }), 400, 'invalid_request');
    assertOAuthError(await introspect({}), 400, 'invalid_request');
    const get = await f.app.inject({ method: 'GET', url: '/oauth/introspect', headers: { host: new URL(TEST_BASE_URL).host } });
    assert.equal(get.statusCode, 405);
    assert.equal(get.headers.allow, 'POST');
  });

  test('rate-limited: failed client authentications of one application end in 429 temporarily_unavailable with Retry-After (the token endpoint\'s limits)', async () => {
    const g = await oauthFixture(await open());
    try {
      let last;
      for (let i = 0; i < 101; i++) last = await g.post('/oauth/introspect', { client_id: g.confidential.client.clientId, client_secret: 'wrong', token: 'x' });
      assertOAuthError(last!, 429, 'temporarily_unavailable');
      assert.ok(Number(last!.headers['retry-after']) > 0);
      // the right secret still gets through (client_ids are public: nobody may cut an application off)
      assert.equal((await g.post('/oauth/introspect', { client_id: g.confidential.client.clientId, client_secret: g.confidential.secret, token: 'x' })).body, '{"active":false}');
    } finally {
      await g.app.close();
    }
  });

  test('issue 43: a client_credentials token (the application acting as itself) is active with sub = the application\'s service identity, never a person; to another application it is {"active":false}', async () => {
    const service = await registerClient(f.deps.db, f.clock, f.deps.keys.tokenHash, { name: 'Nightly converter', redirectUris: [], scopes: ['openid', 'documents'], grants: ['client_credentials'] });
    const issued = await f.post('/oauth/token', { grant_type: 'client_credentials', client_id: service.client.clientId, client_secret: service.clientSecret!, scope: 'documents' });
    assert.equal(issued.statusCode, 200, issued.body);
    const accessToken = issued.json<{ access_token: string }>().access_token;
    const res = await f.post('/oauth/introspect', { client_id: service.client.clientId, client_secret: service.clientSecret!, token: accessToken });
    const now = Math.floor(f.clock() / 1000);
    assert.deepEqual(res.json(), { active: true, sub: service.client.serviceSub, client_id: service.client.clientId, scope: 'documents', exp: now + 7200, iat: now, token_type: 'Bearer', iss: TEST_BASE_URL });
    assert.notEqual(res.json<{ sub: string }>().sub, f.sub);
    await inactive({ token: accessToken }, "another application's client_credentials token");
  });

  test('discovery and RFC 8414 metadata list introspection_endpoint with client_secret_post', async () => {
    for (const path of ['/.well-known/openid-configuration', '/.well-known/oauth-authorization-server']) {
      const doc = (await f.app.inject({ url: path, headers: { host: new URL(TEST_BASE_URL).host } })).json<Record<string, unknown>>();
      assert.equal(doc.introspection_endpoint, `${TEST_BASE_URL}/oauth/introspect`, path);
      assert.deepEqual(doc.introspection_endpoint_auth_methods_supported, ['client_secret_post'], path);
    }
  });
});

/** Authlib is there when Debian's python3-authlib is installed: else a printed skip (a failure in CI). */
function authlibUnavailableReason(): string | undefined {
  const probe = spawnSync('/usr/bin/python3', ['-c', 'import authlib, requests'], { encoding: 'utf8' });
  return probe.status === 0 ? undefined : `/usr/bin/python3 cannot import authlib and requests (install Debian's python3-authlib): ${(probe.stderr || probe.error?.message || '').trim().split('\n').pop()}`;
}

// Authlib's OAuth2Session.introspect_token with client_secret_post; prints the JSON answer.
const AUTHLIB_INTROSPECT = `
import json, sys
from authlib.integrations.requests_client import OAuth2Session
url, client_id, secret, token, hint = sys.argv[1:6]
session = OAuth2Session(client_id, secret, revocation_endpoint_auth_method='client_secret_post')
response = session.introspect_token(url, token=token, token_type_hint=hint or None)
print(json.dumps({'status': response.status_code, 'body': response.json()}))
`;

describe('token introspection with real client libraries', () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let server: RunningSignet;
  let sub: string;
  let resourceServer: { clientId: string; clientSecret: string };
  let tokens: { access_token: string; refresh_token: string };
  let others: { access_token: string; refresh_token: string };

  before(async () => {
    database = await sqliteDatabase();
    server = await startSignet(database);
    const { db, clock, keys } = server.deps;
    sub = (await createAccount(db, clock, { email: 'grace@example.com', name: 'Grace Hopper', emailVerified: true, password: 'compiler-1952-flowmatic' })).sub;
    const registered = await registerClient(db, clock, keys.tokenHash, { name: 'Team API', redirectUris: ['https://api.example/cb'], scopes: ['openid', 'profile', 'documents'], grants: ['client_credentials'] });
    resourceServer = { clientId: registered.client.clientId, clientSecret: registered.clientSecret! };
    const other = await registerClient(db, clock, keys.tokenHash, { name: 'Other', redirectUris: ['https://other.example/cb'], scopes: ['openid'] });
    tokens = await issueTokenPair(db, keys.tokenHash, clock(), { clientId: resourceServer.clientId, sub, scope: 'openid documents', expiresAt: clock() + 30 * DAY });
    others = await issueTokenPair(db, keys.tokenHash, clock(), { clientId: other.client.clientId, sub, scope: 'openid', expiresAt: clock() + 30 * DAY });
  });

  after(async () => {
    await server?.close();
    await database?.dispose();
  });

  test("openid-client v6 tokenIntrospection (through discovery, client_secret_post): a live access token is active with sub, client_id and scope; another application's token and an unknown one are {active:false}", async () => {
    const config = await client.discovery(new URL(server.baseUrl), resourceServer.clientId, { client_secret: resourceServer.clientSecret }, client.ClientSecretPost(resourceServer.clientSecret), { execute: [client.allowInsecureRequests] });
    const live = await client.tokenIntrospection(config, tokens.access_token);
    assert.equal(live.active, true);
    assert.equal(live.sub, sub);
    assert.equal(live.client_id, resourceServer.clientId);
    assert.equal(live.scope, 'openid documents');
    assert.equal(live.token_type, 'Bearer');
    assert.equal(live.iss, server.baseUrl);
    assert.equal((live.exp as number) - (live.iat as number), 7200);
    const refresh = await client.tokenIntrospection(config, tokens.refresh_token, { token_type_hint: 'refresh_token' });
    assert.equal(refresh.active, true);
    assert.equal(refresh.token_type, 'refresh_token');
    assert.deepEqual({ ...(await client.tokenIntrospection(config, others.access_token)) }, { active: false });
    // issue 43: its own client_credentials token (openid-client's clientCredentialsGrant), sub = its service identity
    const own = await client.clientCredentialsGrant(config, { scope: 'documents' });
    const service = await client.tokenIntrospection(config, own.access_token);
    assert.equal(service.active, true);
    assert.equal(service.sub, (await findClient(server.deps.db, resourceServer.clientId))!.serviceSub);
    assert.deepEqual({ ...(await client.tokenIntrospection(config, 'unknown')) }, { active: false });
  });

  test('Authlib (Python) OAuth2Session.introspect_token with client_secret_post: active for its own access token, {active:false} for another application\'s refresh token', { skip: skipUnlessAvailable('Authlib (python3-authlib)', authlibUnavailableReason()) }, async () => {
    // Not spawnSync: the Python process calls this very process's server.
    const run = (token: string, hint: string) =>
      new Promise<{ status: number; body: Record<string, unknown> }>((resolve, reject) => {
        const child = spawn('/usr/bin/python3', ['-c', AUTHLIB_INTROSPECT, `${server.baseUrl}/oauth/introspect`, resourceServer.clientId, resourceServer.clientSecret, token, hint]);
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
        child.on('error', reject);
        child.on('close', (code) => (code === 0 ? resolve(JSON.parse(out) as { status: number; body: Record<string, unknown> }) : reject(new Error(`python exited ${code}: ${err}`))));
      });
    const live = await run(tokens.access_token, 'access_token');
    assert.equal(live.status, 200);
    assert.equal(live.body.active, true);
    assert.equal(live.body.sub, sub);
    assert.equal(live.body.client_id, resourceServer.clientId);
    assert.deepEqual(await run(others.refresh_token, 'refresh_token'), { status: 200, body: { active: false } });
  });
});
