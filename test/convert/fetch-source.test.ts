// http_sources (only with SIGNET_FETCH_SOURCES=on) go through one guarded fetch: "public addresses
// only, size/time/redirect limits". These fetch nothing from outside: each refusal is decided before
// a connection, or against a server of the test's own on loopback.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { fetchSource, SourceFetchError } from '../../src/convert/fetch-source.ts';
import { isAllowedAddress, STRICT_OUTBOUND_POLICY } from '../../src/net/guarded-fetch.ts';

const isPublicAddress = (address: string) => isAllowedAddress(address, STRICT_OUTBOUND_POLICY);

test('"public addresses only": loopback, private, link-local, unique-local and metadata addresses are not public', () => {
  for (const address of ['127.0.0.1', '10.1.2.3', '172.16.0.1', '192.168.1.1', '169.254.169.254', '0.0.0.0', '::1', 'fc00::1', 'fe80::1', '::ffff:127.0.0.1', '100.64.0.1']) assert.equal(isPublicAddress(address), false, address);
  for (const address of ['8.8.8.8', '2606:4700:4700::1111']) assert.equal(isPublicAddress(address), true, address);
});

test('a URL naming a private address, or a name resolving to one (localhost), is refused with 400 before anything is sent', async () => {
  let served = 0;
  const server = http.createServer((_request, response) => {
    served += 1;
    response.end('%PDF-1.4');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  try {
    for (const url of [`http://127.0.0.1:${port}/a.pdf`, `http://localhost:${port}/a.pdf`, `http://[::1]:${port}/a.pdf`]) {
      await assert.rejects(fetchSource(url, { maxBytes: 1024 }, STRICT_OUTBOUND_POLICY), (error: unknown) => error instanceof SourceFetchError && error.status === 400, url);
    }
    assert.equal(served, 0, 'no request reached the private server');
  } finally {
    server.close();
  }
});

test('only http(s) URLs without credentials', async () => {
  for (const url of ['file:///etc/passwd', 'ftp://example.com/a.pdf', 'https://user:pass@example.com/a.pdf', 'not a url']) {
    await assert.rejects(fetchSource(url, { maxBytes: 1024 }, STRICT_OUTBOUND_POLICY), (error: unknown) => error instanceof SourceFetchError && error.status === 422, url);
  }
});

test('"size, time and redirect limits" through the one guarded fetch: a served PDF comes back with its name from the URL; past the size limit 413; more than 3 redirects refused (loopback allowed here by the tests-only policy)', async () => {
  const pdf = Buffer.from('%PDF-1.4\n%%EOF\n');
  const server = http.createServer((request, response) => {
    const hops = /^\/hop\/(\d+)$/.exec(request.url ?? '');
    if (hops) {
      response.writeHead(302, { location: Number(hops[1]) > 0 ? `/hop/${Number(hops[1]) - 1}` : '/files/report%20one.pdf' }).end();
      return;
    }
    if (request.url === '/big.pdf') return void response.writeHead(200, { 'content-type': 'application/pdf' }).end(Buffer.alloc(4096));
    response.writeHead(200, { 'content-type': 'application/pdf' }).end(pdf);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const testsOnly = { allowLoopbackForTests: true };
  try {
    const fetched = await fetchSource(`http://127.0.0.1:${port}/hop/2`, { maxBytes: 1024 }, testsOnly);
    assert.equal(fetched.filename, 'report one.pdf');
    assert.deepEqual(fetched.bytes, pdf);
    await assert.rejects(fetchSource(`http://127.0.0.1:${port}/big.pdf`, { maxBytes: 1024 }, testsOnly), (error: unknown) => error instanceof SourceFetchError && error.status === 413);
    await assert.rejects(fetchSource(`http://127.0.0.1:${port}/hop/5`, { maxBytes: 1024 }, testsOnly), (error: unknown) => error instanceof SourceFetchError && error.status === 422 && /redirect/.test(error.message));
  } finally {
    server.close();
  }
});
