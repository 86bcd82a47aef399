// Hardening 3, "Slow clients hold connections forever": request, header, idle and keep-alive timeouts
// (a stalled request is closed within 30 s) and a cap on connections — while a long response such as a
// server-sent-events stream is not cut by the request timeout, which bounds receiving the request only.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import Fastify, { type FastifyInstance } from 'fastify';
import { parseSettings } from '../../src/config/settings.ts';
import { capConnections, CONNECTION_LIMITS, connectionOptions } from '../../src/web/app.ts';
import { startServer, type RunningServer } from '../../src/web/server.ts';
import { freePort } from '../helpers/live-server.ts';

/** Opens a connection, writes `bytes`, then stalls. Resolves with how long until the server closed it, and what it said. */
function stall(port: number, bytes: string): Promise<{ ms: number; answer: string }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    let answer = '';
    const socket = net.connect(port, '127.0.0.1', () => socket.write(bytes));
    socket.setEncoding('latin1');
    socket.on('data', (chunk: string) => (answer += chunk));
    socket.on('error', () => {});
    socket.on('close', () => resolve({ ms: Date.now() - started, answer }));
    setTimeout(() => {
      socket.destroy();
      reject(new Error(`still open after 40 s: ${JSON.stringify(bytes.slice(0, 40))}`));
    }, 40_000).unref();
  });
}

describe('slow clients against `signet serve` (startServer)', () => {
  let dir: string;
  let running: RunningServer;
  let port: number;

  before(async () => {
    dir = mkdtempSync(path.join(tmpdir(), 'signet-slow-'));
    port = await freePort();
    running = await startServer(
      parseSettings({ SIGNET_BASE_URL: `http://127.0.0.1:${port}`, SIGNET_DATA_DIR: dir, SIGNET_METRICS_ADDR: 'off', SIGNET_ADMIN_ADDR: 'off', SIGNET_LOG_LEVEL: 'silent' }),
    );
  });

  after(async () => {
    await running?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('"Slow clients hold connections forever" no more: a stalled request — headers, body, or nothing at all — is closed within 30 s', async () => {
    const host = `Host: 127.0.0.1:${port}\r\n`;
    const [headers, body, silent] = await Promise.all([
      stall(port, `GET /healthz HTTP/1.1\r\n${host}`),
      stall(port, `POST /oauth/token HTTP/1.1\r\n${host}Content-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ngrant_type=`),
      stall(port, ''),
    ]);
    for (const [what, result] of Object.entries({ headers, body, silent })) {
      assert.ok(result.ms < 30_000, `a stalled ${what} was closed after ${result.ms} ms`);
    }
    assert.match(headers.answer, /^HTTP\/1\.1 408 /, 'stalled headers get a 408 before the close');
    assert.match(headers.answer, /\r\nX-Frame-Options: DENY\r\n/i, 'the 408 carries the security headers');
  });

  test('the server caps its connections (http.Server maxConnections)', () => {
    assert.equal(running.app.server.maxConnections, CONNECTION_LIMITS.maxConnections);
    assert.equal(running.app.server.requestTimeout, CONNECTION_LIMITS.requestMs);
    assert.equal(running.app.server.headersTimeout, CONNECTION_LIMITS.headersMs);
    assert.equal(running.app.server.keepAliveTimeout, CONNECTION_LIMITS.keepAliveMs);
    assert.equal(running.app.server.timeout, CONNECTION_LIMITS.idleMs);
    assert.ok(CONNECTION_LIMITS.headersMs + CONNECTION_LIMITS.checkIntervalMs < 30_000 && CONNECTION_LIMITS.idleMs < 30_000, 'every stall ends within 30 s');
  });
});

describe('connection caps at a small scale (capConnections, as signet serve applies it)', () => {
  test('one client address may hold at most perAddress connections: a slow-loris host over its cap is cut at once (with one warning), while another address — and /healthz from it — is still served', async () => {
    const warnings: Array<{ object: { event?: string; address?: string }; message: string }> = [];
    const app = Fastify();
    app.get('/healthz', async () => ({ status: 'ok' }));
    capConnections(app.server, { maxConnections: 50, perAddress: 5 }, { warn: (object, message) => warnings.push({ object, message }) });
    const port = await freePort();
    await app.listen({ host: '127.0.0.1', port });
    const held: net.Socket[] = [];
    try {
      const open = (localAddress: string) =>
        new Promise<{ socket: net.Socket; cut: Promise<void> }>((resolve) => {
          const socket = net.connect({ port, host: '127.0.0.1', localAddress }, () => resolve({ socket, cut }));
          const cut = new Promise<void>((closed) => socket.once('close', () => closed()));
          socket.on('error', () => {});
          held.push(socket);
        });
      // Five trickling uploads from one address are held; the sixth is closed by the server at once.
      for (let i = 0; i < 5; i++) (await open('127.0.0.1')).socket.write(`POST /healthz HTTP/1.1\r\nHost: x\r\nContent-Length: 1000\r\n\r\na`);
      const sixth = await open('127.0.0.1');
      await sixth.cut;
      const other = await new Promise<string>((resolve, reject) => {
        const socket = net.connect({ port, host: '127.0.0.1', localAddress: '127.0.0.2' }, () => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n'));
        let answer = '';
        socket.setEncoding('latin1');
        socket.on('data', (chunk: string) => (answer += chunk));
        socket.on('close', () => resolve(answer));
        socket.on('error', reject);
      });
      assert.match(other, /^HTTP\/1\.1 200 /, 'another address is served');
      assert.deepEqual(
        warnings.map((w) => [w.object.event, w.object.address]),
        [['connection_refused', '127.0.0.1']],
        'one warning names the address',
      );
    } finally {
      for (const socket of held) socket.destroy();
      await app.close();
    }
  });
});

describe('a client that closes its connection mid-body', () => {
  test('is noted at info level as client_gone — not logged as "database unavailable" (its ECONNRESET is the client\'s, not the database\'s)', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'signet-gone-'));
    const port = await freePort();
    const lines: string[] = [];
    const running = await startServer(parseSettings({ SIGNET_BASE_URL: `http://127.0.0.1:${port}`, SIGNET_DATA_DIR: dir, SIGNET_METRICS_ADDR: 'off', SIGNET_ADMIN_ADDR: 'off', SIGNET_LOG_LEVEL: 'info' }), {
      write: (line: string) => void lines.push(line),
    });
    try {
      for (const url of ['/oauth/token', '/signin']) {
        const socket = net.connect(port, '127.0.0.1');
        await new Promise((resolve) => socket.once('connect', resolve));
        socket.write(`POST ${url} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ngrant_type=`);
        // The request has reached its body parser once the server logged it.
        for (let i = 0; i < 200 && !lines.some((l) => l.includes(`"path":"${url}"`)); i++) await new Promise((resolve) => setTimeout(resolve, 10));
        socket.destroy();
      }
      for (let i = 0; i < 200 && lines.filter((l) => l.includes('"event":"client_gone"')).length < 2; i++) await new Promise((resolve) => setTimeout(resolve, 10));
      assert.equal(lines.filter((l) => l.includes('"event":"client_gone"')).length, 2, 'both noted as client_gone');
      assert.deepEqual(lines.filter((l) => /"level":(40|50)/.test(l)), [], 'no warning or error');
    } finally {
      await running.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('the same options at a smaller scale: what each timeout cuts', () => {
  const scaled = { headersMs: 300, requestMs: 600, idleMs: 500, keepAliveMs: 500, checkIntervalMs: 100, maxConnections: 10, perAddress: 5 };
  let app: FastifyInstance;
  let port: number;

  before(async () => {
    app = Fastify(connectionOptions(scaled));
    // An event stream as /api/v1/notifications/stream will be: headers at once, then an event (or a heartbeat) at intervals.
    const stream = (everyMs: number, events: number) => (_request: unknown, reply: { raw: import('node:http').ServerResponse; hijack(): void }) => {
      reply.hijack();
      reply.raw.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-store' });
      let sent = 0;
      const timer = setInterval(() => {
        reply.raw.write(`data: ${++sent}\n\n`);
        if (sent === events) {
          clearInterval(timer);
          reply.raw.end();
        }
      }, everyMs);
      reply.raw.on('close', () => clearInterval(timer));
    };
    app.get('/stream', stream(150, 14)); // 2.1 s: over three times requestMs, never idle for idleMs
    app.get('/silent-stream', stream(2000, 2)); // idle for 2 s after its headers
    port = await freePort();
    await app.listen({ host: '127.0.0.1', port });
  });

  after(async () => {
    await app?.close();
  });

  function read(pathname: string): Promise<{ body: string; complete: boolean }> {
    return new Promise((resolve) => {
      let body = '';
      const socket = net.connect(port, '127.0.0.1', () => socket.write(`GET ${pathname} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`));
      socket.setEncoding('utf8');
      socket.on('data', (chunk: string) => (body += chunk));
      socket.on('error', () => {});
      // Chunked encoding ends with a zero-length chunk: a stream that finished, not one that was cut.
      socket.on('close', () => resolve({ body, complete: body.endsWith('0\r\n\r\n') }));
    });
  }

  test('requestTimeout applies to receiving the request: an event stream that writes at intervals outlives it', async () => {
    const { body, complete } = await read('/stream');
    assert.ok(complete, `the stream ran to its end: ${body.slice(-80)}`);
    assert.equal((body.match(/data: /g) ?? []).length, 14);
  });

  test('the idle timeout cuts a stream that stays silent longer than it (so a stream must send heartbeats)', async () => {
    const { complete } = await read('/silent-stream');
    assert.equal(complete, false);
  });

  test('headers that do not arrive within headersTimeout are answered 408 and closed', async () => {
    const { ms, answer } = await stall(port, 'GET /stream HTTP/1.1\r\nHost: x\r\n');
    assert.match(answer, /^HTTP\/1\.1 408 /);
    assert.ok(ms < scaled.headersMs + 2 * scaled.checkIntervalMs + 200, `closed after ${ms} ms`);
  });
});
