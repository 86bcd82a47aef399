// Hardening 6, "Characters a redirect cannot carry give a 500 without security headers": `return=`
// accepts only safe local paths at /signin and /language; with SIGNET_COMPAT=legacy a `state` that the
// unescaped callback could not carry is refused at authorize, before any code exists, while URL-safe
// values stay byte-identical; and every error answer — Fastify's own parse-level 400, 413 and 431
// included — carries the security headers.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { localPath } from '../../src/web/pages/view.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { testApp } from '../helpers/app.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { assertFrameHeaders, csrfOf, flowSetup, TinyBrowser } from '../oauth/authorize-support.ts';

const UNSAFE_RETURNS = ['/account\u0001', '/account\u0000', '/account\r\nSet-Cookie: x=1', '/account\u4e2d', '/account\u00e9', '/account\u2028', '//evil.example/', '/\\evil.example/', 'https://evil.example/', '/a b', '/a%zz'];

test('localPath accepts only safe local paths: RFC 3986 characters and well-formed %-escapes, never another site', () => {
  for (const ok of ['/account', '/consent?request=abc-_123', '/signin?return=%2Faccount%3Fx%3D1', "/a/b;c=d,e!$&'()*+:@~.", '/x?list[]={a|b}^']) assert.equal(localPath(ok), ok, ok);
  for (const bad of UNSAFE_RETURNS) assert.equal(localPath(bad), undefined, JSON.stringify(bad));
});

forEachDatabase('redirects carry only what they can', (open) => {
  test('"`return=` with control or non-Latin-1 characters at /signin": refused (back to /account), never a 500, always with the security headers', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    for (const bad of UNSAFE_RETURNS) {
      const page = await browser.get(`/signin?return=${encodeURIComponent(bad)}`);
      assert.equal(page.statusCode, 200, JSON.stringify(bad));
      const posted = await browser.post('/signin', { _csrf: csrfOf(page.body), identifier: 'person@example.com', password: 'correct horse battery', return: bad });
      assert.equal(posted.statusCode, 303, `${JSON.stringify(bad)}: ${posted.body.slice(0, 200)}`);
      assert.equal(posted.headers.location, '/account');
      assertFrameHeaders(posted.headers);
      // Signed in now: GET /signin?return=… redirects at once.
      const again = await browser.get(`/signin?return=${encodeURIComponent(bad)}`);
      assert.equal(again.statusCode, 302, JSON.stringify(bad));
      assert.equal(again.headers.location, '/account');
      assertFrameHeaders(again.headers);
      await browser.post('/signout', { _csrf: csrfOf((await browser.get('/account')).body) });
    }
  });

  test('"`return=` with control or non-Latin-1 characters at /language": refused (back to /account), never a 500, always with the security headers', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    const csrf = csrfOf((await browser.get('/signin')).body);
    for (const bad of UNSAFE_RETURNS) {
      const res = await browser.post('/language', { _csrf: csrf, lang: 'zh-CN', return: bad });
      assert.equal(res.statusCode, 303, `${JSON.stringify(bad)}: ${res.body.slice(0, 200)}`);
      assert.equal(res.headers.location, '/account');
      assertFrameHeaders(res.headers);
    }
    const good = await browser.post('/language', { _csrf: csrf, lang: 'en', return: '/signin?return=%2Faccount' });
    assert.equal(good.headers.location, '/signin?return=%2Faccount', 'a safe local path still comes back');
  });

  test('SIGNET_COMPAT=legacy: a `state` with NUL, CR/LF or non-Latin-1 characters is refused at authorize (invalid_request, JSON), before any code exists', async () => {
    const database = await open();
    const flow = await flowSetup(database, { SIGNET_COMPAT: 'legacy' });
    const browser = new TinyBrowser(flow);
    await browser.signIn();
    for (const state of ['a\u0000b', 'a\r\nSet-Cookie: x=1', 'a\nb', 'tab\there', '\u4e2d\u6587', 'emoji\u{1F600}']) {
      for (const prompt of [{}, { prompt: 'none' }] as Array<Record<string, string>>) {
        const res = await browser.get(flow.authorizePath({ state, ...prompt }));
        assert.equal(res.statusCode, 400, `${JSON.stringify(state)} ${JSON.stringify(prompt)}: ${res.body}`);
        assert.equal(res.json<{ error: string }>().error, 'invalid_request');
        assert.equal(res.headers.location, undefined);
        assertFrameHeaders(res.headers);
      }
    }
    assert.equal((await database.db.selectFrom('authorization_requests').selectAll().execute()).length, 0, 'no pending request');
    assert.equal((await database.db.selectFrom('token_chains').selectAll().execute()).length, 0, 'no code was minted');
  });

  test('a NUL character in any OAuth parameter is invalid_request in every mode (PostgreSQL cannot store one), never a 500', async () => {
    const f = await flowSetup(await open());
    for (const params of [{ state: 'a\u0000b' }, { scope: 'openid\u0000' }, { code_challenge: `${'a'.repeat(43)}\u0000` }] as Array<Record<string, string>>) {
      const res = await f.app.inject({ url: f.authorizePath(params), headers: { host: f.host } });
      assert.equal(res.statusCode, 400, `${JSON.stringify(params)}: ${res.body}`);
      assert.equal(res.json<{ error: string }>().error, 'invalid_request');
    }
    const nulClient = await f.app.inject({ url: `/oauth/authorize?client_id=${f.clientId}%00&redirect_uri=x`, headers: { host: f.host } });
    assert.equal(nulClient.json<{ error: string }>().error, 'invalid_request', 'step 1 answers before the database is asked');
    const token = await f.app.inject({ method: 'POST', url: '/oauth/token', headers: { host: f.host, 'content-type': 'application/x-www-form-urlencoded' }, payload: `grant_type=authorization_code&client_id=${f.clientId}%00&code=x&redirect_uri=x` });
    assert.equal(token.statusCode, 400, token.body);
    assert.equal(token.json<{ error: string }>().error, 'invalid_request');
  });

  test('a NUL character in the sign-in identifier is a wrong identifier (401), never a 500', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    for (const identifier of ['person@example.com\u0000', 'a\u0000@example.com', '+49\u0000151']) {
      const res = await browser.post('/signin', { _csrf: csrfOf((await browser.get('/signin')).body), identifier, password: 'correct horse battery' });
      assert.equal(res.statusCode, 401, JSON.stringify(identifier));
    }
  });

  test('SIGNET_COMPAT=legacy: URL-safe states (and anything else a header can carry) stay byte-identical in the callback', async () => {
    const flow = await flowSetup(await open(), { SIGNET_COMPAT: 'legacy' });
    for (const state of ['Zm9vYmFy-_0123456789abcdef', 'a b&c=d', 'caf\u00e9']) {
      await flow.deps.db.deleteFrom('grants').execute();
      const callback = await new TinyBrowser(flow).fullFlow({ state });
      assert.ok(decodeURI(callback.href).endsWith(`&state=${state}`) || callback.href.endsWith(`&state=${state}`), `${state}: ${callback.href}`);
    }
  });

  test('by default any `state` is form-encoded into the callback, so every value round-trips', async () => {
    const flow = await flowSetup(await open());
    for (const state of ['a\r\nb', 'tab\there', '\u4e2d\u6587', 'emoji\u{1F600}']) {
      await flow.deps.db.deleteFrom('grants').execute();
      const callback = await new TinyBrowser(flow).fullFlow({ state });
      assert.equal(callback.searchParams.get('state'), state);
    }
  });
});

test('a response header HTTP cannot carry becomes a 500 that still carries the security headers (not Node\'s bare 500)', async () => {
  const database = await sqliteDatabase();
  const t = await testApp(database, {}, (app) => {
    app.get('/test/bad-location', async (_request, reply) => reply.redirect('/account\u4e2d', 302));
  });
  const res = await t.app.inject({ url: '/test/bad-location', headers: { host: 'signet.test' } });
  assert.equal(res.statusCode, 500);
  assert.equal(res.headers.location, undefined);
  assertFrameHeaders(res.headers);
  assert.deepEqual(Object.keys(res.json()).sort(), ['error', 'message']);
  await t.app.close();
  await database.dispose();
});

describe('"Every error answer, including Fastify\'s own parse-level 400/413/431, carries the security headers"', () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let signet: RunningSignet;
  let port: number;

  before(async () => {
    database = await sqliteDatabase();
    signet = await startSignet(database);
    port = Number(new URL(signet.baseUrl).port);
  });

  after(async () => {
    await signet?.close();
    await database?.dispose();
  });

  /** Sends raw bytes; resolves with the status line and the headers of the answer. */
  function raw(bytes: string): Promise<{ status: number; headers: Record<string, string>; body: string }> {
    return new Promise((resolve, reject) => {
      let out = '';
      const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
      socket.setEncoding('latin1');
      socket.on('data', (chunk: string) => (out += chunk));
      socket.on('error', () => {});
      socket.on('close', () => {
        const [head = '', body = ''] = out.split('\r\n\r\n', 2);
        const [statusLine = '', ...lines] = head.split('\r\n');
        const headers = Object.fromEntries(lines.map((l) => [l.slice(0, l.indexOf(':')).toLowerCase(), l.slice(l.indexOf(':') + 1).trim()]));
        resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
      });
      setTimeout(() => socket.end(), 3000).unref();
      setTimeout(() => reject(new Error('no answer')), 8000).unref();
    });
  }

  const host = () => `Host: 127.0.0.1:${port}\r\n`;
  const cases: Array<[string, () => string, number]> = [
    ['a malformed request line', () => 'NOT HTTP AT ALL\r\n\r\n', 400],
    ['an invalid Content-Length', () => `POST /oauth/token HTTP/1.1\r\n${host()}Content-Length: abc\r\n\r\n`, 400],
    ['Content-Length with Transfer-Encoding', () => `POST /oauth/token HTTP/1.1\r\n${host()}Transfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n`, 400],
    ['headers too large', () => `GET /healthz HTTP/1.1\r\n${host()}X-Big: ${'a'.repeat(70_000)}\r\n\r\n`, 431],
    ['a URL with a broken %-escape', () => `GET /%zz HTTP/1.1\r\n${host()}Connection: close\r\n\r\n`, 400],
    ['an OAuth URL with a broken %-escape', () => `GET /oauth/authorize%zz HTTP/1.1\r\n${host()}Connection: close\r\n\r\n`, 400],
    ['a body over the limit', () => `POST /oauth/token HTTP/1.1\r\n${host()}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 100000\r\nConnection: close\r\n\r\n`, 413],
    ['invalid JSON', () => `POST /api/v1/translate/tasks HTTP/1.1\r\n${host()}Content-Type: application/json\r\nContent-Length: 3\r\nConnection: close\r\n\r\n{x}`, 400],
  ];
  for (const [what, bytes, status] of cases) {
    test(`${what} → ${status} with the security headers`, async () => {
      const res = await raw(bytes());
      assert.equal(res.status, status, JSON.stringify(res));
      assertFrameHeaders(res.headers);
      assert.equal(res.headers['x-content-type-options'], 'nosniff');
      assert.ok(!/FST_|statusCode/.test(res.body), `no framework internals: ${res.body}`);
    });
  }
});
