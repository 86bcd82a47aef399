// The notification pages without a browser: /inbox (newest first, Mark as read, Mark all as read, the
// forms working without script), the header's unread badge on every signed-in page, and on /account
// Mute / Unmute per application and the preference grid. Through the consent page, a first
// authorization notifies in the page's language.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NotificationEvent } from '../../src/notifications/messages.ts';
import { recordNotification } from '../../src/notifications/notifications.ts';
import { getPreferences } from '../../src/notifications/preferences.ts';
import { findGrant, recordConsent } from '../../src/consent/grants.ts';
import { forEachDatabase, type TestDatabase } from '../helpers/databases.ts';
import { csrfOf, flowSetup, TinyBrowser, type Flow } from '../oauth/authorize-support.ts';

async function signedIn(database: TestDatabase, headers: Record<string, string> = {}): Promise<{ flow: Flow; browser: TinyBrowser; notify(event: NotificationEvent, link?: string): Promise<string> }> {
  const flow = await flowSetup(database);
  const browser = new TinyBrowser(flow, flow.host, headers);
  assert.equal((await browser.signIn()).statusCode, 303);
  return {
    flow,
    browser,
    notify: (event, link) =>
      database.db.transaction().execute((trx) => recordNotification(trx, database.dialect, flow.clock(), { sub: flow.sub, locale: 'en', event, ...(link ? { link } : {}) })),
  };
}

const finished = (fileName: string): NotificationEvent => ({ category: 'docparse', outcome: 'finished', fileName });
const badgeOf = (html: string) => /<a href="\/inbox" id="inbox-badge"[^>]*aria-label="([^"]*)"[^>]*>Inbox <span class="badge" aria-hidden="true"( hidden)?>(\d+)<\/span><\/a>/.exec(html);

forEachDatabase('inbox and account pages', (open) => {
  test('"an unread badge in the page header on every signed-in page", labelled like "Inbox, 3 unread", linking to /inbox', async () => {
    const { browser, notify } = await signedIn(await open());
    const empty = badgeOf((await browser.get('/account')).body);
    assert.ok(empty, 'the badge is in the header');
    assert.equal(empty[1], 'Inbox, no unread notifications');
    assert.equal(empty[2], ' hidden');
    for (const name of ['a', 'b', 'c']) await notify(finished(`${name}.pdf`));
    for (const path of ['/account', '/tasks', '/inbox']) {
      const page = await browser.get(path);
      assert.equal(page.statusCode, 200, path);
      const badge = badgeOf(page.body);
      assert.ok(badge, `${path} shows the badge`);
      assert.equal(badge[1], 'Inbox, 3 unread');
      assert.equal(badge[3], '3');
      assert.match(page.body, /<script src="\/static\/inbox.js" defer><\/script>/, 'the live badge script is loaded');
    }
    const signedOut = await new TinyBrowser(browser.flow).get('/signin');
    assert.doesNotMatch(signedOut.body, /inbox-badge|inbox\.js/, 'no badge and no stream before sign-in');
  });

  test('/inbox: "notifications newest first" with title, body, time, link and read state; Mark as read and Mark all as read work without script', async () => {
    const { browser, notify } = await signedIn(await open());
    const older = await notify(finished('older.pdf'), '/tasks#task-1');
    browser.flow.clock.advance(60_000);
    const newer = await notify({ category: 'translation', outcome: 'failed', fileName: 'newer.pdf', error: 'The engine <b>timed out</b>.' }, 'https://evil.example/');
    const page = await browser.get('/inbox');
    assert.equal(page.statusCode, 200);
    const html = page.body;
    assert.ok(html.indexOf(`notification-${newer}`) < html.indexOf(`notification-${older}`), 'newest first');
    assert.match(html, /<a href="\/tasks#task-1">Document parsing of older.pdf finished<\/a>/, 'a link on this site is a link');
    assert.doesNotMatch(html, /evil\.example/, 'a link elsewhere is not');
    assert.match(html, /The engine &lt;b&gt;timed out&lt;\/b&gt;\./, 'text is escaped');
    assert.match(html, /<time datetime="[^"]+Z">/);
    assert.equal([...html.matchAll(/<span class="notification-state">Unread<\/span>/g)].length, 2);
    assert.equal([...html.matchAll(/>Mark as read<\/button>/g)].length, 2);
    assert.match(html, /<button type="submit">Mark all as read<\/button>/);

    const marked = await browser.post('/inbox/read', { _csrf: csrfOf(html), id: older });
    assert.equal(marked.statusCode, 303);
    const after = (await browser.get('/inbox')).body;
    assert.match(after, new RegExp(`id="notification-${older}" data-id="${older}" data-read="true"`));
    assert.equal(badgeOf(after)![1], 'Inbox, 1 unread');

    const all = await browser.post('/inbox/read-all', { _csrf: csrfOf(after) });
    assert.equal(all.statusCode, 303);
    const done = (await browser.get(String(all.headers.location))).body;
    assert.match(done, /All notifications are marked as read\./);
    assert.doesNotMatch(done, />Mark as read<\/button>/);
    assert.match(done, /<button type="submit" disabled>Mark all as read<\/button>/);
    assert.equal(badgeOf(done)![1], 'Inbox, no unread notifications');
  });

  test('/inbox pages older notifications by cursor', async () => {
    const { browser, notify } = await signedIn(await open());
    for (let i = 0; i < 23; i++) await notify(finished(`file-${i}.pdf`));
    const first = (await browser.get('/inbox')).body;
    assert.equal([...first.matchAll(/class="card notification"/g)].length, 20);
    assert.match(first, /file-22\.pdf/);
    const older = /<a href="(\/inbox\?cursor=[^"]+)">Show older notifications<\/a>/.exec(first);
    assert.ok(older);
    const second = (await browser.get(older[1]!.replace(/&amp;/g, '&'))).body;
    assert.equal([...second.matchAll(/class="card notification"/g)].length, 3);
    assert.match(second, /file-0\.pdf/);
    assert.match(second, /<a href="\/inbox">Back to the newest notifications<\/a>/);
    assert.equal((await browser.get('/inbox?cursor=forged')).statusCode, 302);
  });

  test('/account: each authorized application has **Mute**, then **Unmute**; muting keeps the grant', async () => {
    const database = await open();
    const { flow, browser } = await signedIn(database);
    await recordConsent(database.db, flow.clock, flow.sub, flow.clientId, ['openid'], ['openid'], { dialect: database.dialect, locale: 'en' });
    const page = (await browser.get('/account')).body;
    assert.match(page, /<form method="post" action="\/account\/mute" class="inline">/);
    assert.match(page, /title="Mute Demo App: [^"]+">Mute<\/button>/);
    const muted = await browser.post('/account/mute', { _csrf: csrfOf(page), client_id: flow.clientId });
    assert.equal(muted.statusCode, 303);
    assert.deepEqual((await getPreferences(database.db, flow.sub)).muted_clients, [flow.clientId]);
    assert.ok(await findGrant(database.db, flow.sub, flow.clientId), 'the application keeps its access');
    const after = (await browser.get(String(muted.headers.location))).body;
    assert.match(after, /Demo App is muted\./);
    assert.match(after, />Unmute<\/button>/);
    assert.doesNotMatch(after, />Mute<\/button>/);
    const unmuted = await browser.post('/account/unmute', { _csrf: csrfOf(after), client_id: flow.clientId });
    assert.equal(unmuted.statusCode, 303);
    assert.deepEqual((await getPreferences(database.db, flow.sub)).muted_clients, []);
    assert.match((await browser.get(String(unmuted.headers.location))).body, /Demo App is no longer muted\./);
    // Without the CSRF token nothing changes.
    assert.equal((await browser.post('/account/mute', { client_id: flow.clientId })).statusCode, 403);
    assert.deepEqual((await getPreferences(database.db, flow.sub)).muted_clients, []);
  });

  test('/account: "the notification-preference grid (category × channel), push channels shown disabled"; Save preferences stores in-app and e-mail', async () => {
    const database = await open();
    const { flow, browser } = await signedIn(database);
    const page = (await browser.get('/account')).body;
    for (const category of ['translation', 'docparse', 'security']) {
      assert.match(page, new RegExp(`value="${category}:in_app" aria-labelledby="category-${category} channel-in_app" checked>`));
      assert.match(page, new RegExp(`value="${category}:email" aria-labelledby="category-${category} channel-email">`));
      for (const push of ['browser_push', 'mobile_push']) assert.match(page, new RegExp(`value="${category}:${push}" aria-labelledby="category-${category} channel-${push}" disabled>`));
    }
    assert.equal([...page.matchAll(/<span class="unavailable" id="unavailable-\w+">Not available<\/span>/g)].length, 2);
    assert.match(page, /<button type="submit" class="primary">Save preferences<\/button>/);

    const saved = await browser.post('/account/notifications', { _csrf: csrfOf(page), preference: ['translation:in_app', 'translation:email', 'docparse:in_app', 'security:email', 'security:browser_push'] });
    assert.equal(saved.statusCode, 303);
    const { categories } = await getPreferences(database.db, flow.sub);
    assert.deepEqual(categories.translation, { in_app: true, email: true, browser_push: false, mobile_push: false });
    assert.deepEqual(categories.docparse, { in_app: true, email: false, browser_push: false, mobile_push: false });
    assert.deepEqual(categories.security, { in_app: false, email: true, browser_push: false, mobile_push: false }, 'a push box sent anyway is ignored');
    assert.match((await browser.get(String(saved.headers.location))).body, /Your notification preferences are saved\./);
  });

  test('consent page: the first Allow of an application sends a `security` notification in the page\'s language', async () => {
    const database = await open();
    const flow = await flowSetup(database);
    const browser = new TinyBrowser(flow, flow.host, { 'accept-language': 'zh-CN,zh;q=0.9' });
    await browser.fullFlow({ response_type: 'code', scope: 'openid profile' });
    const rows = await database.db.selectFrom('notifications').selectAll().where('sub', '=', flow.sub).execute();
    assert.equal(rows.length, 1);
    assert.equal(rows[0]!.category, 'security');
    assert.equal(rows[0]!.client_id, flow.clientId);
    assert.equal(rows[0]!.locale, 'zh-CN');
    assert.equal(rows[0]!.title, 'Demo App 现在可以让你登录');
  });
});
