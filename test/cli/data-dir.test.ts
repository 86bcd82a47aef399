// A command that opens the database refuses to start a new, empty Signet unless it is serve, migrate,
// worker or given --init; bare `signet` lists the commands; required options say so in the help.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { runSignet, type CliResult } from '../helpers/cli.ts';
import { createPostgresDatabase, postgresUnavailableReason, skipUnlessAvailable } from '../helpers/services.ts';

const pgSkip = skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason());
const emptyFolder = () => realpathSync(mkdtempSync(path.join(tmpdir(), 'signet-cwd-')));

function refusedOneLine(result: CliResult, message: string | RegExp): void {
  assert.equal(result.code, 1, result.stdout + result.stderr);
  assert.equal(result.stdout, '');
  const lines = result.stderr.trim().split('\n');
  assert.equal(lines.length, 1, result.stderr);
  if (typeof message === 'string') assert.equal(lines[0], message);
  else assert.match(lines[0]!, message);
}

test('running `signet user list` in an empty folder exits 1 with the message and creates nothing', async () => {
  const cwd = emptyFolder();
  const result = await runSignet(['user', 'list'], { cwd });
  refusedOneLine(result, `signet: no Signet data in ${path.join(cwd, 'data')}: run it from the folder you ran "npm start" in, set SIGNET_DATA_DIR, or pass --init to create one`);
  assert.deepEqual(readdirSync(cwd), [], 'the folder has no data');
});

test('every command that opens the database, except serve, migrate and worker, refuses a missing data dir', async () => {
  const cwd = emptyFolder();
  const commands: Array<[string[], string?]> = [
    [['client', 'list']],
    [['client', 'create', '--name', 'X', '--redirect-uri', 'https://x.example/cb']],
    [['user', 'show', 'some-sub']],
    [['user', 'find', '--email', 'a@example.com']],
    [['user', 'create', '--email', 'a@example.com', '--password-stdin'], 'long enough password'],
    [['user', 'unlock', 'some-sub']],
  ];
  for (const [args, stdin] of commands) refusedOneLine(await runSignet(args, { cwd, stdin }), /^signet: no Signet data in /);
  // SIGNET_DATA_DIR names the folder in the message too.
  refusedOneLine(await runSignet(['user', 'list'], { cwd, env: { SIGNET_DATA_DIR: 'elsewhere' } }), new RegExp(`no Signet data in ${path.join(cwd, 'elsewhere')}:`));
  assert.deepEqual(readdirSync(cwd), []);
});

test('with --init it creates the data dir; `migrate` may create it without --init', async () => {
  const cwd = emptyFolder();
  const listed = await runSignet(['user', 'list', '--init'], { cwd });
  assert.equal(listed.code, 0, listed.stderr);
  assert.equal(listed.stdout, '[]\n');
  assert.ok(existsSync(path.join(cwd, 'data', 'signet.sqlite')));
  assert.ok(existsSync(path.join(cwd, 'data', 'secret.key')));
  const again = await runSignet(['user', 'list'], { cwd });
  assert.equal(again.code, 0, 'once it exists, no --init is needed');

  const other = emptyFolder();
  const migrated = await runSignet(['migrate'], { cwd: other });
  assert.equal(migrated.code, 0, migrated.stderr);
  assert.ok(existsSync(path.join(other, 'data', 'signet.sqlite')));
});

test('a SQLite file named by SIGNET_DATABASE_URL that does not exist is refused, naming the file', async () => {
  const cwd = emptyFolder();
  const result = await runSignet(['client', 'list'], { cwd, env: { SIGNET_DATABASE_URL: 'sqlite:db/signet.sqlite' } });
  refusedOneLine(result, new RegExp(`no Signet database at ${path.join(cwd, 'db', 'signet.sqlite')}`));
  assert.deepEqual(readdirSync(cwd), []);
});

test('on PostgreSQL without SIGNET_SECRET, a data dir with no secret.key is refused (a new secret would not match the server\'s)', { skip: pgSkip }, async () => {
  const created = await createPostgresDatabase();
  try {
    const cwd = emptyFolder();
    const env = { SIGNET_DATABASE_URL: created.url };
    refusedOneLine(await runSignet(['client', 'list'], { cwd, env }), /no secret\.key in .*SIGNET_SECRET is not set/);
    assert.deepEqual(readdirSync(cwd), []);
    const withSecret = await runSignet(['client', 'list'], { cwd, env: { ...env, SIGNET_SECRET: 'a-secret-of-at-least-32-characters-long!' } });
    assert.equal(withSecret.code, 0, withSecret.stderr);
  } finally {
    await created.drop();
  }
});

test('bare `signet` exits 0 and lists commands', async () => {
  const result = await runSignet([], { cwd: emptyFolder() });
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, '');
  for (const command of ['serve', 'worker', 'migrate', 'client', 'user']) assert.match(result.stdout, new RegExp(`^  ${command}\\b`, 'm'));
  assert.match(result.stdout.replace(/\s+/g, ' '), /user manage accounts: create, list, show, find, update, disable, enable, unlock, set-password, factors, role, delete/);
  assert.match(result.stdout, /--init/);
});

test('required options are marked "(required)" in the help', async () => {
  const client = await runSignet(['client', 'create', '--help']);
  assert.equal(client.code, 0);
  // commander wraps a description under its option once the option column is wide: read the help
  // as one line, and "(required)" must come before the next option starts.
  const help = client.stdout.replace(/\s+/g, ' ');
  const marked = (option: string) => new RegExp(`${option} (?:(?!--)[^(])*\\(required\\)`).test(help);
  assert.ok(marked('--name <name>'));
  assert.ok(marked('--redirect-uri <uri>'));
  assert.ok(!marked('--scope <scopes>'));
  const user = await runSignet(['user', 'set-password', '--help']);
  assert.match(user.stdout, /--password-stdin.*\(required\)/);
});
