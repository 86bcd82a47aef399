// The result view's "Layout check" card (issue 34 item 5) in real headless Chromium against a real
// listening Signet and a real in-process worker: a Chinese manual page of the translation corpus
// translated zh→en through the OpenAI-compatible engine (a server on loopback answering from the
// corpus dictionary, which cannot place style tags, so the styled words it gets fall back to their
// paragraph's style), with a glossary that renders "Chapter 3" in Ol Chiki, a script no font here
// draws. The card names both on the page: characters printed as empty boxes, words whose style the
// engine lost.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import * as accounts from '../../src/accounts/accounts.ts';
import { extractDocument } from '../../src/documents/pdf/extract.ts';
import { createTranslator } from '../../src/documents/translate/create.ts';
import { styledStretches, toMarkup } from '../../src/documents/translate/styles.ts';
import { createTask, LAYOUT_CHECK, resultKey, type TaskContext } from '../../src/tasks/tasks.ts';
import { en } from '../../src/web/i18n/en.ts';
import { startTaskRunner } from '../../src/worker/task-runner.ts';
import { accessibilityViolations, chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { startDictionaryChatServer, type DictionaryServer } from '../helpers/dictionary-chat-server.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';
import { ghostscriptUnavailableReason, popplerUnavailableReason } from '../helpers/poppler.ts';
import { skipUnlessAvailable } from '../helpers/services.ts';
import { signedInPage, waitForTasks } from '../helpers/task-browser.ts';

const PERSON = { email: 'checker@example.com', password: 'correct horse battery staple' };
const CORPUS = path.resolve(import.meta.dirname, '../../bench/translate-pdf/corpus');
const OL_CHIKI = 'ᱪᱮᱯᱴᱟᱨ 3';
const skip = chromiumSkip() || skipUnlessAvailable('ghostscript and poppler', ghostscriptUnavailableReason() ?? popplerUnavailableReason());

describe('browser: the Layout check card of a translation', { skip }, () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let signet: RunningSignet;
  let browser: Browser;
  let chat: DictionaryServer;
  let runner: { stop(): Promise<void> };
  let id = '';

  before(async () => {
    const dictionary = JSON.parse(readFileSync(path.join(CORPUS, 'zh-en.json'), 'utf8')) as Record<string, string>;
    // An engine that knows whole passages only: the styled stretches' own entries (which the dictionary
    // alignment of issue 42 looks up) are left out, so those words fall back to their paragraph's style.
    for (const page of (await extractDocument(readFileSync(path.join(CORPUS, 'debian-reference-zh.pdf')))).pages) {
      for (const block of page.blocks) {
        const markup = toMarkup(block);
        if (markup) for (const stretch of styledStretches(block, markup)) delete dictionary[stretch.text];
      }
    }
    // The glossary's placeholder for "Chapter 3" passes through the engine as it is, as a model's does.
    chat = await startDictionaryChatServer({ ...dictionary, ZQX0QZ: 'ZQX0QZ' });
    database = await sqliteDatabase();
    const translator = createTranslator({ engine: 'openai', url: chat.url, model: 'dictionary', apiKey: undefined });
    signet = await startSignet(database, {}, { translator });
    const person = await accounts.createAccount(database.db, signet.clock, { email: PERSON.email, name: 'Checker', password: PERSON.password });
    const { db, dialect, objects, logger } = signet.deps;
    const ctx: TaskContext = { db, dialect, clock: () => Date.now(), objects, translator, uploadMaxBytes: 50 * 1024 * 1024 };
    const pdf = readFileSync(path.join(CORPUS, 'debian-reference-zh.pdf'));
    const upload = { fileName: 'debian-reference-zh.pdf', file: Readable.from([pdf]), tooLarge: () => false };
    id = (await createTask(ctx, { sub: person.sub, kind: 'translate', locale: 'en', upload, options: async () => ({ source: 'zh', target: 'en', glossary: { 'Chapter 3': OL_CHIKI } }) })).id;
    runner = startTaskRunner({ db, dialect, clock: () => Date.now(), objects, translator, logger }, { pollMs: 100, heartbeatMs: 100 });
    await waitForTasks(db, [id], 1200);
    browser = await launchChromium();
  });

  after(async () => {
    await runner?.stop();
    await browser?.close();
    await signet?.close();
    await database?.dispose();
    await chat?.close();
  });

  const signedIn = (url: string) => signedInPage(browser, signet.baseUrl, url, PERSON);

  test('"shows missing glyphs and style fallbacks": the card names the characters printed as empty boxes and the words set in their paragraph\'s style, and links the page; axe finds nothing', async () => {
    const { objects } = signet.deps;
    const { body } = await objects.get(resultKey(id, LAYOUT_CHECK));
    const stored = JSON.parse(Buffer.concat((await body.toArray()) as Buffer[]).toString('utf8')) as Array<{ page: number; missingGlyphs?: number; styleFallbacks?: number }>;
    const page1 = stored.find((p) => p.page === 1);
    assert.ok(page1 && (page1.missingGlyphs ?? 0) >= 6, `layout-check.json: ${JSON.stringify(stored)}`);
    assert.ok((page1.styleFallbacks ?? 0) > 0, `layout-check.json: ${JSON.stringify(stored)}`);

    const page = await signedIn(`/tasks/translate/${id}`);
    const card = page.locator('section.view-check');
    await card.getByRole('heading', { name: en.taskView.check }).waitFor();
    const text = (await card.innerText()).replace(/\s+/g, ' ');
    assert.match(text, new RegExp(`${page1.missingGlyphs} characters printed as empty boxes \\(no font here has them\\)`));
    assert.match(text, new RegExp(`${page1.styleFallbacks} words? set in (its|their) paragraph's style`));
    assert.match(text, /On page 1: /);
    assert.doesNotMatch(text, new RegExp(en.taskView.checkClean.slice(0, 30)));
    await card.screenshot({ path: '/tmp/view-shots/layout-check-card-en.png' });
    await card.getByRole('link', { name: /On page 1:/ }).click();
    await page.waitForURL((u) => u.searchParams.get('page') === '1');
    assert.deepEqual(await accessibilityViolations(page), []);
    await page.context().close();
  });
});
