// The authorization flow in real headless Chromium, against a real listening Signet and a local
// callback server. Pages are found by the operator contract's landmarks; axe-core checks them.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import * as oauth from 'oauth4webapi';
import * as accounts from '../../src/accounts/accounts.ts';
import { verifyAccessToken } from '../../src/oauth/access-tokens.ts';
import * as clients from '../../src/clients/clients.ts';
import { accessibilityViolations, chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';
import { startCallbackServer, type CallbackServer } from '../helpers/callback-server.ts';
import { sqliteDatabase } from '../helpers/databases.ts';

const PERSON = { email: 'browser@example.com', password: 'a long browser password' };

describe('browser: the authorization flow in Chromium', { skip: chromiumSkip() }, () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let signet: RunningSignet;
  let callback: CallbackServer;
  let browser: Browser;
  let clientId: string;
  const contexts: BrowserContext[] = [];

  before(async () => {
    database = await sqliteDatabase();
    callback = await startCallbackServer();
    signet = await startSignet(database);
    await accounts.createAccount(database.db, signet.clock, { email: PERSON.email, name: 'Browser Person', password: PERSON.password });
    ({
      client: { clientId },
    } = await clients.registerClient(database.db, signet.clock, signet.deps.keys.tokenHash, { name: 'E2E App', redirectUris: [callback.url], scopes: ['openid', 'profile', 'email'] }));
    browser = await launchChromium();
  });

  after(async () => {
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await signet?.close();
    await callback?.close();
    await database?.dispose();
  });

  async function newPage(options: { locale?: string; viewport?: { width: number; height: number } } = {}): Promise<Page> {
    const context = await browser.newContext({ locale: options.locale ?? 'en-US', ...(options.viewport ? { viewport: options.viewport } : {}) });
    contexts.push(context);
    return context.newPage();
  }

  function authorizeUrl(params: Record<string, string> = {}, base = signet.baseUrl): string {
    return `${base}/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: callback.url, response_type: 'code', scope: 'openid profile email', ...params })}`;
  }

  /** Opens a URL that ends at the callback server and returns the callback URL. */
  async function landOnCallback(page: Page, action: () => Promise<unknown>): Promise<URL> {
    const landed = callback.next();
    await action();
    const url = await landed;
    await page.waitForURL((u) => u.href.startsWith(callback.url));
    return url;
  }

  async function signIn(page: Page): Promise<void> {
    await page.getByLabel('Email or phone').fill(PERSON.email);
    await page.getByLabel('Password').fill(PERSON.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  }

  async function withdrawAll(): Promise<void> {
    await database.db.deleteFrom('grants').execute();
  }

  test('sign in, consent, land on the local callback with a 44-character code and the same state; sign-in and consent pages have no axe violations', async () => {
    await withdrawAll();
    const page = await newPage();
    const state = 'e2e-state-0123456789abcdef';
    await page.goto(authorizeUrl({ state }));
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], 'sign-in page');
    await signIn(page);
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    assert.ok(await page.getByText('E2E App').first().isVisible(), "the consent page shows the application's name");
    for (const scope of ['openid', 'profile', 'email']) assert.ok(await page.getByRole('checkbox', { name: scope }).isVisible(), `a labelled checkbox for ${scope}`);
    assert.ok(await page.getByRole('checkbox', { name: 'openid' }).isDisabled(), 'openid is fixed');
    assert.ok(await page.getByRole('button', { name: 'Deny' }).isVisible());
    assert.deepEqual(await accessibilityViolations(page), [], 'consent page');
    const url = await landOnCallback(page, () => page.getByRole('button', { name: 'Allow' }).click());
    const code = url.searchParams.get('code')!;
    assert.equal(code.length, 44);
    assert.ok(code.endsWith('='));
    assert.equal(url.searchParams.get('state'), state);
  });

  test('decline gives `error=access_denied` and the state', async () => {
    await withdrawAll();
    const page = await newPage();
    await page.goto(authorizeUrl({ state: 'deny-1' }));
    await signIn(page);
    const url = await landOnCallback(page, () => page.getByRole('button', { name: 'Deny' }).click());
    assert.equal(url.searchParams.get('error'), 'access_denied');
    assert.equal(url.searchParams.get('state'), 'deny-1');
    assert.equal(url.searchParams.get('code'), null);
  });

  test('a second authorize skips consent: in the same browser at once, in a new browser right after sign-in', async () => {
    await withdrawAll();
    const page = await newPage();
    await page.goto(authorizeUrl({ state: 'first' }));
    await signIn(page);
    await landOnCallback(page, () => page.getByRole('button', { name: 'Allow' }).click());
    const again = await landOnCallback(page, () => page.goto(authorizeUrl({ state: 'second' })));
    assert.equal(again.searchParams.get('code')?.length, 44);
    assert.equal(again.searchParams.get('state'), 'second');

    const fresh = await newPage();
    await fresh.goto(authorizeUrl({ state: 'third' }));
    // The sign-in form ends at the callback (its CSP form-action names the callback's origin).
    const third = await landOnCallback(fresh, () => signIn(fresh));
    assert.equal(third.searchParams.get('code')?.length, 44);
    assert.equal(third.searchParams.get('state'), 'third');
  });

  test('prompt=none gives each of its four outcomes, with the state every time', async () => {
    await withdrawAll();
    const page = await newPage();
    const silent = async (state: string) => (await landOnCallback(page, () => page.goto(authorizeUrl({ prompt: 'none', state })))).searchParams;

    const notSignedIn = await silent('p1');
    assert.deepEqual([notSignedIn.get('error'), notSignedIn.get('state')], ['login_required', 'p1']);

    await page.goto(`${signet.baseUrl}/signin`);
    await signIn(page);
    await page.waitForURL(`${signet.baseUrl}/account`);
    const noGrant = await silent('p2');
    assert.deepEqual([noGrant.get('error'), noGrant.get('state')], ['consent_required', 'p2']);

    await page.goto(authorizeUrl({ state: 'grant' }));
    await landOnCallback(page, () => page.getByRole('button', { name: 'Allow' }).click());
    const granted = await silent('p3');
    assert.equal(granted.get('code')?.length, 44, 'a code, with no consent screen');
    assert.equal(granted.get('state'), 'p3');

    await database.db.schema.alterTable('grants').renameTo('grants_away').execute();
    try {
      const failed = await silent('p4');
      assert.deepEqual([failed.get('error'), failed.get('state')], ['interaction_required', 'p4']);
    } finally {
      await database.db.schema.alterTable('grants_away').renameTo('grants').execute();
    }
  });

  test('/account lists the application with Withdraw (no axe violations); withdraw, then prompt=none gives consent_required', async () => {
    await withdrawAll();
    const page = await newPage();
    await page.goto(authorizeUrl({ state: 'w0' }));
    await signIn(page);
    await landOnCallback(page, () => page.getByRole('button', { name: 'Allow' }).click());
    await page.goto(`${signet.baseUrl}/account`);
    const app = page.getByRole('listitem').filter({ hasText: 'E2E App' });
    await app.waitFor();
    // The scopes as the consent page words them.
    for (const words of ['Sign you in with your Signet account', 'Your name and picture', 'Your e-mail address']) assert.ok((await app.textContent())?.includes(words), words);
    assert.deepEqual(await accessibilityViolations(page), [], 'account page');
    // Withdraw asks first; "Keep access" leaves everything as it was.
    await app.getByRole('button', { name: 'Withdraw' }).click();
    const confirm = page.getByRole('dialog', { name: /Withdraw access for E2E App/ });
    await confirm.waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], 'account page with the confirmation open');
    await confirm.getByRole('button', { name: 'Keep access' }).click();
    await confirm.waitFor({ state: 'hidden' });
    assert.equal(await database.db.selectFrom('grants').selectAll().execute().then((rows) => rows.length), 1, 'nothing withdrawn yet');
    await app.getByRole('button', { name: 'Withdraw' }).click();
    await confirm.getByRole('button', { name: 'Withdraw access' }).click();
    await page.getByText('E2E App no longer has access').waitFor();
    assert.equal(await page.getByRole('button', { name: 'Withdraw' }).count(), 0);
    const after = await landOnCallback(page, () => page.goto(authorizeUrl({ prompt: 'none', state: 'w1' })));
    assert.deepEqual([after.searchParams.get('error'), after.searchParams.get('state')], ['consent_required', 'w1']);
  });

  test('each host keeps its own session cookie: signed in on one host, not on the other; the flow works on the second host', async () => {
    await withdrawAll();
    const page = await newPage();
    await page.goto(`${signet.baseUrl}/signin`);
    await signIn(page);
    await page.waitForURL(`${signet.baseUrl}/account`);
    await page.goto(`${signet.altBaseUrl}/account`);
    await page.waitForURL((u) => u.href.startsWith(`${signet.altBaseUrl}/signin`));
    await page.getByRole('button', { name: 'Sign in', exact: true }).waitFor();
    await page.goto(authorizeUrl({ state: 'alt-1' }, signet.altBaseUrl));
    await signIn(page);
    const url = await landOnCallback(page, () => page.getByRole('button', { name: 'Allow' }).click());
    assert.equal(url.searchParams.get('code')?.length, 44);
    assert.equal(url.searchParams.get('state'), 'alt-1');
  });

  test('Simplified Chinese from Accept-Language, a switch that sticks, usable on a phone, no axe violations', async () => {
    await withdrawAll();
    const page = await newPage({ locale: 'zh-CN', viewport: { width: 360, height: 740 } });
    await page.goto(authorizeUrl({ state: 'zh' }));
    await page.getByLabel('邮箱或手机号').waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], 'sign-in page in Chinese');
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'no sideways scrolling on a phone');
    await page.getByLabel('邮箱或手机号').fill(PERSON.email);
    await page.getByLabel('密码').fill(PERSON.password);
    await page.getByRole('button', { name: '登录' }).click();
    await page.getByRole('button', { name: '允许' }).waitFor();
    assert.deepEqual(await accessibilityViolations(page), [], 'consent page in Chinese');
    assert.ok(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth));
    await page.getByRole('button', { name: 'English' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    await page.reload();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
  });

  test('issue 39 through oauth4webapi: discovers RFC 9728 and RFC 8414 metadata, registers itself (RFC 7591, public, loopback redirect), and completes a code flow with resource={base}/mcp; the consent page shows "(registered itself)", the host and the warning with no axe violations; a refresh keeps the resource', async () => {
    const resourceId = new URL(`${signet.baseUrl}/mcp`);
    const prm = await oauth.processResourceDiscoveryResponse(resourceId, await oauth.resourceDiscoveryRequest(resourceId, { [oauth.allowInsecureRequests]: true }));
    assert.deepEqual(prm.scopes_supported, ['documents']);
    const issuer = new URL(prm.authorization_servers![0]!);
    const as = await oauth.processDiscoveryResponse(issuer, await oauth.discoveryRequest(issuer, { algorithm: 'oauth2', [oauth.allowInsecureRequests]: true }));
    assert.ok(as.registration_endpoint);
    const registered = await oauth.processDynamicClientRegistrationResponse(
      await oauth.dynamicClientRegistrationRequest(as, { client_name: 'Agent', redirect_uris: [callback.url], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], scope: 'documents' }, { [oauth.allowInsecureRequests]: true }),
    );
    const agent: oauth.Client = { client_id: registered.client_id, token_endpoint_auth_method: 'none' };
    const verifier = oauth.generateRandomCodeVerifier();
    const state = oauth.generateRandomState();
    const url = new URL(as.authorization_endpoint!);
    url.search = new URLSearchParams({ client_id: agent.client_id, redirect_uri: callback.url, response_type: 'code', scope: 'documents', resource: resourceId.href, state, code_challenge: await oauth.calculatePKCECodeChallenge(verifier), code_challenge_method: 'S256' }).toString();
    const page = await newPage();
    await page.goto(url.href);
    await signIn(page);
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    assert.ok(await page.getByRole('heading', { name: '“Agent” (registered itself) wants to access your account' }).isVisible());
    assert.ok(await page.getByText('has not verified this application').isVisible());
    assert.ok(await page.getByText(new URL(callback.url).host, { exact: true }).isVisible(), 'the host it will send the person to');
    assert.deepEqual(await accessibilityViolations(page), [], 'consent page of a self-registered application');
    const landed = await landOnCallback(page, () => page.getByRole('button', { name: 'Allow' }).click());
    const params = oauth.validateAuthResponse(as, agent, landed, state);
    const tokens = await oauth.processAuthorizationCodeResponse(as, agent, await oauth.authorizationCodeGrantRequest(as, agent, oauth.None(), params, callback.url, verifier, { additionalParameters: { resource: resourceId.href }, [oauth.allowInsecureRequests]: true }));
    assert.equal(tokens.scope, 'documents');
    assert.equal((await verifyAccessToken(database.db, signet.deps.keys.tokenHash, signet.clock(), tokens.access_token)).resource, resourceId.href);
    const refreshed = await oauth.processRefreshTokenResponse(as, agent, await oauth.refreshTokenGrantRequest(as, agent, oauth.None(), tokens.refresh_token!, { additionalParameters: { resource: resourceId.href }, [oauth.allowInsecureRequests]: true }));
    assert.equal((await verifyAccessToken(database.db, signet.deps.keys.tokenHash, signet.clock(), refreshed.access_token)).resource, resourceId.href);
  });
});
