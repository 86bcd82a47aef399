// Output on a terminal: a table for lists, `key: value` lines for one record, a "shown once" line
// after a secret; JSON (unchanged) when stdout is not a terminal.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { formatHuman, formatRecord, formatTable, SHOWN_ONCE } from '../../src/cli/output.ts';
import { runSignet, SIGNET_BIN } from '../helpers/cli.ts';

test('a list is a table: a header, one aligned row per record, empty values as "-"', () => {
  const table = formatTable(
    [
      { sub: 'a1', email: 'ada@example.com', disabled: false },
      { sub: 'b22', email: null, disabled: true },
    ],
    [
      { header: 'sub', value: (r) => r.sub },
      { header: 'email', value: (r) => r.email },
      { header: 'disabled', value: (r) => r.disabled },
    ],
  );
  assert.equal(table, ['sub  email            disabled', 'a1   ada@example.com  no', 'b22  -                yes'].join('\n'));
  assert.equal(formatTable([]), '(none)');
});

test('one record is `key: value` lines; lists are joined with ", "', () => {
  assert.equal(formatRecord({ client_id: 'c1', scopes: ['openid', 'profile'], allowed_origins: [], public: false }), 'client_id: c1\nscopes: openid, profile\nallowed_origins: -\npublic: no');
  assert.equal(formatHuman({ sub: 's', deleted: true }), 'sub: s\ndeleted: yes');
  assert.equal(formatHuman([{ a: 1 }]), 'a\n1', 'a list without columns shows every field');
});

// `script` runs the command under a pseudo-terminal, so stdout.isTTY is true as for a person.
const script = spawnSync('script', ['--version'], { encoding: 'utf8' });
const noScript = script.status === 0 ? false : 'needs `script` (util-linux) for a pseudo-terminal';

function onTerminal(args: string[], env: Record<string, string>): string {
  const command = [process.execPath, SIGNET_BIN, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
  const result = spawnSync('script', ['-qec', command, '/dev/null'], { encoding: 'utf8', env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', SIGNET_LOG_LEVEL: 'silent', SIGNET_METRICS_ADDR: 'off', ...env } });
  assert.equal(result.status, 0, result.stdout + result.stderr);
  return result.stdout.replace(/\r\n/g, '\n');
}

test('on a terminal: `user list` is a table (sub, email, phone, name, disabled, created) naming the data dir; a new secret is followed by the "shown once" line', { skip: noScript }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-tty-'));
  const env = { SIGNET_DATA_DIR: dir };
  assert.equal((await runSignet(['migrate'], { env })).code, 0);
  assert.equal((await runSignet(['user', 'create', '--email', 'ada@example.com', '--name', 'Ada', '--password-stdin'], { env, stdin: 'long enough password' })).code, 0);

  const lines = onTerminal(['user', 'list'], env).trimEnd().split('\n');
  assert.match(lines[0]!, /^sub\s+email\s+phone\s+name\s+disabled\s+created$/);
  assert.match(lines[1]!, /^[0-9a-f-]{36}\s+ada@example\.com\s+-\s+Ada\s+no\s+\d{4}-\d\d-\d\d \d\d:\d\d UTC$/);
  assert.equal(lines.at(-1), `(data dir: ${dir})`);

  const shown = onTerminal(['user', 'find', '--email', 'ada@example.com'], env);
  assert.match(shown, /^sub: [0-9a-f-]{36}\nemail: ada@example\.com\n/);

  const created = onTerminal(['client', 'create', '--name', 'X', '--redirect-uri', 'https://x.example/cb'], env);
  assert.match(created, new RegExp(`client_secret: \\S{44}\\n[^]*${SHOWN_ONCE}\\n\\(data dir: `));
  const piped = await runSignet(['client', 'create', '--name', 'Y', '--redirect-uri', 'https://y.example/cb'], { env });
  assert.equal(piped.stderr, '', 'not a terminal: JSON only, no "shown once" line');
  assert.equal(JSON.parse(piped.stdout).name, 'Y');
});

test('on a terminal: `client list` shows the `oidc` column (issue 36: whether --oidc gives the application an id_token)', { skip: noScript }, async () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-tty-'));
  const env = { SIGNET_DATA_DIR: dir };
  assert.equal((await runSignet(['migrate'], { env })).code, 0);
  assert.equal((await runSignet(['client', 'create', '--name', 'Plain', '--redirect-uri', 'https://p.example/cb'], { env })).code, 0);
  assert.equal((await runSignet(['client', 'create', '--name', 'OpenID', '--redirect-uri', 'https://o.example/cb', '--scope', 'openid profile', '--oidc'], { env })).code, 0);
  const lines = onTerminal(['client', 'list'], env).trimEnd().split('\n');
  // issue 39 added `dynamic` (self-registered), issue 43 `grants` (the extra grants of --grant) after the scopes.
  assert.match(lines[0]!, /^client_id\s+name\s+public\s+enabled\s+oidc\s+dynamic\s+scopes\s+grants\s+redirect_uris\s+created$/);
  const row = (name: string) => lines.find((l) => new RegExp(`^\\S+\\s+${name}\\s`).test(l)) ?? '';
  assert.match(row('Plain'), /^\S+\s+Plain\s+no\s+yes\s+no\s/);
  assert.match(row('OpenID'), /^\S+\s+OpenID\s+no\s+yes\s+yes\s/);
});
