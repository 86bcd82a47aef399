// Issues 21 and 36: "Every command shown in the README [and in docs/] runs as printed from a fresh clone
// on a machine whose system Node is older than 24." This walks the ```sh fences of README.md and
// docs/**/*.md and runs every command in them as a newcomer would: through bash, with the machine's own
// Node and npm first on PATH (here Node 20 in /usr/bin), in a fresh folder that looks like the checkout
// (every top-level entry of the repository linked in, no data/), one fresh folder per page. Other fences
// (```text, ```console, ```json …) are not run: they hold what needs a running server, an outside
// service or a value from an earlier answer.
//
// Commands that serve (`npm start`, `npx signet serve`, `npx signet worker`) are started, probed
// (`/healthz` answers 200; the worker says it is running), then stopped with SIGTERM. `npm install` and
// `npm test` are what CI itself runs on a fresh clone (.ci/run); here the test checks that it does.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, describe, test } from 'node:test';
import { skipUnlessAvailable } from '../helpers/services.ts';
import { ROOT, documentationFiles, shellCommands } from './markdown.ts';

/** The machine's own npx, the one a newcomer's shell finds. */
const SYSTEM_BIN = '/usr/bin';

/**
 * No standard input, as in a terminal where nobody types: Node's pipes are sockets, and bash given a
 * socket on stdin reads ~/.bashrc as if started by a remote shell.
 */
const NO_STDIN: ['ignore', 'pipe', 'pipe'] = ['ignore', 'pipe', 'pipe'];

/** Long-running commands: started, probed, stopped. */
const SERVES = /^(?:[A-Z_]+=\S+ )*(?:npm start|npx signet (?:--init )?serve\b)/;
const WORKS = /^(?:[A-Z_]+=\S+ )*npx signet (?:--init )?worker\b/;
/** What CI runs itself on a fresh clone, in .ci/run (installing from the registry; the whole suite, this file included). */
const RUN_BY_CI = new Set(['npm install', 'npm test']);

function systemNodeVersion(): string | undefined {
  const result = spawnSync(path.join(SYSTEM_BIN, 'node'), ['--version'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

const version = existsSync(path.join(SYSTEM_BIN, 'npx')) ? systemNodeVersion() : undefined;
const missing = version === undefined ? `no system Node and npx in ${SYSTEM_BIN}` : undefined;

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => (typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port'))));
    });
  });
}

/** A fresh folder that looks like the checkout to npm and npx: the repository's entries linked in, no data, no .env. */
function freshCheckout(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-docs-'));
  for (const name of readdirSync(ROOT)) {
    if (name.startsWith('.') || name === 'data' || name === 'out') continue;
    symlinkSync(path.join(ROOT, name), path.join(dir, name));
  }
  return dir;
}

type Page = { file: string; cwd: string; env: NodeJS.ProcessEnv; port: number };

function environment(ports: { port: number; metrics: number; admin: number }, logLevel: string): NodeJS.ProcessEnv {
  return {
    PATH: `${SYSTEM_BIN}:/bin`,
    HOME: process.env.HOME ?? tmpdir(),
    // Other test files run servers beside this one: the page's commands get ports of their own.
    SIGNET_PORT: String(ports.port),
    SIGNET_METRICS_ADDR: `127.0.0.1:${ports.metrics}`,
    SIGNET_ADMIN_ADDR: `127.0.0.1:${ports.admin}`,
    SIGNET_LOG_LEVEL: logLevel,
    npm_config_update_notifier: 'false',
  };
}

/** Runs a command that ends by itself; parsing reads and renders pages, so it may take longer on a loaded machine. */
function runToEnd(page: Page, command: string) {
  return spawnSync('bash', ['-c', command], { cwd: page.cwd, env: page.env, encoding: 'utf8', stdio: NO_STDIN, timeout: /\bsignet parse\b/.test(command) ? 240_000 : 90_000 });
}

/** Starts a serving command, waits until it answers (or says it runs), stops it with SIGTERM; the reason it failed, else undefined. */
async function runServing(page: Page, command: string): Promise<string | undefined> {
  const child = spawn('bash', ['-c', command], { cwd: page.cwd, env: { ...page.env, SIGNET_LOG_LEVEL: 'info' }, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  let ended = false;
  void exited.then(() => (ended = true));
  const deadline = Date.now() + 120_000;
  let ready = false;
  while (!ready && !ended && Date.now() < deadline) {
    if (WORKS.test(command)) ready = output.includes('signet worker is running');
    else ready = await fetch(`http://127.0.0.1:${page.port}/healthz`).then((r) => r.status === 200, () => false);
    if (!ready) await new Promise((resolve) => setTimeout(resolve, 250));
  }
  if (!ended) process.kill(-(child.pid ?? 0), 'SIGTERM');
  const stopped = await Promise.race([exited.then(() => true), new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 40_000))]);
  if (!stopped) process.kill(-(child.pid ?? 0), 'SIGKILL');
  if (!ready) return `it never became ready${ended ? ' (it exited)' : ''}:\n${output.slice(-2000)}`;
  if (!stopped) return 'it did not stop within 40 s of SIGTERM';
  return undefined;
}

describe("every ```sh command of README.md and docs/ runs as printed with the machine's own Node first on PATH", { skip: skipUnlessAvailable('system npx', missing) }, () => {
  const made: string[] = [];
  after(() => {
    for (const dir of made) rmSync(dir, { recursive: true, force: true });
  });

  test(`the system Node is older than 24 (${version ?? 'none'}), so the commands cannot rely on it`, () => {
    assert.ok(Number(/^v(\d+)/.exec(version ?? '')?.[1]) < 24 || process.env.CI !== 'true', 'CI checks the docs on a machine whose Node is older than 24');
  });

  test('`npm install` and `npm test`, as printed, are what CI runs on a fresh clone', () => {
    const ci = readFileSync(path.join(ROOT, '.ci/run'), 'utf8');
    assert.match(ci, /^npm install\b/m, '.ci/run installs with npm install');
    assert.match(ci, /^npm test$/m, '.ci/run runs npm test');
  });

  for (const file of documentationFiles()) {
    const commands = shellCommands(readFileSync(path.join(ROOT, file), 'utf8'));
    if (commands.length === 0) continue;
    test(`${file}: each of its ${commands.length} sh commands exits 0 (a signet command prints JSON; a server answers /healthz)`, async () => {
      const cwd = freshCheckout();
      made.push(cwd);
      const ports = { port: await freePort(), metrics: await freePort(), admin: await freePort() };
      const page: Page = { file, cwd, env: environment(ports, 'silent'), port: ports.port };
      // What `npm start` does first on a fresh clone: create the data dir and its schema (management
      // commands refuse to start an empty one). A page read on its own assumes the server ran once.
      const migrated = runToEnd(page, 'npx signet migrate');
      assert.equal(migrated.status, 0, migrated.stderr);
      for (const { command, line } of commands) {
        for (const part of command.split(/\s+&&\s+/)) {
          const where = `${file}:${line}: ${command}`;
          if (RUN_BY_CI.has(part)) continue; // checked above
          if (SERVES.test(part) || WORKS.test(part)) {
            const problem = await runServing(page, part);
            assert.equal(problem, undefined, `${where}\n${problem}`);
            continue;
          }
          const result = runToEnd(page, part);
          assert.equal(result.status, 0, `${where}\nexit ${result.status}\n${result.stderr}${result.error ? `\n${result.error.message}` : ''}`);
          if (/(^|\|\s*)npx signet\b/.test(part) && !/--help\b/.test(part)) {
            assert.doesNotThrow(() => JSON.parse(result.stdout), `${where}\nprinted no JSON: ${result.stdout.slice(0, 500)}`);
          }
        }
      }
    });
  }

  test('the README creates an application and an account and parses a PDF with the commands it prints', () => {
    const commands = shellCommands(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).map((c) => c.command);
    assert.ok(commands.some((c) => /npx signet client create/.test(c)));
    assert.ok(commands.some((c) => /npx signet user create/.test(c)));
    assert.ok(commands.some((c) => /npx signet parse \S+\.pdf/.test(c)));
  });

  test('`node bin/signet.js` on the old system Node says, in one line, how to run it instead', () => {
    const result = spawnSync('bash', ['-c', 'node bin/signet.js --version'], { cwd: ROOT, env: { PATH: `${SYSTEM_BIN}:/bin`, HOME: process.env.HOME ?? tmpdir() }, encoding: 'utf8', stdio: NO_STDIN });
    assert.notEqual(result.status, 0);
    assert.match(result.stderr.trim(), /npx signet|npm/);
    assert.equal(result.stderr.trim().split('\n').length, 1);
  });
});
