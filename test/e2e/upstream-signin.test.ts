// Issue 33 in Chromium: "Sign in with NAME" with real OpenID Providers as the upstream — node-oidc-provider
// and a second Signet — through discovery; the link page ("Password", "Link and continue") for an
// existing account's e-mail; /account's "Sign-in providers" with Unlink and Link NAME. Screenshots of the sign-in page
// with its provider buttons and of the link page go to /tmp/idp-shots.
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import * as accounts from '../../src/accounts/accounts.ts';
import * as clients from '../../src/clients/clients.ts';
import { listLinks } from '../../src/accounts/upstream/links.ts';
import { accessibilityViolations, chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { startCallbackServer, type CallbackServer } from '../helpers/callback-server.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';
import { addUpstream, startNodeOidcUpstream, startSignetUpstream, type NodeOidcUpstream, type SignetUpstream } from '../accounts/upstream/support.ts';

const SHOTS = '/tmp/idp-shots';
const UPSTREAM_PERSON = { email: 'grace@example.org', password: 'upstream-password-1', name: 'Grace Upstream' };

describe('browser: signing in through upstream identity providers (issue 33)', { skip: chromiumSkip() }, () => {
  const dbs: Array<Awaited<ReturnType<typeof sqliteDatabase>>> = [];
  let down: RunningSignet;
  let app: CallbackServer;
  let clientId: string;
  let reference: NodeOidcUpstream;
  let corp: SignetUpstream;
  let browser: Browser;

  before(async () => {
    mkdirSync(SHOTS, { recursive: true });
    const [downDb, upDb] = [await sqliteDatabase(), await sqliteDatabase()];
    dbs.push(downDb, upDb);
    down = await startSignet(downDb, { SIGNET_SIGNUP: 'open' });
    app = await startCallbackServer();
    ({ client: { clientId } } = await clients.registerClient(downDb.db, down.clock, down.deps.keys.tokenHash, { name: 'Notes App', redirectUris: [app.url], scopes: ['openid', 'profile', 'email'], oidc: true, isPublic: true }));
    reference = await startNodeOidcUpstream(`${down.baseUrl}/signin/idp/reference/callback`);
    await addUpstream(down, { slug: 'reference', name: 'Reference OP', issuer: reference.issuer, clientId: reference.clientId, clientSecret: reference.clientSecret });
    corp = await startSignetUpstream(upDb, `${down.baseUrl}/signin/idp/corp/callback`, UPSTREAM_PERSON);
    await addUpstream(down, { slug: 'corp', name: 'Corp Signet', issuer: corp.issuer, clientId: corp.clientId, clientSecret: corp.clientSecret });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await corp?.close();
    await reference?.close();
    await app?.close();
    await down?.close();
    for (const d of dbs) await d.dispose();
  });

  async function newPage(locale = 'en-US'): Promise<Page> {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, locale });
    return context.newPage();
  }

  function authorizeUrl(): string {
    const url = new URL('/oauth/authorize', down.baseUrl);
    for (const [k, v] of Object.entries({ response_type: 'code', client_id: clientId, redirect_uri: app.url, scope: 'openid profile email', state: 'xyz', nonce: 'n-1', code_challenge: 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM', code_challenge_method: 'S256' })) url.searchParams.set(k, v);
    return url.href;
  }

  test('"Sign in with Reference OP" (node-oidc-provider): its pages, then Signet\'s consent, then the application', async () => {
    reference.people.set('ada', { email: 'ada@reference.example', email_verified: true, name: 'Ada Reference' });
    const page = await newPage();
    await page.goto(authorizeUrl());
    await page.getByRole('link', { name: 'Sign in with Reference OP' }).waitFor();
    assert.ok(await page.getByRole('link', { name: 'Sign in with Corp Signet' }).isVisible());
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.screenshot({ path: `${SHOTS}/signin-with-providers.png`, fullPage: true });
    await page.getByRole('link', { name: 'Sign in with Reference OP' }).click();
    await page.waitForURL((url) => url.origin === reference.issuer);
    await page.locator('input[name="login"]').fill('ada');
    await page.locator('input[name="password"]').fill('anything');
    await page.getByRole('button', { name: 'Sign-in' }).click();
    await page.getByRole('button', { name: 'Continue' }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    assert.ok((await page.content()).includes('Notes App'));
    const callback = app.next();
    await page.getByRole('button', { name: 'Allow' }).click();
    const received = await callback;
    assert.ok(received.searchParams.get('code'));
    assert.equal(received.searchParams.get('state'), 'xyz');
  });

  test('an existing account\'s e-mail: the link page asks for its Password, "Link and continue", then /account lists the provider with Unlink', async () => {
    const local = await accounts.createAccount(down.deps.db, down.clock, { email: UPSTREAM_PERSON.email, password: 'the-local-password', name: 'Grace Local' });
    const page = await newPage();
    await page.goto(authorizeUrl());
    await page.getByRole('link', { name: 'Sign in with Corp Signet' }).click();
    await page.waitForURL((url) => url.origin === corp.baseUrl);
    await page.getByLabel('Email or phone').fill(UPSTREAM_PERSON.email);
    await page.getByLabel('Password').fill(UPSTREAM_PERSON.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Allow' }).click();
    await page.waitForURL(`${down.baseUrl}/signin/idp/link`);
    await page.getByRole('button', { name: 'Link and continue' }).waitFor();
    assert.match(await page.locator('#link-why').innerText(), /already exists here/);
    assert.deepEqual(await listLinks(down.deps.db, local.sub), [], 'nothing linked before the password');
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.screenshot({ path: `${SHOTS}/link-page.png`, fullPage: true });
    await page.getByLabel('Password').fill('not-this-one');
    await page.getByRole('button', { name: 'Link and continue' }).click();
    await page.getByRole('alert').filter({ hasText: 'That password is not right' }).waitFor();
    await page.getByLabel('Password').fill('the-local-password');
    await page.getByRole('button', { name: 'Link and continue' }).click();
    const callback = app.next();
    await page.getByRole('button', { name: 'Allow' }).click();
    assert.ok((await callback).searchParams.get('code'));
    assert.deepEqual((await listLinks(down.deps.db, local.sub)).map((l) => l.provider), ['corp']);
    await page.goto(`${down.baseUrl}/account`);
    const section = page.getByRole('region', { name: 'Sign-in providers' });
    await section.getByText('Corp Signet').waitFor();
    assert.deepEqual(await accessibilityViolations(page), []);
    await section.getByRole('button', { name: 'Unlink' }).click();
    await page.getByText('Corp Signet is unlinked.').waitFor();
    assert.deepEqual(await listLinks(down.deps.db, local.sub), []);
    // Linked again from /account (a form: being signed in is the proof); the upstream still knows this browser.
    await section.getByRole('button', { name: 'Link Corp Signet' }).click();
    await page.getByText('Corp Signet is linked: you can sign in with it.').waitFor();
    assert.deepEqual((await listLinks(down.deps.db, local.sub)).map((l) => l.provider), ['corp']);
  });

  test('in Chinese: the sign-in page\'s provider buttons', async () => {
    const page = await newPage('zh-CN');
    await page.goto(authorizeUrl());
    await page.getByRole('link', { name: '使用 Reference OP 登录' }).waitFor();
  });
});
