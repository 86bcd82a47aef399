// Graceful shutdown (scale-out issue, item 4): "stop accepting, finish in-flight requests", and never
// cut a kept-alive connection under a request the balancer may be sending. The whole sequence against
// real processes behind a proxy is in test/multi-process/scale-out.test.ts; these are its steps.
import assert from 'node:assert/strict';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { test } from 'node:test';
import { KEEP_ALIVE_LINGER_MS, SHUTDOWN_DEADLINE_MS, trackConnections } from '../../src/web/shutdown.ts';

type Answer = { status: number; connection: string | undefined; body: string };

function get(port: number, path: string, agent: http.Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }));
      })
      .on('error', reject);
  });
}

async function server(): Promise<{ server: http.Server; port: number; release: () => void; connections: ReturnType<typeof trackConnections> }> {
  let release!: () => void;
  const slow = new Promise<void>((resolve) => (release = resolve));
  const s = http.createServer((req, res) => {
    if (req.url === '/slow') void slow.then(() => res.end('slow'));
    else res.end('fast');
  });
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  return { server: s, port: (s.address() as AddressInfo).port, release, connections: trackConnections(s) };
}

test('draining: new connections are refused at once; a kept-alive connection gets its next answer with Connection: close; a request in flight finishes, with Connection: close too', async () => {
  const { server: s, port, release, connections } = await server();
  const agent = new http.Agent({ keepAlive: true, maxSockets: 4 });
  try {
    // Two kept-alive connections: one will carry a slow request, the other stays idle.
    const opened = await Promise.all([get(port, '/', agent), get(port, '/', agent)]);
    assert.deepEqual(opened.map((a) => a.connection), ['keep-alive', 'keep-alive']);
    const inFlight = get(port, '/slow', agent);
    await new Promise((resolve) => setTimeout(resolve, 50));

    const drained = connections.drain(2_000);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await assert.rejects(get(port, '/', new http.Agent()), { code: 'ECONNREFUSED' }, 'the listener is closed');
    // The idle kept-alive connection is still open and answers, telling the client not to reuse it.
    assert.deepEqual(await get(port, '/', agent), { status: 200, connection: 'close', body: 'fast' });

    release();
    assert.deepEqual(await inFlight, { status: 200, connection: 'close', body: 'slow' });
    const started = Date.now();
    await drained;
    assert.ok(Date.now() - started < 1_000, 'the linger ends as soon as every connection has gone');
  } finally {
    agent.destroy();
    s.close();
  }
});

test('draining: a connection still idle when the linger ends is closed; the deadline leaves the cluster primary time to spare', async () => {
  const { server: s, port, connections } = await server();
  const agent = new http.Agent({ keepAlive: true });
  try {
    await get(port, '/', agent);
    const closed = new Promise<void>((resolve) => Object.values(agent.freeSockets).flat()[0]!.once('close', () => resolve()));
    const started = Date.now();
    await connections.drain(300);
    await closed;
    assert.ok(Date.now() - started >= 300, 'an idle connection is kept for the linger');
  } finally {
    agent.destroy();
    s.close();
  }
  assert.ok(KEEP_ALIVE_LINGER_MS < SHUTDOWN_DEADLINE_MS && SHUTDOWN_DEADLINE_MS < 30_000, 'signet serve --processes waits 30 s for its processes');
});
