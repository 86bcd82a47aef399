import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { createLogger } from '../../src/web/logging.ts';
import { testApp, TEST_ALT_BASE_URL, TEST_BASE_URL } from '../helpers/app.ts';
import { forEachDatabase, sqliteDatabase } from '../helpers/databases.ts';

const FRAME_HEADERS = (headers: Record<string, unknown>) => {
  assert.equal(headers['x-frame-options'], 'DENY');
  assert.match(String(headers['content-security-policy']), /frame-ancestors 'none'/);
  assert.match(String(headers['content-security-policy']), /default-src 'none'/);
  assert.equal(headers['x-content-type-options'], 'nosniff');
  assert.equal(headers['referrer-policy'], 'no-referrer');
};

test('security headers: "Every response carries X-Frame-Options: DENY and a frame-blocking content security policy" — on a 200', async () => {
  const db = await sqliteDatabase();
  const { app } = await testApp(db);
  const res = await app.inject({ url: '/healthz', headers: { host: new URL(TEST_BASE_URL).host } });
  assert.equal(res.statusCode, 200);
  FRAME_HEADERS(res.headers);
  await app.close();
  await db.dispose();
});

test('security headers on a 404, on a 421 and on a 413', async () => {
  const db = await sqliteDatabase();
  const { app } = await testApp(db);
  const host = new URL(TEST_BASE_URL).host;
  const notFound = await app.inject({ url: '/no/such/page', headers: { host } });
  assert.equal(notFound.statusCode, 404);
  assert.equal(notFound.json().error, 'not_found');
  FRAME_HEADERS(notFound.headers);
  const foreign = await app.inject({ url: '/x', headers: { host: 'evil.example' } });
  assert.equal(foreign.statusCode, 421);
  FRAME_HEADERS(foreign.headers);
  const tooLarge = await app.inject({ method: 'POST', url: '/healthz', headers: { host, 'content-type': 'application/x-www-form-urlencoded' }, payload: 'a='.padEnd(200_000, 'x') });
  assert.equal(tooLarge.statusCode, 413);
  FRAME_HEADERS(tooLarge.headers);
  await app.close();
  await db.dispose();
});

test('two hosts: the service answers for SIGNET_BASE_URL and SIGNET_ALT_BASE_URL; a foreign Host is refused with 421 and never echoed into a URL', async () => {
  const db = await sqliteDatabase();
  let seenOrigin = '';
  const { app } = await testApp(db, {}, (app) =>
    app.get('/whoami', async (request) => {
      seenOrigin = request.servedOrigin.origin;
      return {};
    }),
  );
  for (const base of [TEST_BASE_URL, TEST_ALT_BASE_URL]) {
    const res = await app.inject({ url: '/whoami', headers: { host: new URL(base).host } });
    assert.equal(res.statusCode, 200);
    assert.equal(seenOrigin, base, 'absolute URLs are built from the base URL of the host that was asked');
  }
  for (const host of ['evil.example', 'signet.test.evil.example', '', 'signet.test:81']) {
    const res = await app.inject({ url: '/whoami', headers: { host } });
    assert.equal(res.statusCode, 421, `Host "${host}" is refused`);
    assert.ok(!res.body.includes('evil'), 'the foreign host is not echoed');
  }
  await app.close();
  await db.dispose();
});

test('/healthz and /readyz answer load balancers that probe by address (no Host check)', async () => {
  const db = await sqliteDatabase();
  const { app } = await testApp(db);
  assert.equal((await app.inject({ url: '/healthz', headers: { host: '10.0.0.5:8080' } })).statusCode, 200);
  assert.equal((await app.inject({ url: '/readyz', headers: { host: '10.0.0.5:8080' } })).statusCode, 200);
  await app.close();
  await db.dispose();
});

forEachDatabase('readiness', (open) => {
  test('/readyz is 200 with the database reachable and migrated, 503 when it is not', async () => {
    const db = await open();
    const { app } = await testApp(db);
    const host = new URL(TEST_BASE_URL).host;
    const ready = await app.inject({ url: '/readyz', headers: { host } });
    assert.equal(ready.statusCode, 200);
    assert.deepEqual(ready.json(), { status: 'ready' });
    await db.close();
    const down = await app.inject({ url: '/readyz', headers: { host } });
    assert.equal(down.statusCode, 503);
    assert.equal(down.json().failures.database, 'unreachable');
    assert.equal((await app.inject({ url: '/healthz', headers: { host } })).statusCode, 200, '/healthz only says the process is up');
    await app.close();
  });
});

test('request logs never contain passwords, secrets, codes or tokens (query strings, headers and bodies are not logged)', async () => {
  const db = await sqliteDatabase();
  const { app, logs } = await testApp(db);
  const secrets = ['pa55word-SECRET', 'CODE-abcdefghijklmnop', 'TOKEN-qrstuvwxyz', 'CLIENTSECRET-123456', 'STATE-987'];
  await app.inject({
    method: 'POST',
    url: `/anything?code=${secrets[1]}&state=${secrets[4]}`,
    headers: { host: new URL(TEST_BASE_URL).host, authorization: `Bearer ${secrets[2]}`, cookie: `signet_session=${secrets[2]}`, 'content-type': 'application/x-www-form-urlencoded' },
    payload: `password=${secrets[0]}&client_secret=${secrets[3]}`,
  });
  const output = logs.join('');
  assert.match(output, /"path":"\/anything"/, 'the request was logged');
  for (const secret of secrets) assert.ok(!output.includes(secret), `log output must not contain ${secret}`);
  await app.close();
  await db.dispose();
});

test('logged objects have secret fields redacted wherever they appear', () => {
  const lines: string[] = [];
  const logger = createLogger('debug', new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(chunk.toString()), done()) }));
  logger.info({ client_secret: 's1', password: 's2', nested: { access_token: 's3', refresh_token: 's4', code: 's5' }, req: { headers: { authorization: 's6', cookie: 's7' } } }, 'x');
  const out = lines.join('');
  for (const value of ['s1', 's2', 's3', 's4', 's5', 's6', 's7']) assert.ok(!out.includes(`"${value}"`), `${value} is redacted`);
  assert.match(out, /\[redacted\]/);
});

test('SIGNET_TRUST_PROXY: the client address comes from X-Forwarded-For only through a trusted proxy', async () => {
  const db = await sqliteDatabase();
  const seen: string[] = [];
  const route = (app: import('fastify').FastifyInstance) => app.get('/ip', async (request) => (seen.push(request.ip), {}));
  const host = new URL(TEST_BASE_URL).host;
  for (const [env, expected] of [
    [{}, '127.0.0.1'],
    [{ SIGNET_TRUST_PROXY: '127.0.0.1' }, '203.0.113.9'],
  ] as const) {
    const { app } = await testApp(db, env, route);
    await app.inject({ url: '/ip', headers: { host, 'x-forwarded-for': '203.0.113.9' }, remoteAddress: '127.0.0.1' });
    assert.equal(seen.pop(), expected);
    await app.close();
  }
  await db.dispose();
});
