// Issue 21: "Every command shown in the README … runs as printed from a fresh clone on a machine whose
// system Node is older than 24." This walks README.md's fenced `sh` blocks, takes every `npx signet`
// command that is safe to run (it creates, lists and revokes; it never serves), and runs it as a
// newcomer would: through bash, from the checkout, with the machine's own Node and npm first on
// PATH (here Node 20 in /usr/bin), against a fresh data dir. A README example that stops working
// fails this test with its own text.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { skipUnlessAvailable } from '../helpers/services.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
/** The machine's own npx, the one a newcomer's shell finds. */
const SYSTEM_BIN = '/usr/bin';

/** Each shell command of the README's ```sh blocks: continuation lines joined, comments dropped. */
export function readmeCommands(markdown: string): string[] {
  const commands: string[] = [];
  for (const block of markdown.matchAll(/^```sh\n([\s\S]*?)^```/gm)) {
    let pending = '';
    for (const raw of (block[1] ?? '').split('\n')) {
      const line = raw.replace(/\s{2,}#.*$/, '').trimEnd();
      if (line.trimStart().startsWith('#') || line.trim() === '') continue;
      if (line.endsWith('\\')) {
        pending += `${line.slice(0, -1).trim()} `;
        continue;
      }
      commands.push(`${pending}${line.trim()}`);
      pending = '';
    }
  }
  return commands;
}

/** Commands that change nothing outside the data dir (or, for parse, a temporary --out) and end by themselves. */
const SAFE = /\bnpx signet (client (create|list|show|update|disable|enable)|user (create|list|show|find|update)|admin-key (create|list|revoke)|audit list|migrate|parse)\b/;

/** The README's `paper.pdf` is a public two-page PDF with figures (test/fixtures/public/README.md). */
const PAPER = path.join(ROOT, 'test/fixtures/public/picture_classification.pdf');

function systemNodeVersion(): string | undefined {
  const result = spawnSync(path.join(SYSTEM_BIN, 'node'), ['--version'], { encoding: 'utf8' });
  return result.status === 0 ? result.stdout.trim() : undefined;
}

const version = existsSync(path.join(SYSTEM_BIN, 'npx')) ? systemNodeVersion() : undefined;
const missing = version === undefined ? `no system Node and npx in ${SYSTEM_BIN}` : undefined;

describe("the README's commands run as printed with the machine's own Node first on PATH", { skip: skipUnlessAvailable('system npx', missing) }, () => {
  let dataDir: string;
  const env = () => ({
    PATH: `${SYSTEM_BIN}:/bin`,
    HOME: process.env.HOME ?? tmpdir(),
    SIGNET_DATA_DIR: dataDir,
    SIGNET_LOG_LEVEL: 'silent',
    npm_config_update_notifier: 'false',
  });
  // Parsing reads and renders pages: on a loaded 2-core machine it may take longer than a management command.
  const run = (command: string) => spawnSync('bash', ['-c', command], { cwd: ROOT, env: env(), encoding: 'utf8', timeout: /\bsignet parse\b/.test(command) ? 240_000 : 60_000 });

  before(() => {
    dataDir = mkdtempSync(path.join(tmpdir(), 'signet-readme-'));
    // What `npm start` does first on a fresh clone: create the data dir and its schema.
    const migrated = run('npx signet migrate');
    assert.equal(migrated.status, 0, migrated.stderr);
  });
  after(() => rmSync(dataDir, { recursive: true, force: true }));

  test(`the system Node is older than 24 (${version ?? 'none'}), so the commands cannot rely on it`, () => {
    assert.ok(Number(/^v(\d+)/.exec(version ?? '')?.[1]) < 24 || process.env.CI !== 'true', 'CI checks the README on a machine whose Node is older than 24');
  });

  test('every `npx signet` command of the README exits 0 and prints JSON', () => {
    const commands = readmeCommands(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).filter((c) => SAFE.test(c));
    assert.ok(commands.length >= 6, `found ${commands.length} commands`);
    const created: Record<string, string> = {};
    for (const printed of commands) {
      // Placeholders stand for what an earlier command printed: an operator key id, an account's sub.
      // `signet parse paper.pdf --out out/`: a public PDF for paper.pdf, the results in the temporary folder.
      const command = printed
        .replace(/ak_…/g, created.adminKey ?? 'ak_…')
        .replace(/\bSUB\b/g, created.sub ?? 'SUB')
        .replace(/\bpaper\.pdf\b/g, PAPER)
        .replace(/--out out\//g, `--out ${path.join(dataDir, 'parsed')}/`);
      const result = run(command);
      assert.equal(result.status, 0, `README command failed: ${printed}\n${result.stderr}${result.error ? `\n${result.error.message}` : ''}`);
      const output: unknown = JSON.parse(result.stdout);
      if (/admin-key create/.test(command)) created.adminKey = (output as { id: string }).id;
      if (/user create/.test(command)) created.sub = (output as { sub: string }).sub;
      if (/signet parse/.test(command)) created.parsed = (output as { parsed: number }).parsed.toString();
    }
    assert.equal(created.parsed, '1', 'the README parses a PDF');
    assert.ok(existsSync(path.join(dataDir, 'parsed', 'picture_classification.md')));
    assert.ok(created.adminKey && created.sub, 'the README creates an operator key and an account');
  });

  test('`node bin/signet.js` on the old system Node says, in one line, how to run it instead', () => {
    const result = run('node bin/signet.js --version');
    assert.notEqual(result.status, 0);
    assert.match(result.stderr.trim(), /npx signet|npm/);
    assert.equal(result.stderr.trim().split('\n').length, 1);
  });
});
