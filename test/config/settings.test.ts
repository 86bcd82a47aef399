import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { parseSettings, readEnvironment, SettingsError } from '../../src/config/settings.ts';
import { deriveKeys, loadRootSecret } from '../../src/config/keys.ts';

test('defaults: base URL http://localhost:8080, port 8080, SQLite in ./data, local files, metrics on 127.0.0.1:9464', () => {
  const s = parseSettings({}, '/srv/signet');
  assert.equal(s.baseUrl.origin, 'http://localhost:8080');
  assert.equal(s.port, 8080);
  assert.equal(s.host, '127.0.0.1');
  assert.deepEqual(s.database, { kind: 'sqlite', file: '/srv/signet/data/signet.sqlite', timeoutMs: 5000 });
  assert.equal(s.storageUrl, 'file:/srv/signet/data/objects');
  assert.deepEqual(s.metrics, { host: '127.0.0.1', port: 9464 });
  assert.equal(s.compat, undefined);
  assert.equal(s.logLevel, 'info');
});

test('"SIGNET_PORT without SIGNET_BASE_URL moves the base URL\'s port too", so the address the service prints answers', () => {
  const settings = parseSettings({ SIGNET_PORT: '9100' });
  assert.equal(settings.port, 9100);
  assert.equal(settings.baseUrl.origin, 'http://localhost:9100');
  const both = parseSettings({ SIGNET_BASE_URL: 'https://id.example', SIGNET_PORT: '9100' });
  assert.equal(both.baseUrl.origin, 'https://id.example', 'with both set, behind a proxy, both are taken as given');
});

test('SIGNET_PORT defaults to "the port of the base URL, else 8080"', () => {
  assert.equal(parseSettings({ SIGNET_BASE_URL: 'http://id.example:9000' }).port, 9000);
  assert.equal(parseSettings({ SIGNET_BASE_URL: 'https://id.example' }).port, 8080);
  assert.equal(parseSettings({ SIGNET_BASE_URL: 'https://id.example', SIGNET_PORT: '3000' }).port, 3000);
});

test('postgres:// in SIGNET_DATABASE_URL selects PostgreSQL', () => {
  const s = parseSettings({ SIGNET_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/signet' });
  assert.equal(s.database.kind, 'postgres');
});

// "A setting with a wrong value stops the process at start with one line naming the variable."
const BAD_VALUES: Array<[Record<string, string>, string, RegExp]> = [
  [{ SIGNET_BASE_URL: 'not a url' }, 'SIGNET_BASE_URL', /absolute http\(s\) URL/],
  [{ SIGNET_BASE_URL: 'ftp://id.example' }, 'SIGNET_BASE_URL', /http or https/],
  [{ SIGNET_BASE_URL: 'https://id.example/path' }, 'SIGNET_BASE_URL', /no path/],
  [{ SIGNET_ALT_BASE_URL: 'id.example' }, 'SIGNET_ALT_BASE_URL', /URL/],
  [{ SIGNET_PORT: 'eighty' }, 'SIGNET_PORT', /port number/],
  [{ SIGNET_PORT: '70000' }, 'SIGNET_PORT', /port number/],
  [{ SIGNET_DATABASE_URL: 'mysql://x' }, 'SIGNET_DATABASE_URL', /postgres:\/\//],
  [{ SIGNET_STORAGE_URL: 'ftp://bucket' }, 'SIGNET_STORAGE_URL', /s3:\/\//],
  [{ SIGNET_SMTP_URL: 'mail.example:25' }, 'SIGNET_SMTP_URL', /smtp:\/\//],
  [{ SIGNET_SMTP_URL: 'smtp://127.0.0.1:2525' }, 'SIGNET_MAIL_FROM', /required/],
  [{ SIGNET_TRANSLATE_ENGINE: 'google' }, 'SIGNET_TRANSLATE_ENGINE', /apertium, libretranslate, openai/],
  [{ SIGNET_TRANSLATE_ENGINE: 'openai', SIGNET_TRANSLATE_URL: 'http://127.0.0.1:11434/v1' }, 'SIGNET_TRANSLATE_MODEL', /required when SIGNET_TRANSLATE_ENGINE is openai/],
  [{ SIGNET_TRANSLATE_ENGINE: 'openai' }, 'SIGNET_TRANSLATE_URL', /required/],
  [{ SIGNET_SECRET: 'short' }, 'SIGNET_SECRET', /at least 32/],
  [{ SIGNET_COMPAT: 'old' }, 'SIGNET_COMPAT', /legacy/],
  [{ SIGNET_LOG_LEVEL: 'verbose' }, 'SIGNET_LOG_LEVEL', /one of/],
  [{ SIGNET_METRICS_ADDR: 'nowhere' }, 'SIGNET_METRICS_ADDR', /HOST:PORT or off/],
  [{ SIGNET_DATABASE_POOL_SIZE: '0' }, 'SIGNET_DATABASE_POOL_SIZE', /whole number/],
  [{ SIGNET_SHUTDOWN_SECONDS: '0' }, 'SIGNET_SHUTDOWN_SECONDS', /whole number of seconds from 1 to 3600/],
  [{ SIGNET_DATABASE_TIMEOUT_SECONDS: '0' }, 'SIGNET_DATABASE_TIMEOUT_SECONDS', /whole number of seconds/],
  [{ SIGNET_DATABASE_TIMEOUT_SECONDS: '2.5' }, 'SIGNET_DATABASE_TIMEOUT_SECONDS', /whole number of seconds/],
  [{ SIGNET_TRUST_PROXY: '10.0.0.0/99' }, 'SIGNET_TRUST_PROXY', /proxy addresses or CIDR ranges/],
  [{ SIGNET_TRUST_PROXY: 'yes' }, 'SIGNET_TRUST_PROXY', /proxy addresses or CIDR ranges/],
  [{ SIGNET_PARSE_THREADS: '0' }, 'SIGNET_PARSE_THREADS', /whole number of reader processes from 1 to 64/],
  [{ SIGNET_PARSE_THREADS: 'many' }, 'SIGNET_PARSE_THREADS', /whole number of reader processes/],
];
for (const [env, variable, message] of BAD_VALUES) {
  test(`a wrong value stops the start with one line naming the variable: ${variable}=${Object.values(env).at(-1)}`, () => {
    assert.throws(
      () => parseSettings(env),
      (error: unknown) => error instanceof SettingsError && error.variable === variable && error.message.startsWith(`${variable}: `) && message.test(error.message) && !error.message.includes('\n'),
    );
  });
}

test('a wrong SIGNET_SECRET is named without echoing its value', () => {
  assert.throws(() => parseSettings({ SIGNET_SECRET: 'tiny-secret' }), (e: Error) => !e.message.includes('tiny-secret'));
});

test('.env in the working directory is read; real environment variables win over it', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-env-'));
  writeFileSync(path.join(dir, '.env'), 'SIGNET_PORT=9100\nSIGNET_LOG_LEVEL=debug\n');
  const s = parseSettings(readEnvironment({ SIGNET_LOG_LEVEL: 'warn' }, dir), dir);
  assert.equal(s.port, 9100);
  assert.equal(s.logLevel, 'warn');
});

test('SIGNET_SECRET is "generated once into the data dir" when unset, and reused after', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'signet-secret-'));
  const settings = parseSettings({ SIGNET_DATA_DIR: dir });
  const first = loadRootSecret(settings);
  assert.ok(first.length >= 32);
  assert.equal(loadRootSecret(settings), first);
  assert.equal(loadRootSecret(parseSettings({ SIGNET_DATA_DIR: dir, SIGNET_SECRET: 'x'.repeat(40) })), 'x'.repeat(40));
  assert.notDeepEqual(deriveKeys(first).tokenHash, deriveKeys(first).cookie, 'each purpose gets its own subkey');
});

test('SIGNET_TRUST_PROXY: unset trusts no proxy; true, a hop count, or a list of addresses and ranges', () => {
  assert.equal(parseSettings({}).trustProxy, false);
  assert.equal(parseSettings({ SIGNET_TRUST_PROXY: 'true' }).trustProxy, true);
  assert.equal(parseSettings({ SIGNET_TRUST_PROXY: '1' }).trustProxy, 1);
  assert.deepEqual(parseSettings({ SIGNET_TRUST_PROXY: '127.0.0.1, 10.0.0.0/8,::1' }).trustProxy, ['127.0.0.1', '10.0.0.0/8', '::1']);
});
