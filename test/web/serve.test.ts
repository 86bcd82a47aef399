// `signet serve` as an operator runs it: a real process, a new data dir, the public port and the metrics port.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import net from 'node:net';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { SIGNET_BIN } from '../helpers/cli.ts';
import { freePort } from '../helpers/live-server.ts';

async function waitFor(url: string, deadline = Date.now() + 20000): Promise<Response> {
  for (;;) {
    try {
      return await fetch(url);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** `signet serve --processes N` as a real process: its output, its exit, and how many server processes it runs. */
function serveProcesses(processes: number, env: Record<string, string>) {
  const child = spawn(process.execPath, [SIGNET_BIN, 'serve', '--processes', String(processes)], {
    env: { PATH: process.env.PATH ?? '', SIGNET_ADMIN_ADDR: 'off', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  const children = () => {
    const out = spawnSync('ps', ['--ppid', String(child.pid), '-o', 'pid='], { encoding: 'utf8' }).stdout;
    return out.split('\n').filter((l) => l.trim() !== '').length;
  };
  return { child, output: () => output, exited, children };
}

test('`signet serve` with a new data dir: /healthz 200, metrics on their own listener and not on the public port, SIGTERM exits 0', async () => {
  const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'signet-serve-')), 'data');
  const [port, metricsPort] = [await freePort(), await freePort()];
  const child = spawn(process.execPath, [SIGNET_BIN, 'serve'], {
    env: { PATH: process.env.PATH ?? '', SIGNET_BASE_URL: `http://127.0.0.1:${port}`, SIGNET_DATA_DIR: dataDir, SIGNET_METRICS_ADDR: `127.0.0.1:${metricsPort}`, SIGNET_LOG_LEVEL: 'info', SIGNET_ADMIN_ADDR: 'off' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    const health = await waitFor(`http://127.0.0.1:${port}/healthz`);
    assert.equal(health.status, 200);
    assert.deepEqual(await health.json(), { status: 'ok' });
    assert.ok(existsSync(path.join(dataDir, 'signet.sqlite')), 'the SQLite database is created in the data dir');
    assert.ok(existsSync(path.join(dataDir, 'secret.key')), 'the secret is generated into the data dir');
    assert.equal((await fetch(`http://127.0.0.1:${port}/readyz`)).status, 200);
    assert.match(output, new RegExp(`"msg":"listening on 127\\.0\\.0\\.1:${port}; open http://127\\.0\\.0\\.1:${port}"`), 'the listen line names the address to open');
    assert.ok(!output.includes('Server listening at'), "not Fastify's own line, whose address may answer 421");

    const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
    assert.equal(metrics.status, 200);
    const text = await metrics.text();
    assert.match(text, /signet_http_requests_total\{method="GET",route="\/healthz",status="200"\} 1/);
    assert.equal((await fetch(`http://127.0.0.1:${port}/metrics`)).status, 404, 'metrics are never served on the public port');
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, output);
  assert.match(output, /signet: stopping \(pid \d+\): no new connections/, 'a graceful stop says it began');
  assert.match(output, /signet: stopped \(pid \d+\)/, 'and that it ended');
  for (const line of output.trim().split('\n').filter((l) => l.startsWith('{'))) JSON.parse(line);
});

test('"npm start passes SIGTERM on to the server (no orphan process)"', async () => {
  const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'signet-npm-start-')), 'data');
  const port = await freePort();
  const repo = path.resolve(path.dirname(SIGNET_BIN), '..');
  const npm = spawn('npm', ['start', '--silent'], {
    cwd: repo,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIGNET_BASE_URL: `http://127.0.0.1:${port}`, SIGNET_DATA_DIR: dataDir, SIGNET_METRICS_ADDR: 'off', SIGNET_ADMIN_ADDR: 'off', SIGNET_LOG_LEVEL: 'warn' },
    stdio: 'ignore',
  });
  const exited = new Promise<void>((resolve) => npm.on('exit', () => resolve()));
  assert.equal((await waitFor(`http://127.0.0.1:${port}/healthz`, Date.now() + 60_000)).status, 200);
  npm.kill('SIGTERM');
  await exited;
  // The server went with it: its port stops answering (polled, not slept).
  const deadline = Date.now() + 10_000;
  let answering = true;
  while (answering && Date.now() < deadline) {
    answering = await fetch(`http://127.0.0.1:${port}/healthz`).then(() => true, () => false);
    if (answering) await new Promise((r) => setTimeout(r, 100));
  }
  assert.equal(answering, false, 'no server is left running after npm start is stopped');
});

test('"npm start prints one human line with the address to open … and the next command"; the address answers', async () => {
  const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'signet-first-run-')), 'data');
  const port = await freePort();
  const child = spawn(process.execPath, [SIGNET_BIN, 'serve'], {
    env: { PATH: process.env.PATH ?? '', SIGNET_PORT: String(port), SIGNET_DATA_DIR: dataDir, SIGNET_METRICS_ADDR: 'off', SIGNET_ADMIN_ADDR: 'off', SIGNET_LOG_LEVEL: 'warn' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  try {
    const deadline = Date.now() + 30_000;
    while (!stderr.includes('\n') && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const line = stderr.trim();
    assert.equal(line.split('\n').length, 1, 'one line');
    const address = /is serving (http:\/\/\S+?)[ —]/.exec(line)?.[1];
    assert.equal(address, `http://localhost:${port}`, 'SIGNET_PORT alone moved the base URL with it');
    assert.match(line, new RegExp(`data: ${dataDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}`));
    assert.match(line, /client create/);
    const home = await fetch(`${address}/`, { redirect: 'manual' });
    assert.equal(home.status, 302, 'the printed address answers');
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0);
});

test('`signet serve --processes 2`: two server processes share the port; SIGTERM stops them all', async () => {
  const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'signet-cluster-')), 'data');
  const port = await freePort();
  const { child, exited, children } = serveProcesses(2, { SIGNET_BASE_URL: `http://127.0.0.1:${port}`, SIGNET_DATA_DIR: dataDir, SIGNET_METRICS_ADDR: 'off', SIGNET_LOG_LEVEL: 'warn' });
  try {
    assert.equal((await waitFor(`http://127.0.0.1:${port}/healthz`, Date.now() + 60_000)).status, 200);
    const deadline = Date.now() + 30_000;
    while (children() < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal(children(), 2, 'two server processes under the primary');
    const answers = await Promise.all(Array.from({ length: 20 }, () => fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status)));
    assert.deepEqual([...new Set(answers)], [200]);
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0);
  assert.equal(children(), 0, 'no server process is left');
});

test('`signet serve --processes 2` with SIGNET_METRICS_ADDR: the primary serves /metrics, and every scrape reports the sum of both processes', async () => {
  const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'signet-cluster-metrics-')), 'data');
  const [port, metricsPort] = [await freePort(), await freePort()];
  const serving = serveProcesses(2, { SIGNET_BASE_URL: `http://127.0.0.1:${port}`, SIGNET_DATA_DIR: dataDir, SIGNET_METRICS_ADDR: `127.0.0.1:${metricsPort}`, SIGNET_LOG_LEVEL: 'info' });
  const { child, exited, children } = serving;
  try {
    // The readiness probe is the first counted /healthz (attempts before a process listens reach none).
    assert.equal((await waitFor(`http://127.0.0.1:${port}/healthz`, Date.now() + 60_000)).status, 200);
    // Both processes listening (each logs its listen line), so the requests below are shared between them.
    const listening = () => serving.output().split('\n').filter((l) => l.includes('"msg":"listening on')).length;
    const deadline = Date.now() + 30_000;
    while (listening() < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    assert.equal(listening(), 2, serving.output());
    assert.equal(children(), 2, 'two server processes under the primary');
    // A new connection for each request and each scrape (no keep-alive to pin one process).
    const answers = await Promise.all(Array.from({ length: 40 }, () => fetch(`http://127.0.0.1:${port}/healthz`, { headers: { connection: 'close' } }).then((r) => r.status)));
    assert.deepEqual([...new Set(answers)], [200]);

    for (let scrape = 0; scrape < 6; scrape++) {
      const response = await fetch(`http://127.0.0.1:${metricsPort}/metrics`, { headers: { connection: 'close' } });
      const text = await response.text();
      assert.equal(response.status, 200, text);
      const healthz = text.split('\n').filter((l) => l.startsWith('signet_http_requests_total{method="GET",route="/healthz",status="200"}'));
      assert.deepEqual(healthz, ['signet_http_requests_total{method="GET",route="/healthz",status="200"} 41'], `scrape ${scrape + 1}: one series, the 41 requests of both processes`);
      // The audit counters are in each process's registry and aggregated with it: one series each, not one per process.
      assert.equal(text.split('\n').filter((l) => l === '# TYPE signet_signins_total counter').length, 1);
      assert.deepEqual(text.split('\n').filter((l) => l.startsWith('signet_refresh_replays_total')), ['signet_refresh_replays_total 0']);
    }
  } finally {
    child.kill('SIGTERM');
  }
  assert.equal(await exited, 0, serving.output());
  assert.equal(children(), 0, 'no server process is left');
  assert.equal(await fetch(`http://127.0.0.1:${metricsPort}/metrics`).then(() => 'answering', () => 'closed'), 'closed', 'the metrics listener went with the primary');
});

test('"a hard deadline after which it exits anyway" (SIGNET_SHUTDOWN_SECONDS): with a request whose body never finishes, SIGTERM ends `signet serve` after the set seconds, exit 1, saying so', async () => {
  const dataDir = path.join(mkdtempSync(path.join(tmpdir(), 'signet-serve-')), 'data');
  const port = await freePort();
  const child = spawn(process.execPath, [SIGNET_BIN, 'serve'], {
    env: { PATH: process.env.PATH ?? '', SIGNET_BASE_URL: `http://127.0.0.1:${port}`, SIGNET_DATA_DIR: dataDir, SIGNET_METRICS_ADDR: 'off', SIGNET_ADMIN_ADDR: 'off', SIGNET_SHUTDOWN_SECONDS: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  let socket: net.Socket | undefined;
  try {
    await waitFor(`http://127.0.0.1:${port}/healthz`);
    socket = net.connect(port, '127.0.0.1');
    const open = socket;
    // A request in flight that will not end by itself: its body stops half-way (the request timeout is minutes).
    await new Promise<void>((resolve, reject) => {
      open.once('error', reject);
      open.write(`POST /oauth/token HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: 1000\r\n\r\ngrant_type=`, () => resolve());
    });
    child.kill('SIGTERM');
    assert.equal(await exited, 1, output);
    assert.match(output, /still stopping after 1 s; exiting anyway/);
  } finally {
    socket?.destroy();
    if (child.exitCode === null) child.kill('SIGKILL');
  }
});
