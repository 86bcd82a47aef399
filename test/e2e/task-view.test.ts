// The result view (issue 17 item 6, issue 18 item 5) in real headless Chromium against a real
// listening Signet, a real in-process worker and Debian's Apertium: a finished parsing task shows its
// page image with the found blocks outlined beside the rendered Markdown; a translation shows source
// and translated pages side by side or in bilingual order. Keyboard paging, axe, en and zh, 390 px.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { Browser, Page } from 'playwright-core';
import * as accounts from '../../src/accounts/accounts.ts';
import { createTranslator } from '../../src/documents/translate/create.ts';
import { createTask, type TaskContext } from '../../src/tasks/tasks.ts';
import { en } from '../../src/web/i18n/en.ts';
import { zhCN } from '../../src/web/i18n/zh-CN.ts';
import { startTaskRunner } from '../../src/worker/task-runner.ts';
import { accessibilityViolations, chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';
import { SAMPLE, samplePdf } from '../helpers/pdfs.ts';
import { apertiumMissing, skipUnlessAvailable } from '../helpers/services.ts';
import { signedInPage, waitForTasks } from '../helpers/task-browser.ts';

const PERSON = { email: 'viewer@example.com', password: 'correct horse battery staple' };
const SHOTS = '/tmp/view-shots';
const skip = chromiumSkip() || skipUnlessAvailable('Apertium (eng-spa)', apertiumMissing());

describe('browser: the result view of a finished task', { skip }, () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let signet: RunningSignet;
  let browser: Browser;
  let runner: { stop(): Promise<void> };
  const ids = { docparse: '', translate: '' };

  before(async () => {
    database = await sqliteDatabase();
    signet = await startSignet(database, {}, { translator: createTranslator({ engine: 'apertium', url: undefined, model: undefined, apiKey: undefined }) });
    const person = await accounts.createAccount(database.db, signet.clock, { email: PERSON.email, name: 'Viewer', password: PERSON.password });
    const { db, dialect, objects, translator, logger } = signet.deps;
    const ctx: TaskContext = { db, dialect, clock: () => Date.now(), objects, translator, uploadMaxBytes: 50 * 1024 * 1024 };
    const pdf = await samplePdf();
    const upload = (name: string) => ({ fileName: name, file: Readable.from([pdf]), tooLarge: () => false });
    ids.docparse = (await createTask(ctx, { sub: person.sub, kind: 'docparse', locale: 'en', upload: upload('sample.pdf'), options: async () => undefined })).id;
    ids.translate = (await createTask(ctx, { sub: person.sub, kind: 'translate', locale: 'en', upload: upload('sample.pdf'), options: async () => ({ source: 'en', target: 'es' }) })).id;
    runner = startTaskRunner({ db, dialect, clock: () => Date.now(), objects, translator, logger }, { pollMs: 100, heartbeatMs: 100 });
    await waitForTasks(db, Object.values(ids));
    browser = await launchChromium();
  });

  after(async () => {
    await runner?.stop();
    await browser?.close();
    await signet?.close();
    await database?.dispose();
  });

  const signedIn = (path: string, options: { locale?: string; width?: number } = {}) => signedInPage(browser, signet.baseUrl, path, PERSON, options);

  const noSideScroll = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);

  test('parsing: "the source page images beside the parsed result … with the detected blocks outlined"; page by page with the keyboard; axe finds nothing', async () => {
    const page = await signedIn(`/tasks/docparse/${ids.docparse}`);
    await page.getByRole('heading', { name: en.taskView.parsedHeading }).waitFor();
    assert.equal(await page.locator('img.view-page').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth > 0), true, 'the page image loads');
    assert.ok((await page.locator('svg.view-outlines rect.outline-heading').count()) >= 1, 'the title is outlined');
    assert.equal(await page.locator('.markdown h1').textContent(), SAMPLE.title);
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.screenshot({ path: `${SHOTS}/parse-page1-en.png`, fullPage: true });
    // Keyboard: Tab to "Next page" and press Enter.
    const next = page.getByRole('link', { name: en.taskView.next });
    await next.focus();
    await page.keyboard.press('Enter');
    await page.waitForURL((url) => url.searchParams.get('page') === '2');
    assert.match((await page.locator('.markdown').textContent()) ?? '', /A1 alpha/);
    await page.goto(`${signet.baseUrl}/tasks/docparse/${ids.docparse}?page=3`);
    assert.ok((await page.locator('svg.view-outlines rect.outline-table').count()) >= 1, 'the table is outlined on page 3');
    assert.equal(await page.locator('.markdown table').count(), 1, 'and rendered as a table');
    await page.screenshot({ path: `${SHOTS}/parse-page3-en.png`, fullPage: true });
    await page.context().close();
  });

  test('issue 40: "the result view\'s download list" has document.html and document.txt beside the Markdown and JSON; the HTML comes as a download (Content-Disposition: attachment) with the security headers, so its text can never run in our origin', async () => {
    const page = await signedIn(`/tasks/docparse/${ids.docparse}`);
    const list = page.getByRole('region', { name: en.taskView.downloads });
    await list.waitFor();
    const names = await list.getByRole('link').allTextContents();
    assert.deepEqual([...names].sort(), ['document.html', 'document.json', 'document.md', 'document.txt']);
    assert.match((await list.textContent()) ?? '', new RegExp(`document\\.html ${en.taskView.formats['document.html']}`));
    const href = await list.getByRole('link', { name: 'document.html' }).getAttribute('href');
    const response = await page.request.get(`${signet.baseUrl}${href}`);
    assert.equal(response.status(), 200);
    const headers = response.headers();
    assert.equal(headers['content-type'], 'text/html; charset=utf-8');
    assert.match(headers['content-disposition'] ?? '', /^attachment; filename="?sample\.html"?$/);
    assert.equal(headers['x-content-type-options'], 'nosniff');
    assert.match(headers['content-security-policy'] ?? '', /default-src 'none'.*script-src 'self'/);
    assert.match(await response.text(), new RegExp(`<h1>${SAMPLE.title}</h1>`));
    const text = await page.request.get(`${signet.baseUrl}${await list.getByRole('link', { name: 'document.txt' }).getAttribute('href')}`);
    assert.equal(text.headers()['content-type'], 'text/plain; charset=utf-8');
    assert.match(text.headers()['content-disposition'] ?? '', /^attachment; filename="?sample\.txt"?$/);
    await page.context().close();
  });

  test('parsing in Chinese at 390 px: Chinese landmarks, panes stacked, no horizontal scroll, axe finds nothing', async () => {
    const page = await signedIn(`/tasks/docparse/${ids.docparse}`, { locale: 'zh-CN', width: 390 });
    await page.getByRole('heading', { name: zhCN.taskView.parsedHeading }).waitFor();
    assert.ok(await noSideScroll(page));
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.screenshot({ path: `${SHOTS}/parse-390-zh.png`, fullPage: true });
    await page.context().close();
  });

  test('translation: "source page and translated page side by side, page by page, with a toggle to the bilingual reading order"', async () => {
    const page = await signedIn(`/tasks/translate/${ids.translate}`);
    await page.getByRole('heading', { name: en.taskView.translatedHeading }).waitFor();
    const images = page.locator('img.view-page');
    assert.equal(await images.count(), 2);
    assert.deepEqual(await images.evaluateAll((list: HTMLImageElement[]) => list.map((img) => img.complete && img.naturalWidth > 0)), [true, true]);
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.screenshot({ path: `${SHOTS}/translate-side-by-side-en.png`, fullPage: true });
    await page.getByRole('link', { name: en.taskView.bilingual }).click();
    await page.waitForURL((url) => url.searchParams.get('order') === 'bilingual');
    assert.ok(await page.locator('.view-panes.view-bilingual').isVisible());
    await page.getByRole('link', { name: en.taskView.next }).click();
    await page.waitForURL((url) => url.searchParams.get('page') === '2' && url.searchParams.get('order') === 'bilingual');
    await page.screenshot({ path: `${SHOTS}/translate-bilingual-en.png`, fullPage: true });
    await page.context().close();
  });

  test('another person, or nobody, gets no view and no page image', async () => {
    const response = await fetch(`${signet.baseUrl}/api/v1/docparse/tasks/${ids.docparse}/pages/1.png`);
    assert.equal(response.status, 401);
    await accounts.createAccount(database.db, signet.clock, { email: 'other@example.com', password: PERSON.password });
    const context = await browser.newContext();
    const page = await context.newPage();
    await page.goto(`${signet.baseUrl}/signin`);
    await page.getByLabel(en.identifierLabel).fill('other@example.com');
    await page.getByLabel(en.passwordLabel).fill(PERSON.password);
    await page.getByRole('button', { name: en.signInButton }).click();
    await page.waitForURL((url) => url.pathname !== '/signin');
    const view = await page.goto(`${signet.baseUrl}/tasks/docparse/${ids.docparse}`);
    assert.equal(view?.status(), 404);
    const image = await page.goto(`${signet.baseUrl}/api/v1/docparse/tasks/${ids.docparse}/pages/1.png`);
    assert.equal(image?.status(), 404);
    await context.close();
  });
});
