// spec: "Every response carries `X-Frame-Options: DENY` and a frame-blocking content security
// policy" — including the answers Node's HTTP server would write itself before any route runs
// (found by the fixed-seed fuzz run of issue 21: a 400 to an HTTP/1.1 request without Host, a 417
// to an Expect header Node does not accept). Raw sockets, because fetch always sends Host.
import assert from 'node:assert/strict';
import net from 'node:net';
import { after, before, describe, test } from 'node:test';
import { sqliteDatabase } from '../helpers/databases.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';

/** Sends bytes, reads until the server closes or 5 s pass; returns status and lower-cased headers. */
function raw(port: number, bytes: string): Promise<{ status: number; headers: Map<string, string>; body: string }> {
  return new Promise((resolve, reject) => {
    let answer = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    const timer = setTimeout(() => socket.destroy(), 5_000);
    socket.on('data', (chunk) => (answer += chunk.toString('latin1')));
    socket.on('error', reject);
    socket.on('close', () => {
      clearTimeout(timer);
      const [head = '', body = ''] = answer.split('\r\n\r\n', 2);
      const [statusLine = '', ...lines] = head.split('\r\n');
      const headers = new Map(lines.map((line) => [line.slice(0, line.indexOf(':')).toLowerCase(), line.slice(line.indexOf(':') + 1).trim()]));
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body });
    });
  });
}

function assertFrameBlocking(headers: Map<string, string>): void {
  assert.equal(headers.get('x-frame-options'), 'DENY');
  assert.match(headers.get('content-security-policy') ?? '', /frame-ancestors 'none'/);
}

describe('answers Node writes before any route carry the frame-blocking headers', () => {
  let signet: RunningSignet;
  let port: number;
  before(async () => {
    signet = await startSignet(await sqliteDatabase());
    port = Number(new URL(signet.baseUrl).port);
  });
  after(() => signet.close());

  test('"Every response carries X-Frame-Options: DENY and a frame-blocking content security policy": 400 to a TRACE with a body and no Host (HTTP/1.1 requires Host)', async () => {
    const answer = await raw(port, 'TRACE /signin HTTP/1.1\r\nContent-Length: 5\r\n\r\n0\r\n\r\n');
    assert.equal(answer.status, 400);
    assertFrameBlocking(answer.headers);
    assert.equal(JSON.parse(answer.body).error, 'bad_request');
  });

  test('"Every response carries X-Frame-Options: DENY and a frame-blocking content security policy": 417 to an Expect header other than 100-continue, and the connection closes', async () => {
    const answer = await raw(port, `PATCH /signin HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nExpect: 200-ok\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n`);
    assert.equal(answer.status, 417);
    assertFrameBlocking(answer.headers);
    assert.equal(answer.headers.get('connection'), 'close');
    assert.equal(JSON.parse(answer.body).error, 'expectation_failed');
  });

  test('a request with its Host is served as before, and Expect: 100-continue still gets 100 Continue, then the answer', async () => {
    const answer = await raw(port, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nConnection: close\r\n\r\n`);
    assert.equal(answer.status, 200);
    assertFrameBlocking(answer.headers);
    const continued = await raw(port, `GET /healthz HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nExpect: 100-continue\r\nConnection: close\r\n\r\n`);
    assert.equal(continued.status, 100);
    assert.match(continued.body, /^HTTP\/1\.1 200 OK\r\n/);
  });
});
