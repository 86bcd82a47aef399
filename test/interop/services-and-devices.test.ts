// issue 43, interoperability: openid-client (through discovery) and Python's Authlib use the
// client_credentials grant and complete the device flow, the person signing in at /device in real
// Chromium (each page axe clean). One server, one browser for the file.
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import * as client from 'openid-client';
import type { Browser } from 'playwright-core';
import { createAccount } from '../../src/accounts/accounts.ts';
import { registerClient } from '../../src/clients/clients.ts';
import { SECOND } from '../../src/config/clock.ts';
import { accessibilityViolations, chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';

const PERSON = { login: 'grace@example.com', password: 'compiler-first' };
const SCRIPT = fileURLToPath(new URL('./authlib_services_and_devices.py', import.meta.url));

function authlibUnavailableReason(): string | undefined {
  const probe = spawnSync('/usr/bin/python3', ['-c', 'import authlib, requests'], { encoding: 'utf8' });
  return probe.status === 0 ? undefined : `/usr/bin/python3 cannot import authlib and requests (install Debian's python3-authlib python3-requests): ${(probe.stderr || probe.error?.message || '').trim().split('\n').pop()}`;
}
const authlibSkip = skipUnlessAvailable('Authlib (python3-authlib)', authlibUnavailableReason());

describe('issue 43 interoperability: openid-client and Authlib — client_credentials and the device flow', { skip: chromiumSkip() }, () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let server: RunningSignet;
  let browser: Browser;
  let sub: string;
  let service: { clientId: string; secret: string };
  let deviceClientId: string;

  before(async () => {
    database = await sqliteDatabase();
    server = await startSignet(database);
    browser = await launchChromium();
    const { db, clock, keys } = server.deps;
    sub = (await createAccount(db, clock, { email: PERSON.login, name: 'Grace Hopper', emailVerified: true, password: PERSON.password })).sub;
    const registered = await registerClient(db, clock, keys.tokenHash, { name: 'Batch converter', redirectUris: [], scopes: ['openid', 'profile'], grants: ['client_credentials'] });
    service = { clientId: registered.client.clientId, secret: registered.clientSecret! };
    deviceClientId = (await registerClient(db, clock, keys.tokenHash, { name: 'Terminal app', redirectUris: [], scopes: ['openid', 'profile'], isPublic: true, grants: ['device_code'] })).client.clientId;
  });

  after(async () => {
    await browser?.close();
    await server?.close();
    await database?.dispose();
  });

  /** The person at verification_uri_complete: Code filled in, Continue, sign in, Allow — every page axe clean. */
  async function approveInBrowser(verificationUriComplete: string, userCode: string): Promise<void> {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(verificationUriComplete);
      assert.equal(await page.getByLabel('Code').inputValue(), userCode);
      assert.deepEqual(await accessibilityViolations(page), [], 'the /device page');
      await page.getByRole('button', { name: 'Continue' }).click();
      await page.getByLabel('Email or phone').fill(PERSON.login);
      await page.getByLabel('Password').fill(PERSON.password);
      await page.getByRole('button', { name: 'Sign in', exact: true }).click();
      const allow = page.getByRole('button', { name: 'Allow' });
      await allow.waitFor({ timeout: 15000 });
      assert.ok(await page.getByRole('button', { name: 'Deny' }).isVisible());
      assert.deepEqual(await accessibilityViolations(page), [], 'the consent page of /device');
      await allow.click();
      await page.getByText('You can return to your device.').waitFor({ timeout: 15000 });
      assert.deepEqual(await accessibilityViolations(page), [], 'the last page of /device');
    } finally {
      await context.close();
    }
  }

  const discover = (clientId: string, auth: client.ClientAuth) => client.discovery(new URL(server.baseUrl), clientId, undefined, auth, { execute: [client.allowInsecureRequests] });

  test('openid-client through discovery: clientCredentialsGrant gets an access token alone; userinfo refuses it', async () => {
    const config = await discover(service.clientId, client.ClientSecretPost(service.secret));
    assert.ok(config.serverMetadata().grant_types_supported?.includes('client_credentials'));
    const tokens = await client.clientCredentialsGrant(config, { scope: 'profile' });
    assert.equal(tokens.token_type.toLowerCase(), 'bearer');
    assert.equal(tokens.expires_in, 7200);
    assert.equal(tokens.scope, 'profile');
    assert.equal(tokens.refresh_token, undefined);
    assert.equal(tokens.id_token, undefined);
    await assert.rejects(client.fetchUserInfo(config, tokens.access_token, client.skipSubjectCheck), (e: unknown) => e instanceof client.WWWAuthenticateChallengeError || (e instanceof Error && /invalid_token|401/.test(e.message)));
  });

  test('openid-client through discovery: initiateDeviceAuthorization, the person signs in at /device in Chromium, pollDeviceAuthorizationGrant gets the person\'s tokens', async () => {
    const config = await discover(deviceClientId, client.None());
    assert.equal(config.serverMetadata().device_authorization_endpoint, `${server.baseUrl}/oauth/device_authorization`);
    const started = await client.initiateDeviceAuthorization(config, { scope: 'openid profile' });
    assert.match(started.user_code, /^[BCDFGHJKLMNPQRSTVWXZ]{4}-[BCDFGHJKLMNPQRSTVWXZ]{4}$/);
    await approveInBrowser(started.verification_uri_complete!, started.user_code);
    // Time is the server's injected clock: each poll moves it on by the interval the server asked for,
    // so the library need not sleep (interval 0 on its side) and the server still sees a polite device.
    config[client.customFetch] = (url, options) => {
      server.clock.advance(started.interval! * SECOND);
      return fetch(url, options as RequestInit);
    };
    const tokens = await client.pollDeviceAuthorizationGrant(config, { ...started, interval: 0 });
    assert.equal(tokens.scope, 'openid profile');
    assert.ok(tokens.refresh_token);
    const me = await client.fetchUserInfo(config, tokens.access_token, sub);
    assert.equal(me.sub, sub);
    assert.equal(me.name, 'Grace Hopper');
  });

  const discoveryUrl = () => `${server.baseUrl}/.well-known/openid-configuration`;

  test('Authlib (OAuth2Session, client_secret_post, through discovery): the client_credentials grant', { skip: authlibSkip }, async () => {
    const child = spawn('/usr/bin/python3', [SCRIPT, 'client_credentials', discoveryUrl(), service.clientId, service.secret]);
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    assert.equal(code, 0, err);
    const token = JSON.parse(out) as Record<string, unknown>;
    assert.equal(token.token_type, 'Bearer');
    assert.equal(token.scope, 'openid profile');
    assert.equal(token.refresh_token, undefined);
  });

  test('Authlib (OAuth2Session through discovery): the device flow, the person approving at /device in Chromium', { skip: authlibSkip }, async () => {
    const child = spawn('/usr/bin/python3', [SCRIPT, 'device', discoveryUrl(), deviceClientId]);
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const first = await lines.next();
    assert.ok(!first.done, err);
    const started = JSON.parse(first.value) as { user_code: string; verification_uri_complete: string; interval: number };
    await approveInBrowser(started.verification_uri_complete, started.user_code);
    server.clock.advance(started.interval * SECOND);
    child.stdin.end('approved\n');
    const second = await lines.next();
    assert.ok(!second.done, err);
    const token = JSON.parse(second.value) as Record<string, unknown>;
    assert.equal(token.token_type, 'Bearer');
    assert.equal(token.scope, 'openid profile');
    assert.equal(typeof token.refresh_token, 'string');
  });
});
