// /tasks in real headless Chromium against a real listening Signet, with an in-process worker started
// only after the upload, so the page is seen going from queued to finished without a reload.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import * as accounts from '../../src/accounts/accounts.ts';
import { en } from '../../src/web/i18n/en.ts';
import { zhCN } from '../../src/web/i18n/zh-CN.ts';
import type { Messages } from '../../src/web/i18n/en.ts';
import { startTaskRunner } from '../../src/worker/task-runner.ts';
import { accessibilityViolations, chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';
import { notAPdf, plainPdf, SAMPLE, samplePdf } from '../helpers/pdfs.ts';

const PERSON = { email: 'tasks@example.com', password: 'a long tasks password' };
const SCREENSHOT = '/tmp/tasks-page.png';

describe('browser: the /tasks page in Chromium', { skip: chromiumSkip() }, () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let signet: RunningSignet;
  let browser: Browser;
  let runner: { stop(): Promise<void> } | undefined;
  const contexts: BrowserContext[] = [];

  before(async () => {
    database = await sqliteDatabase();
    signet = await startSignet(database);
    await accounts.createAccount(database.db, signet.clock, { email: PERSON.email, name: 'Tasks Person', password: PERSON.password });
    browser = await launchChromium();
  });

  after(async () => {
    await runner?.stop();
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await signet?.close();
    await database?.dispose();
  });

  /** The worker, on the system clock; started once, after the first upload that should run. */
  function startWorker(): void {
    const { db, dialect, objects, translator, logger } = signet.deps;
    runner ??= startTaskRunner({ db, dialect, clock: () => Date.now(), objects, translator, logger }, { pollMs: 100, heartbeatMs: 100 });
  }

  /** A signed-in page on /tasks: the page sends a signed-out person to sign in and back. */
  async function openTasks(options: { locale?: string; viewport?: { width: number; height: number } } = {}, t: Messages = en): Promise<Page> {
    const context = await browser.newContext({ locale: options.locale ?? 'en-US', acceptDownloads: true, ...(options.viewport ? { viewport: options.viewport } : {}) });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(`${signet.baseUrl}/tasks`);
    assert.equal(new URL(page.url()).pathname, '/signin', 'not signed in: sent to sign in');
    await page.getByLabel(t.identifierLabel).fill(PERSON.email);
    await page.getByLabel(t.passwordLabel).fill(PERSON.password);
    await page.getByRole('button', { name: t.signInButton }).click();
    await page.waitForURL((url) => url.pathname === '/tasks');
    // Marks this document: a reload or navigation would lose the mark.
    await page.evaluate(() => document.documentElement.setAttribute('data-test-loaded', 'once'));
    return page;
  }

  async function upload(page: Page, t: Messages, kind: 'parse' | 'translate', name: string, pdf: Buffer): Promise<Locator> {
    const section = page.getByRole('region', { name: kind === 'parse' ? t.tasks.parseHeading : t.tasks.translateHeading });
    await section.getByLabel(t.tasks.fileLabel).setInputFiles({ name, mimeType: 'application/pdf', buffer: pdf });
    await section.getByRole('button', { name: kind === 'parse' ? t.tasks.parseButton : t.tasks.translateButton }).click();
    const row = section.getByRole('listitem').filter({ has: page.getByRole('heading', { name, exact: true }) });
    await row.waitFor();
    return row;
  }

  const statusOf = (row: Locator) => row.locator('.task-status');
  const notReloaded = (page: Page) => page.evaluate(() => document.documentElement.getAttribute('data-test-loaded') === 'once');

  test('Cancel on a queued task: the row says Cancelled and offers Delete record instead; the file name is text, never markup', async () => {
    const page = await openTasks();
    const name = 'to-cancel <img src=x alt=injected>.pdf';
    const row = await upload(page, en, 'parse', name, await plainPdf(2));
    assert.equal(await statusOf(row).textContent(), en.tasks.status.queued);
    await row.getByRole('button', { name: en.tasks.cancelButton }).click();
    await row.locator('.task-status', { hasText: en.tasks.status.cancelled }).waitFor();
    assert.equal(await row.getByRole('button', { name: en.tasks.cancelButton }).count(), 0, 'no Cancel on an ended task');
    const deleteButton = row.getByRole('button', { name: en.tasks.deleteButton });
    assert.ok(await deleteButton.isVisible());
    assert.ok(await deleteButton.evaluate((element) => element === document.activeElement), 'focus moves from Cancel to Delete record');
    assert.ok(await notReloaded(page));
    // The file name is text wherever it is drawn: by the script above, by the server after a reload.
    assert.equal(await row.locator('img').count(), 0);
    await page.reload();
    assert.equal(await row.getByRole('heading').textContent(), name);
    assert.equal(await row.locator('img').count(), 0);
  });

  test('upload for parsing: listed as queued, progress and status change without a reload, document.md downloads and previews, Delete record asks first and removes the row; axe finds nothing', async () => {
    const page = await openTasks();
    const row = await upload(page, en, 'parse', 'sample.pdf', await samplePdf());
    assert.equal(await statusOf(row).textContent(), en.tasks.status.queued);
    assert.equal(await row.locator('.task-progress span').textContent(), '0 of 4 pages');
    assert.equal(await row.getByRole('progressbar', { name: '0 of 4 pages' }).count(), 1, 'the progress bar is labelled with its words');

    startWorker();
    await row.locator('.task-status', { hasText: en.tasks.status.finished }).waitFor({ timeout: 60_000 });
    assert.ok(await notReloaded(page), 'updated in place, no reload');
    assert.equal(await row.locator('.task-progress span').textContent(), '4 of 4 pages');
    assert.equal(await row.getByRole('progressbar', { name: '4 of 4 pages' }).count(), 1);
    assert.equal(await row.getByRole('button', { name: en.tasks.cancelButton }).count(), 0);

    const download = page.waitForEvent('download');
    await row.getByRole('link', { name: 'document.md' }).click();
    const markdown = await readFile((await (await download).path())!, 'utf8');
    assert.ok(markdown.includes(SAMPLE.title), 'document.md holds the PDF heading');

    const preview = row.getByRole('button', { name: en.tasks.previewButton });
    await preview.click();
    await row.locator('.task-preview pre', { hasText: SAMPLE.title }).waitFor();
    assert.equal(await preview.getAttribute('aria-expanded'), 'true');
    assert.equal(await row.locator('.task-preview pre').evaluate((pre) => pre.children.length), 0, 'the Markdown is text, not HTML');

    assert.deepEqual(await accessibilityViolations(page), [], '/tasks with tasks listed');
    await page.screenshot({ path: SCREENSHOT, fullPage: true });

    await row.getByRole('button', { name: en.tasks.deleteButton }).click();
    const confirmation = row.getByRole('group');
    assert.ok((await confirmation.textContent())!.includes(en.tasks.confirmDelete.replace('{name}', 'sample.pdf')));
    await confirmation.getByRole('button', { name: en.tasks.confirmNo }).click();
    assert.ok(await row.isVisible(), 'Keep keeps it');
    await row.getByRole('button', { name: en.tasks.deleteButton }).click();
    await row.getByRole('group').getByRole('button', { name: en.tasks.confirmYes, exact: true }).click();
    await row.waitFor({ state: 'detached' });
    const left = await page.evaluate(async () => ((await (await fetch('/api/v1/docparse/tasks')).json()) as { tasks: Array<{ source: { name: string } }> }).tasks.map((t) => t.source.name));
    assert.ok(!left.includes('sample.pdf'), 'the record is gone on the server too');
    assert.ok(await notReloaded(page));
  });

  test('in Chinese at 390 px: Chinese labels, no horizontal scroll, axe finds nothing', async () => {
    const page = await openTasks({ locale: 'zh-CN', viewport: { width: 390, height: 844 } }, zhCN);
    assert.equal(await page.locator('html').getAttribute('lang'), 'zh-CN');
    const row = await upload(page, zhCN, 'parse', '中文样例.pdf', await samplePdf());
    startWorker();
    await row.locator('.task-status', { hasText: zhCN.tasks.status.finished }).waitFor({ timeout: 60_000 });
    assert.ok(await page.getByRole('heading', { level: 1, name: zhCN.tasks.heading }).isVisible());
    assert.ok(await page.getByRole('link', { name: zhCN.tasks.nav }).isVisible(), 'the header links to the tasks page');
    assert.ok(await row.getByRole('button', { name: zhCN.tasks.deleteButton }).isVisible());
    assert.ok(await row.getByRole('button', { name: zhCN.tasks.previewButton }).isVisible());
    assert.equal(await row.locator('.task-progress span').textContent(), '已处理 4 / 4 页');
    assert.ok(await page.getByRole('button', { name: zhCN.tasks.translateButton }).isVisible());
    const width = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(width <= 390, `no horizontal scroll at 390 px (scrollWidth ${width})`);
    await row.getByRole('button', { name: zhCN.tasks.previewButton }).click();
    await row.locator('.task-preview pre', { hasText: SAMPLE.title }).waitFor();
    const widthWithPreview = await page.evaluate(() => document.documentElement.scrollWidth);
    assert.ok(widthWithPreview <= 390, `no horizontal scroll with the preview open (scrollWidth ${widthWithPreview})`);
    assert.deepEqual(await accessibilityViolations(page), [], '/tasks in Chinese at 390 px');
  });

  test('translation with no engine configured: the form says so, and an upload is listed as failed with the message naming the setting', async () => {
    const page = await openTasks();
    const section = page.getByRole('region', { name: en.tasks.translateHeading });
    assert.ok(await section.getByText(en.tasks.notConfigured).isVisible());
    const row = await upload(page, en, 'translate', 'to-translate.pdf', await plainPdf(1));
    assert.equal(await statusOf(row).textContent(), en.tasks.status.failed);
    assert.ok((await row.locator('.task-error').textContent())!.includes('SIGNET_TRANSLATE_ENGINE'));
    assert.ok(await row.getByRole('button', { name: en.tasks.deleteButton }).isVisible());
  });

  test('a refused upload shows the API message beside the form', async () => {
    const page = await openTasks();
    const section = page.getByRole('region', { name: en.tasks.parseHeading });
    await section.getByLabel(en.tasks.fileLabel).setInputFiles({ name: 'picture.pdf', mimeType: 'application/pdf', buffer: notAPdf() });
    await section.getByRole('button', { name: en.tasks.parseButton }).click();
    const alert = section.getByRole('alert');
    await alert.filter({ hasText: 'not a PDF' }).waitFor();
    assert.equal(await section.getByRole('heading', { name: 'picture.pdf' }).count(), 0, 'nothing listed');
  });
});
