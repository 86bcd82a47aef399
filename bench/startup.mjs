// Start-up benchmark: how long `signet serve` takes from launch to its first 200 on /healthz, and how
// long CLI commands take from launch to exit. Each figure over several runs: min, median, max.
//
//   node bench/startup.mjs [--runs N] [--checkout DIR] [--node PATH]
//
// --checkout measures another checkout of Signet (e.g. an older commit) with its own node_modules;
// --node picks the Node binary that runs it (default: the one running this script).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string', default: '7' }, checkout: { type: 'string' }, node: { type: 'string' }, json: { type: 'boolean' } } });
const runs = Number(values.runs);
const checkout = path.resolve(values.checkout ?? path.join(import.meta.dirname, '..'));
const nodeBin = values.node ?? process.execPath;
const bin = path.join(checkout, 'bin/signet.js');

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer().once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

function env(dataDir, port) {
  return { PATH: process.env.PATH, HOME: process.env.HOME, SIGNET_DATA_DIR: dataDir, SIGNET_BASE_URL: `http://127.0.0.1:${port}`, SIGNET_LOG_LEVEL: 'silent', SIGNET_METRICS_ADDR: 'off', SIGNET_ADMIN_ADDR: 'off' };
}

/** Launch → first 200 from /healthz, in milliseconds; the server is stopped afterwards. */
async function serveToFirst200(dataDir) {
  const port = await freePort();
  const started = performance.now();
  const child = spawn(nodeBin, [bin, 'serve'], { env: env(dataDir, port), stdio: 'ignore' });
  try {
    for (;;) {
      const ok = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.status === 200, () => false);
      if (ok) return performance.now() - started;
      if (performance.now() - started > 30_000) throw new Error('serve did not answer within 30 s');
      await new Promise((r) => setTimeout(r, 5));
    }
  } finally {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  }
}

/** Launch → exit of one CLI command, in milliseconds. */
function command(dataDir, args) {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const child = spawn(nodeBin, [bin, ...args], { env: env(dataDir, 8080), stdio: 'ignore' });
    child.once('exit', (code) => (code === 0 ? resolve(performance.now() - started) : reject(new Error(`signet ${args.join(' ')} exited ${code}`))));
  });
}

function summary(samples) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { min_ms: Math.round(sorted[0]), median_ms: Math.round(sorted[Math.floor(sorted.length / 2)]), max_ms: Math.round(sorted.at(-1)) };
}

const dataDir = mkdtempSync(path.join(tmpdir(), 'signet-bench-startup-'));
try {
  await command(dataDir, ['migrate']); // the schema exists before timing, as on any start after the first
  const results = {};
  const workloads = {
    'serve → first 200': () => serveToFirst200(dataDir),
    'signet --version': () => command(dataDir, ['--version']),
    'signet --help': () => command(dataDir, ['--help']),
    'signet client list': () => command(dataDir, ['client', 'list', '--json']),
  };
  for (const [name, run] of Object.entries(workloads)) {
    await run(); // warm the file cache
    const samples = [];
    for (let i = 0; i < runs; i++) samples.push(await run());
    results[name] = summary(samples);
  }
  const nodeVersion = await new Promise((resolve) => {
    const child = spawn(nodeBin, ['--version']);
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    child.once('exit', () => resolve(out.trim()));
  });
  if (values.json) console.log(JSON.stringify({ checkout, node: nodeVersion, runs, results }));
  else {
    console.log(`${checkout} on node ${nodeVersion}, ${runs} runs each`);
    for (const [name, r] of Object.entries(results)) console.log(`  ${name.padEnd(22)} min ${String(r.min_ms).padStart(5)} ms   median ${String(r.median_ms).padStart(5)} ms   max ${String(r.max_ms).padStart(5)} ms`);
  }
} finally {
  rmSync(dataDir, { recursive: true, force: true });
}
