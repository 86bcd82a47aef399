// What the result-view browser tests share: waiting for real tasks to finish, and a browser page
// signed in as the task's owner at a given path.
import assert from 'node:assert/strict';
import type { Kysely } from 'kysely';
import type { Browser, Page } from 'playwright-core';
import type { Database } from '../../src/db/schema.ts';
import { en } from '../../src/web/i18n/en.ts';
import { zhCN } from '../../src/web/i18n/zh-CN.ts';

/** Waits (up to `tries` × 100 ms each) until every task finished; fails at once on a task that failed. */
export async function waitForTasks(db: Kysely<Database>, ids: string[], tries = 600): Promise<void> {
  for (const id of ids) {
    for (let i = 0; i < tries; i += 1) {
      const row = await db.selectFrom('tasks').select(['status', 'error']).where('id', '=', id).executeTakeFirstOrThrow();
      if (row.status === 'finished') break;
      assert.ok(row.status === 'queued' || row.status === 'running', `task ${id}: ${row.status} ${row.error ?? ''}`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** A new browser context signed in through the sign-in page, at `path` once signed in. */
export async function signedInPage(browser: Browser, baseUrl: string, path: string, person: { email: string; password: string }, options: { locale?: string; width?: number } = {}): Promise<Page> {
  const context = await browser.newContext({ locale: options.locale ?? 'en-US', viewport: { width: options.width ?? 1280, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${baseUrl}${path}`);
  const t = options.locale?.startsWith('zh') ? zhCN : en;
  await page.getByLabel(t.identifierLabel).fill(person.email);
  await page.getByLabel(t.passwordLabel).fill(person.password);
  await page.getByRole('button', { name: t.signInButton }).click();
  await page.waitForURL((url) => url.pathname === path.split('?')[0]);
  await page.waitForLoadState('load');
  return page;
}
