// The guarded outbound fetch (net/guarded-fetch.ts; STYLE.md "Outbound fetches … go through one guarded
// fetch helper"), against a real loopback HTTPS server with a certificate made at test time.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { manualClock } from '../../src/config/clock.ts';
import { parseSettings } from '../../src/config/settings.ts';
import { createHttpCache, guardedFetch, isAllowedAddress, outboundPolicy, OutboundFetchError, STRICT_OUTBOUND_POLICY, type GuardedFetchOptions, type OutboundPolicy } from '../../src/net/guarded-fetch.ts';
import { json, startHttpsTestServer, type HttpsTestServer } from '../helpers/https-test-server.ts';

const OPTIONS: GuardedFetchOptions = { maxBytes: 5 * 1024, timeoutMs: 5000, maxRedirects: 0, accept: ['application/json', 'application/*+json'] };

async function refusal(promise: Promise<unknown>): Promise<OutboundFetchError['reason']> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof OutboundFetchError, String(error));
    return error.reason;
  }
  assert.fail('the fetch was not refused');
}

describe('guarded outbound fetch', () => {
  let server: HttpsTestServer;
  let testing: OutboundPolicy;

  before(async () => {
    server = await startHttpsTestServer();
    testing = outboundPolicy({ allowLoopbackForTests: true, testCaFile: server.caFile });
    server.route('/doc.json', json({ hello: 'world' }));
    server.route('/vendor.json', json({ ok: true }));
    server.route('/html', (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>hi</p>'));
    server.route('/large-declared', (_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(6000) }).end('"' + 'x'.repeat(5998) + '"'));
    server.route('/large-chunked', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      for (let i = 0; i < 6; i++) res.write('x'.repeat(1000));
      res.end();
    });
    server.route('/slow', (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{'); // and never the rest
    });
    server.route('/to-private', (_req, res) => res.writeHead(302, { location: 'https://10.1.2.3/doc.json' }).end());
    server.route('/to-metadata-service', (_req, res) => res.writeHead(307, { location: 'https://169.254.169.254/latest/meta-data/' }).end());
    server.route('/to-doc', (_req, res) => res.writeHead(302, { location: '/doc.json' }).end());
    server.route('/to-http', (_req, res) => res.writeHead(302, { location: `http://127.0.0.1/doc.json` }).end());
    server.route('/missing', json({ error: 'gone' }, {}, 404));
  });
  after(() => server.close());

  test('"public addresses only": every special-use range is refused (ipaddr.js range other than unicast), IPv4-mapped IPv6 judged as its IPv4 address; loopback only with the test allowance', () => {
    const refusedEverywhere = ['10.0.0.1', '172.16.5.4', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '224.0.0.1', '255.255.255.255', '198.18.0.1', '192.0.2.1', 'fd00::1', 'fe80::1', '::', 'ff02::1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '64:ff9b::a00:1', '2002:a00:1::1', 'not-an-address'];
    for (const address of refusedEverywhere) {
      assert.equal(isAllowedAddress(address, STRICT_OUTBOUND_POLICY), false, address);
      assert.equal(isAllowedAddress(address, testing), false, `${address} (test allowance on)`);
    }
    for (const address of ['8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '::ffff:8.8.8.8']) assert.equal(isAllowedAddress(address, STRICT_OUTBOUND_POLICY), true, address);
    for (const address of ['127.0.0.1', '127.8.9.10', '::1', '::ffff:127.0.0.1']) {
      assert.equal(isAllowedAddress(address, STRICT_OUTBOUND_POLICY), false, address);
      assert.equal(isAllowedAddress(address, testing), true, `${address} (test allowance on)`);
    }
  });

  test('a JSON document over https from an allowed address is fetched (the certificate verified against the host)', async () => {
    const answer = await guardedFetch(`${server.origin}/doc.json`, OPTIONS, testing);
    assert.deepEqual(JSON.parse(answer.body.toString()), { hello: 'world' });
    assert.equal(answer.contentType, 'application/json');
    assert.equal(answer.fromCache, false);
    assert.equal(server.lastHeaders('/doc.json')?.accept, 'application/json');
  });

  test('fails because the address is loopback and no test allowance is set (the production policy), and because the certificate is not trusted without the test CA', async () => {
    assert.equal(await refusal(guardedFetch(`${server.origin}/doc.json`, OPTIONS, STRICT_OUTBOUND_POLICY)), 'address');
    assert.equal(await refusal(guardedFetch('https://localhost:1/doc.json', OPTIONS, STRICT_OUTBOUND_POLICY)), 'address', 'a name that resolves to loopback');
    assert.equal(await refusal(guardedFetch(`${server.origin}/doc.json`, OPTIONS, { allowLoopbackForTests: true })), 'network', 'self-signed certificate');
  });

  test('fails because of the URL: http:, user information, not a URL', async () => {
    assert.equal(await refusal(guardedFetch(`http://127.0.0.1/doc.json`, OPTIONS, testing)), 'url');
    assert.equal(await refusal(guardedFetch(`https://user:pw@127.0.0.1/doc.json`, OPTIONS, testing)), 'url');
    assert.equal(await refusal(guardedFetch('/relative', OPTIONS, testing)), 'url');
  });

  test('fails because the host is a private, link-local or CGNAT address — refused before any connection', async () => {
    for (const host of ['10.0.0.1', '192.168.0.10', '169.254.169.254', '100.64.1.1', '[fd12::1]', '[::ffff:192.168.0.1]', '[fe80::1]']) {
      assert.equal(await refusal(guardedFetch(`https://${host}/doc.json`, OPTIONS, testing)), 'address', host);
    }
  });

  test('redirects: not followed when maxRedirects is 0; each hop re-checked — a redirect to a private address, to the metadata service or to http: is refused; one to an allowed address is followed', async () => {
    assert.equal(await refusal(guardedFetch(`${server.origin}/to-doc`, OPTIONS, testing)), 'redirect');
    const follow = { ...OPTIONS, maxRedirects: 3 };
    assert.equal(await refusal(guardedFetch(`${server.origin}/to-private`, follow, testing)), 'address');
    assert.equal(await refusal(guardedFetch(`${server.origin}/to-metadata-service`, follow, testing)), 'address');
    assert.equal(await refusal(guardedFetch(`${server.origin}/to-http`, follow, testing)), 'url');
    const followed = await guardedFetch(`${server.origin}/to-doc`, follow, testing);
    assert.equal(followed.url, `${server.origin}/doc.json`);
    assert.deepEqual(JSON.parse(followed.body.toString()), { hello: 'world' });
  });

  test('fails because the body is larger than maxBytes (a declared Content-Length, and a chunked body counted while read)', async () => {
    assert.equal(await refusal(guardedFetch(`${server.origin}/large-declared`, OPTIONS, testing)), 'too_large');
    assert.equal(await refusal(guardedFetch(`${server.origin}/large-chunked`, OPTIONS, testing)), 'too_large');
  });

  test('fails because the answer does not complete within timeoutMs (one deadline for headers and body)', async () => {
    assert.equal(await refusal(guardedFetch(`${server.origin}/slow`, { ...OPTIONS, timeoutMs: 300 }, testing)), 'timeout');
  });

  test('fails because of the status (not 200) or the Content-Type (not an accepted one); application/*+json accepts a +json type', async () => {
    assert.equal(await refusal(guardedFetch(`${server.origin}/missing`, OPTIONS, testing)), 'status');
    assert.equal(await refusal(guardedFetch(`${server.origin}/html`, OPTIONS, testing)), 'content_type');
    server.route('/vendor.json', (_req, res) => res.writeHead(200, { 'content-type': 'application/client-metadata+json; charset=utf-8' }).end('{}'));
    assert.equal((await guardedFetch(`${server.origin}/vendor.json`, OPTIONS, testing)).contentType, 'application/client-metadata+json');
  });

  test('HTTP caching: a max-age answer is reused until it is stale (the injected clock), then revalidated with If-None-Match (304 keeps the body); no-store is never kept; the cache is bounded', async () => {
    const clock = manualClock();
    const cache = createHttpCache({ maxEntries: 2, maxAgeCapMs: 3600_000, clock });
    let version = 1;
    server.route('/cached.json', (req, res) => {
      if (req.headers['if-none-match'] === `"v${version}"`) return void res.writeHead(304, { 'cache-control': 'max-age=60', etag: `"v${version}"` }).end();
      res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'max-age=60', etag: `"v${version}"` }).end(JSON.stringify({ version }));
    });
    const url = `${server.origin}/cached.json`;
    const first = await guardedFetch(url, { ...OPTIONS, cache }, testing);
    const second = await guardedFetch(url, { ...OPTIONS, cache }, testing);
    assert.equal(second.fromCache, true);
    assert.equal(server.hits('/cached.json'), 1, 'fresh: no request');
    clock.advance(61_000);
    const revalidated = await guardedFetch(url, { ...OPTIONS, cache }, testing);
    assert.equal(server.hits('/cached.json'), 2);
    assert.equal(server.lastHeaders('/cached.json')?.['if-none-match'], '"v1"');
    assert.equal(revalidated.fromCache, true);
    assert.deepEqual(revalidated.body, first.body);
    version = 2;
    clock.advance(61_000);
    assert.deepEqual(JSON.parse((await guardedFetch(url, { ...OPTIONS, cache }, testing)).body.toString()), { version: 2 }, 'a changed document replaces the entry');

    server.route('/no-store.json', json({ secret: false }, { 'cache-control': 'no-store', etag: '"x"' }));
    await guardedFetch(`${server.origin}/no-store.json`, { ...OPTIONS, cache }, testing);
    await guardedFetch(`${server.origin}/no-store.json`, { ...OPTIONS, cache }, testing);
    assert.equal(server.hits('/no-store.json'), 2);

    server.route('/a.json', json({}, { 'cache-control': 'max-age=600' }));
    server.route('/b.json', json({}, { 'cache-control': 'max-age=600' }));
    await guardedFetch(`${server.origin}/a.json`, { ...OPTIONS, cache }, testing);
    await guardedFetch(`${server.origin}/b.json`, { ...OPTIONS, cache }, testing);
    assert.equal(cache.size, 2, 'at most maxEntries');
    assert.equal(cache.lookup(url), undefined, 'the least recently used entry went first');
  });

  test('"never on by default": SIGNET_OUTBOUND_ALLOW_LOOPBACK_FOR_TESTS and SIGNET_OUTBOUND_TEST_CA_FILE are off unless set, and refused when NODE_ENV=production', () => {
    const base = { SIGNET_BASE_URL: 'https://signet.example', SIGNET_SECRET: 'x'.repeat(32) };
    assert.deepEqual(parseSettings(base).outbound, { allowLoopbackForTests: false, testCaFile: undefined });
    assert.equal(parseSettings({ ...base, SIGNET_OUTBOUND_ALLOW_LOOPBACK_FOR_TESTS: 'true' }).outbound.allowLoopbackForTests, true);
    assert.throws(() => parseSettings({ ...base, NODE_ENV: 'production', SIGNET_OUTBOUND_ALLOW_LOOPBACK_FOR_TESTS: 'true' }), /SIGNET_OUTBOUND_ALLOW_LOOPBACK_FOR_TESTS/);
    assert.throws(() => parseSettings({ ...base, NODE_ENV: 'production', SIGNET_OUTBOUND_TEST_CA_FILE: '/tmp/ca.pem' }), /SIGNET_OUTBOUND_TEST_CA_FILE/);
  });
});
