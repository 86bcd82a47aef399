// issue 43: `signet login --server URL` (the device grant against the built-in `signet-cli`
// application), the credentials file (0600, in $XDG_CONFIG_HOME/signet), its refresh, `signet logout`
// — the real command against a listening Signet, the person approving at /device over HTTP.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts.ts';
import { currentCredentials } from '../../src/cli/remote/server-session.ts';
import { writeCredentials, type Credentials } from '../../src/cli/remote/credentials.ts';
import { SIGNET_BIN, runSignet } from '../helpers/cli.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { approveDevice } from '../helpers/fetch-browser.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';
import { startTaskRunner } from '../../src/worker/task-runner.ts';
import { createTranslator } from '../../src/documents/translate/create.ts';
import { apertiumMissing, skipUnlessAvailable } from '../helpers/services.ts';

const REAL_PDF = path.join(import.meta.dirname, '..', 'fixtures', 'public', 'libtasn1-contents-p3.pdf');
/** A page of running English text (the FAA's Aviation Maintenance Technician Handbook), enough for its language to be told. */
const RUNNING_TEXT_PDF = path.join(import.meta.dirname, '..', 'fixtures', 'public', 'amt_handbook_sample.pdf');

/** The remote translation runs on the server's worker with Debian's Apertium; its result is read back with poppler's pdftotext. */
const translateSkip = skipUnlessAvailable('Apertium (eng-spa) and pdftotext', apertiumMissing() ?? (spawnSync('pdftotext', ['-v']).error ? 'pdftotext is not installed (apt-get install poppler-utils)' : undefined));

const PERSON = { email: 'lin@example.com', password: 'terminal-velocity' };

describe('signet login / logout against a running server', () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let server: RunningSignet;
  let config: string;
  let sub: string;

  before(async () => {
    database = await sqliteDatabase();
    const translator = translateSkip ? undefined : createTranslator({ engine: 'apertium', url: undefined, model: undefined, apiKey: undefined });
    server = await startSignet(database, {}, translator ? { translator } : {});
    sub = (await createAccount(server.deps.db, server.deps.clock, { email: PERSON.email, name: 'Lin', password: PERSON.password })).sub;
    config = mkdtempSync(path.join(tmpdir(), 'signet-config-'));
  });

  after(async () => {
    await server?.close();
    await database?.dispose();
    rmSync(config, { recursive: true, force: true });
  });

  const file = () => path.join(config, 'signet', 'credentials.json');

  test('`signet login --server URL`: shows where to enter the code, waits for the person, keeps the tokens in $XDG_CONFIG_HOME/signet/credentials.json readable by its owner only (0600)', async () => {
    const child = spawn(process.execPath, [SIGNET_BIN, 'login', '--server', server.baseUrl, '--json'], { env: { PATH: process.env.PATH ?? '', HOME: config, XDG_CONFIG_HOME: config }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    const code = await new Promise<string>((resolve, reject) => {
      child.stderr.on('data', (d: Buffer) => {
        stderr += d.toString();
        const found = /enter the code ([A-Z]{4}-[A-Z]{4})/.exec(stderr);
        if (found) resolve(found[1]!);
      });
      child.on('exit', () => reject(new Error(`signet login ended early: ${stderr}`)));
    });
    assert.match(stderr, new RegExp(`open ${server.baseUrl.replace(/[.]/g, '\\.')}/device in a browser`));
    // The person approves before the command's first poll (it waits the server's interval first).
    const page = await approveDevice(server.baseUrl, code, PERSON);
    assert.match(page, /You can return to your device/);
    const exit = await new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.on('close', resolve)));
    assert.equal(exit, 0, stderr);
    const printed = JSON.parse(stdout) as { server: string; signed_in: boolean; sub: string };
    assert.deepEqual([printed.server, printed.signed_in, printed.sub], [server.baseUrl, true, sub]);
    assert.equal(statSync(file()).mode & 0o777, 0o600);
    const stored = JSON.parse(readFileSync(file(), 'utf8')) as Credentials;
    assert.equal(stored.client_id, 'signet-cli');
    assert.equal(stored.access_token.length, 44);
    assert.ok(stored.refresh_token);
  });

  test('"refreshed when needed": an access token about to expire is refreshed (public signet-cli, no secret) and the rotated refresh token stored', async () => {
    const stored = JSON.parse(readFileSync(file(), 'utf8')) as Credentials;
    await writeCredentials({ ...stored, expires_at: new Date(Date.now() - 1000).toISOString() }, file());
    const renewed = await currentCredentials(file());
    assert.notEqual(renewed.access_token, stored.access_token);
    assert.notEqual(renewed.refresh_token, stored.refresh_token);
    assert.ok(Date.parse(renewed.expires_at) > Date.now() + 3600_000);
    assert.deepEqual(JSON.parse(readFileSync(file(), 'utf8')), renewed);
    assert.equal(statSync(file()).mode & 0o777, 0o600);
    const me = await fetch(`${server.baseUrl}/oauth/userinfo`, { headers: { authorization: `Bearer ${renewed.access_token}` } });
    assert.equal(((await me.json()) as { sub: string }).sub, sub);
  });

  test('"signet parse --remote … send files to a server as the signed-in person": a real PDF goes through /v1/convert/file, its results are written here as the local command writes them, and the task is the person\'s', async () => {
    const { db, dialect, objects, translator, logger } = server.deps;
    const runner = startTaskRunner({ db, dialect, clock: () => Date.now(), objects, translator, logger }, { pollMs: 50, heartbeatMs: 200, kinds: ['docparse'] });
    try {
      const out = path.join(config, 'parsed');
      const env = { HOME: config, XDG_CONFIG_HOME: config };
      const parsed = await runSignet(['parse', '--remote', REAL_PDF, '--out', out, '--format', 'md,html', '--json'], { env });
      assert.equal(parsed.code, 0, parsed.stderr);
      const markdown = readFileSync(path.join(out, 'libtasn1-contents-p3.md'), 'utf8');
      assert.ok(markdown.length > 200, markdown);
      assert.match(readFileSync(path.join(out, 'libtasn1-contents-p3.html'), 'utf8'), /^<!DOCTYPE html>/);
      const owners = (await db.selectFrom('tasks').select(['sub', 'source_name']).execute()).filter((t) => t.source_name === 'libtasn1-contents-p3.pdf').map((t) => t.sub);
      assert.deepEqual(owners, [sub], 'one parsing task, in the signed-in person\'s list');
    } finally {
      await runner.stop();
    }
  });

  test('"signet translate --remote send[s] files to a server as the signed-in person": a translation task on the server, its source language told from the text, translated by its worker, NAME.es.pdf and NAME.es.bilingual.pdf written here, the task in the person\'s list', { skip: translateSkip }, async () => {
    const { db, dialect, objects, translator, logger } = server.deps;
    const runner = startTaskRunner({ db, dialect, clock: () => Date.now(), objects, translator, logger }, { pollMs: 50, heartbeatMs: 200, kinds: ['translate'] });
    try {
      const out = path.join(config, 'translated');
      const env = { HOME: config, XDG_CONFIG_HOME: config };
      const result = await runSignet(['translate', '--remote', RUNNING_TEXT_PDF, '--to', 'es', '--out', out, '--json'], { env });
      assert.equal(result.code, 0, result.stderr);
      const summary = JSON.parse(result.stdout) as { files: Array<{ outputs: string[]; from: string }>; translated: number };
      assert.equal(summary.translated, 1);
      const first = summary.files[0];
      assert.deepEqual(first?.outputs, [path.join(out, 'amt_handbook_sample.es.pdf'), path.join(out, 'amt_handbook_sample.es.bilingual.pdf')]);
      assert.equal(first?.from, 'en', 'no --from: the server told the language from the text');
      for (const file of first?.outputs ?? []) assert.equal(readFileSync(file).subarray(0, 5).toString('latin1'), '%PDF-');
      const text = spawnSync('pdftotext', [path.join(out, 'amt_handbook_sample.es.pdf'), '-'], { encoding: 'utf8' }).stdout;
      assert.match(text, /\b(?:los|las|del)\b/, 'the server translated the page into Spanish');
      const owners = (await db.selectFrom('tasks').select(['sub', 'kind', 'source_name']).execute()).filter((t) => t.source_name === 'amt_handbook_sample.pdf' && t.kind === 'translate').map((t) => t.sub);
      assert.deepEqual(owners, [sub], 'one translation task, in the signed-in person\'s list');
    } finally {
      await runner.stop();
    }
  });

  test('`signet logout` forgets the sign-in; `signet parse --remote` then says to sign in first', async () => {
    const env = { HOME: config, XDG_CONFIG_HOME: config };
    const out = await runSignet(['logout', '--json'], { env });
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout), { signed_out: true, server: server.baseUrl });
    assert.equal(existsSync(file()), false);
    const pdf = path.join(config, 'x.pdf');
    writeFileSync(pdf, '%PDF-1.4\n');
    const parsed = await runSignet(['parse', '--remote', pdf, '--json'], { env });
    assert.equal(parsed.code, 1);
    assert.match(parsed.stderr, /not signed in to a Signet server: run signet login --server URL first/);
  });

  test('`signet login` fails with one line when the server offers no device sign-in', async () => {
    const out = await runSignet(['login', '--server', 'http://127.0.0.1:9'], { env: { HOME: config, XDG_CONFIG_HOME: config } });
    assert.notEqual(out.code, 0);
    assert.equal(out.stderr.trim().split('\n').length, 1);
    assert.match(out.stderr, /cannot reach http:\/\/127\.0\.0\.1:9/);
  });
});
