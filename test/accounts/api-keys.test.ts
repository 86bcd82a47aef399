// Personal API keys (issue 40): "creation, use, revocation, expiry, another person's task (404), a key
// at /oauth/userinfo or /account (refused)", rate-limited per key, and gone with the account.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { deleteAccount } from '../../src/accounts/accounts.ts';
import { API_KEY_REQUESTS, createApiKey, listApiKeys, revokeApiKey } from '../../src/accounts/api-keys/api-keys.ts';
import { DAY } from '../../src/config/clock.ts';
import { KNOWN_SCOPES } from '../../src/oauth/scopes.ts';
import { oauthFixture, HOST, REDIRECT_URI, type OAuthFixture } from '../oauth/token-fixtures.ts';
import { issueAuthorizationCode } from '../../src/oauth/codes.ts';
import { TEST_BASE_URL } from '../helpers/app.ts';
import { forEachDatabase, type TestDatabase } from '../helpers/databases.ts';
import { plainPdf } from '../helpers/pdfs.ts';
import { createAccount } from '../../src/accounts/accounts.ts';

function multipartFile(pdf: Buffer, name: string): { body: Buffer; contentType: string } {
  const boundary = 'signet-key-test';
  const body = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: application/pdf\r\n\r\n`), pdf, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  return { body, contentType: `multipart/form-data; boundary=${boundary}` };
}

type Fixture = OAuthFixture & { otherSub: string; key(sub?: string, days?: number): Promise<{ id: string; key: string }>; tasks(headers: Record<string, string>): Promise<LightMyRequestResponse>; upload(headers: Record<string, string>): Promise<LightMyRequestResponse> };

async function fixture(database: TestDatabase): Promise<Fixture> {
  const f = await oauthFixture(database);
  const { db, clock, keys } = f.deps;
  const other = await createAccount(db, clock, { email: 'bob@example.com', password: 'another long password' });
  const pdf = await plainPdf(1);
  return {
    ...f,
    otherSub: other.sub,
    key: (sub = f.sub, days) => createApiKey(db, clock, keys.tokenHash, { sub, name: 'scripts', expiresInDays: days }),
    tasks: (headers) => f.app.inject({ method: 'GET', url: '/api/v1/docparse/tasks', headers: { host: HOST, ...headers } }),
    upload(headers) {
      const { body, contentType } = multipartFile(pdf, 'keyed.pdf');
      return f.app.inject({ method: 'POST', url: '/api/v1/docparse/tasks', headers: { host: HOST, 'content-type': contentType, ...headers }, payload: body });
    },
  };
}

forEachDatabase('personal API keys', (open) => {
  test('creation: "random 32 bytes with a recognisable prefix", shown once, stored only as a keyed hash', async () => {
    const f = await fixture(await open());
    const created = await createApiKey(f.deps.db, f.deps.clock, f.deps.keys.tokenHash, { sub: f.sub, name: 'Open WebUI', expiresInDays: 90 });
    assert.match(created.id, /^sgk_[0-9a-f]{16}$/);
    assert.match(created.key, /^sgk_[0-9a-f]{16}\.[A-Za-z0-9_-]{43}$/);
    assert.ok(created.key.startsWith(`${created.id}.`));
    assert.equal(created.expires_at, new Date(f.clock() + 90 * DAY).toISOString());
    const row = await f.deps.db.selectFrom('api_keys').selectAll().where('id', '=', created.id).executeTakeFirstOrThrow();
    assert.ok(!JSON.stringify(row).includes(created.key.split('.')[1]!), 'the secret is not stored');
    assert.deepEqual(Object.keys((await listApiKeys(f.deps.db, f.sub))[0]!).sort(), ['created_at', 'expires_at', 'id', 'last_used_at', 'name', 'revoked_at']);
  });

  test('use: X-Api-Key works on the task API (list and upload, no Origin or cookie needed); last_used_at is set', async () => {
    const f = await fixture(await open());
    const { id, key } = await f.key();
    const upload = await f.upload({ 'x-api-key': key });
    assert.equal(upload.statusCode, 201, upload.body);
    const list = await f.tasks({ 'x-api-key': key });
    assert.equal(list.statusCode, 200);
    assert.deepEqual(list.json().tasks.map((t: { id: string }) => t.id), [upload.json().id]);
    assert.equal((await listApiKeys(f.deps.db, f.sub)).find((k) => k.id === id)?.last_used_at, new Date(f.clock()).toISOString());
  });

  test('another person\'s task through your key → 404, as if it did not exist', async () => {
    const f = await fixture(await open());
    const bobs = await f.key(f.otherSub);
    const task = (await f.upload({ 'x-api-key': bobs.key })).json();
    const mine = await f.key();
    const res = await f.app.inject({ method: 'GET', url: `/api/v1/docparse/tasks/${task.id}`, headers: { host: HOST, 'x-api-key': mine.key } });
    assert.equal(res.statusCode, 404);
    assert.equal(res.json().error, 'not_found');
  });

  test('revocation stops the key at once (401, the first-party error shape); the person\'s other keys go on', async () => {
    const f = await fixture(await open());
    const first = await f.key();
    const second = await f.key();
    await revokeApiKey(f.deps.db, f.deps.clock, first.id, f.sub);
    const refused = await f.tasks({ 'x-api-key': first.key });
    assert.equal(refused.statusCode, 401);
    assert.deepEqual(Object.keys(refused.json()).sort(), ['error', 'message']);
    assert.equal((await f.tasks({ 'x-api-key': second.key })).statusCode, 200);
    await assert.rejects(revokeApiKey(f.deps.db, f.deps.clock, second.id, f.otherSub), /No API key/, 'another person cannot revoke it');
  });

  test('"expiry honoured via the injected clock": good until expires_at, refused from then on', async () => {
    const f = await fixture(await open());
    const { key } = await f.key(f.sub, 1);
    f.clock.advance(DAY - 1);
    assert.equal((await f.tasks({ 'x-api-key': key })).statusCode, 200);
    f.clock.advance(1);
    assert.equal((await f.tasks({ 'x-api-key': key })).statusCode, 401);
  });

  test('"revoked with the account": deleting the person deletes their keys; a disabled person\'s key is refused', async () => {
    const f = await fixture(await open());
    const bobs = await f.key(f.otherSub);
    await f.deps.db.updateTable('users').set({ disabled: 1 }).where('sub', '=', f.otherSub).execute();
    assert.equal((await f.tasks({ 'x-api-key': bobs.key })).statusCode, 401);
    await deleteAccount(f.deps.db, f.otherSub);
    assert.equal((await f.deps.db.selectFrom('api_keys').select('id').where('sub', '=', f.otherSub).execute()).length, 0);
  });

  test('"never by sign-in, /account, /oauth/userinfo (must still refuse) or the admin API": a key at /oauth/userinfo is 401, at /account it signs no one in', async () => {
    const f = await fixture(await open());
    const { key } = await f.key();
    const userinfo = await f.userinfo(undefined, { 'x-api-key': key });
    assert.equal(userinfo.statusCode, 401);
    const asBearer = await f.userinfo(`Bearer ${key}`);
    assert.equal(asBearer.statusCode, 401, 'nor as a bearer token');
    const account = await f.app.inject({ method: 'GET', url: '/account', headers: { host: HOST, 'x-api-key': key, accept: 'text/html' } });
    assert.ok([302, 303].includes(account.statusCode), String(account.statusCode));
    assert.match(String(account.headers.location), /^\/signin/);
    const notifications = await f.app.inject({ method: 'GET', url: '/api/v1/notifications', headers: { host: HOST, 'x-api-key': key } });
    assert.equal(notifications.statusCode, 401, 'not a document API');
  });

  test('"Authorization: Bearer via verifyAccessToken with scope documents"; a token without that scope → 401', async (t) => {
    const f = await fixture(await open());
    const plain = await f.exchange('openid profile');
    const refused = await f.tasks({ authorization: `Bearer ${plain.access_token}` });
    assert.equal(refused.statusCode, 401);
    assert.match(refused.json().message, /documents scope/);
    if (!(KNOWN_SCOPES as readonly string[]).includes('documents')) return t.skip('the documents scope is not known to this build yet (the agents-oauth work adds it)');
    const documents = await f.exchange('openid documents');
    assert.equal((await f.tasks({ authorization: `Bearer ${documents.access_token}` })).statusCode, 200);
    // "a token issued for {base}/mcp is good at /mcp only"
    const code = await issueAuthorizationCode(f.deps.db, f.deps.keys.tokenHash, f.deps.clock, { clientId: f.confidential.client.clientId, sub: f.sub, redirectUri: REDIRECT_URI, scope: 'openid documents', codeChallenge: null, codeChallengeMethod: null, resource: `${TEST_BASE_URL}/mcp` });
    const forMcp = await f.token({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret });
    assert.equal(forMcp.statusCode, 200, forMcp.body);
    assert.equal((await f.tasks({ authorization: `Bearer ${forMcp.json().access_token}` })).statusCode, 401, 'a token for /mcp is refused at the task API');
    assert.equal((await f.app.inject({ method: 'GET', url: '/v1/status/poll/00000000-0000-0000-0000-000000000000', headers: { host: HOST, authorization: `Bearer ${forMcp.json().access_token}` } })).statusCode, 401, 'and at /v1');
  });

  test('"rate-limited per key": past API_KEY_REQUESTS in its window → 429 with Retry-After; the next window is open again', async () => {
    const f = await fixture(await open());
    const { key } = await f.key();
    const other = await f.key();
    for (let i = 0; i < API_KEY_REQUESTS.max; i += 1) {
      const res = await f.tasks({ 'x-api-key': key });
      if (res.statusCode !== 200) assert.fail(`request ${i + 1} answered ${res.statusCode}`);
    }
    const limited = await f.tasks({ 'x-api-key': key });
    assert.equal(limited.statusCode, 429);
    assert.ok(Number(limited.headers['retry-after']) > 0);
    assert.equal((await f.tasks({ 'x-api-key': other.key })).statusCode, 200, 'another key of the same person is not limited by it');
    f.clock.advance(API_KEY_REQUESTS.windowMs);
    assert.equal((await f.tasks({ 'x-api-key': key })).statusCode, 200);
  });
});
