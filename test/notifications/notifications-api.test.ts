// The first-party notification API through the real app: the inbox's shape and paging, marking read
// (another person's notification is 404), Origin checks, preferences (defaults and refusals), muting an
// application without revoking its access, withdrawing clearing the mute, and the `security`
// notification of a first authorization.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createAccount } from '../../src/accounts/accounts.ts';
import { startSession } from '../../src/accounts/sessions.ts';
import { recordConsent, withdrawApplication } from '../../src/consent/grants.ts';
import type { NotificationEvent } from '../../src/notifications/messages.ts';
import { recordNotification } from '../../src/notifications/notifications.ts';
import { TEST_BASE_URL } from '../helpers/app.ts';
import { forEachDatabase, type TestDatabase } from '../helpers/databases.ts';
import { HOST, oauthFixture, type OAuthFixture } from '../oauth/token-fixtures.ts';

const ORIGIN = TEST_BASE_URL;

type Delivery = { channel: string; status: string; reason: string | null };
type Notification = { id: string; category: string; title: string; body: string; link: string | null; created_at: string; read_at: string | null; client_id: string | null; deliveries: Delivery[] };
type Page = { notifications: Notification[]; unread_count: number; next_cursor: string | null };

type Fixture = OAuthFixture & {
  database: TestDatabase;
  cookie: string;
  otherSub: string;
  otherCookie: string;
  call(method: 'GET' | 'POST' | 'PUT', url: string, options?: { body?: unknown; headers?: Record<string, string>; cookie?: string }): Promise<LightMyRequestResponse>;
  notify(event?: NotificationEvent, options?: { sub?: string; clientId?: string; locale?: string }): Promise<string>;
  list(query?: string): Promise<Page>;
};

async function fixture(database: TestDatabase): Promise<Fixture> {
  const f = await oauthFixture(database);
  const { db, clock, keys } = f.deps;
  const other = await createAccount(db, clock, { email: 'bob@example.com', password: 'another long password' });
  const cookie = `signet_session=${(await startSession(db, keys.tokenHash, clock, { sub: f.sub, origin: ORIGIN })).id}`;
  const otherCookie = `signet_session=${(await startSession(db, keys.tokenHash, clock, { sub: other.sub, origin: ORIGIN })).id}`;
  const call: Fixture['call'] = (method, url, options = {}) =>
    f.app.inject({
      method,
      url,
      headers: { host: HOST, origin: ORIGIN, cookie: options.cookie ?? cookie, ...(options.body === undefined ? {} : { 'content-type': 'application/json' }), ...options.headers },
      ...(options.body === undefined ? {} : { payload: JSON.stringify(options.body) }),
    });
  return {
    ...f,
    database,
    cookie,
    otherSub: other.sub,
    otherCookie,
    call,
    notify(event = { category: 'translation', outcome: 'finished', fileName: 'report.pdf' }, options = {}) {
      return db.transaction().execute((trx) =>
        recordNotification(trx, database.dialect, clock(), { sub: options.sub ?? f.sub, locale: options.locale ?? 'en', event, link: '/tasks', ...(options.clientId ? { clientId: options.clientId } : {}) }),
      );
    },
    async list(query = '') {
      const res = await call('GET', `/api/v1/notifications${query}`);
      assert.equal(res.statusCode, 200, res.body);
      return res.json<Page>();
    },
  };
}

const authorized = (applicationName: string): NotificationEvent => ({ category: 'security', outcome: 'authorized', applicationName });

forEachDatabase('notification API', (open) => {
  test('GET /api/v1/notifications → {"notifications":[{id,category,title,body,link,created_at,read_at,client_id,deliveries:[{channel,status,reason}]}],"unread_count","next_cursor"} newest first', async () => {
    const f = await fixture(await open());
    await f.notify({ category: 'docparse', outcome: 'finished', fileName: 'old.pdf' });
    f.clock.advance(1000);
    await f.notify({ category: 'translation', outcome: 'failed', fileName: 'new.pdf', error: 'The engine timed out.' });
    const res = await f.call('GET', '/api/v1/notifications');
    assert.equal(res.headers['cache-control'], 'no-store');
    const page = res.json<Page>();
    assert.deepEqual(Object.keys(page).sort(), ['next_cursor', 'notifications', 'unread_count']);
    assert.equal(page.unread_count, 2);
    assert.equal(page.next_cursor, null);
    assert.deepEqual(
      page.notifications.map((n) => n.title),
      ['Translation of new.pdf failed', 'Document parsing of old.pdf finished'],
    );
    const [newest] = page.notifications;
    assert.deepEqual(Object.keys(newest!).sort(), ['body', 'category', 'client_id', 'created_at', 'deliveries', 'id', 'link', 'read_at', 'title']);
    assert.equal(newest!.category, 'translation');
    assert.equal(newest!.body, 'The engine timed out.');
    assert.equal(newest!.link, '/tasks');
    assert.equal(newest!.read_at, null);
    assert.equal(newest!.client_id, null);
    assert.equal(newest!.created_at, new Date(f.clock()).toISOString());
    // spec: in-app on, "e-mail, off by default", push "not available".
    assert.deepEqual(newest!.deliveries, [
      { channel: 'in_app', status: 'sent', reason: null },
      { channel: 'email', status: 'suppressed', reason: 'turned off in preferences' },
      { channel: 'browser_push', status: 'suppressed', reason: 'not available' },
      { channel: 'mobile_push', status: 'suppressed', reason: 'not available' },
    ]);
  });

  test('the list pages newest first by cursor (limit), and ?unread=true lists only unread ones', async () => {
    const f = await fixture(await open());
    const ids: string[] = [];
    for (const name of ['a', 'b', 'c', 'd', 'e']) ids.push(await f.notify({ category: 'docparse', outcome: 'finished', fileName: `${name}.pdf` }));
    const first = await f.list('?limit=2');
    assert.deepEqual(first.notifications.map((n) => n.id), [ids[4], ids[3]]);
    assert.ok(first.next_cursor);
    const second = await f.list(`?limit=2&cursor=${encodeURIComponent(first.next_cursor!)}`);
    assert.deepEqual(second.notifications.map((n) => n.id), [ids[2], ids[1]]);
    const third = await f.list(`?limit=2&cursor=${encodeURIComponent(second.next_cursor!)}`);
    assert.deepEqual(third.notifications.map((n) => n.id), [ids[0]]);
    assert.equal(third.next_cursor, null);

    assert.equal((await f.call('POST', `/api/v1/notifications/${ids[4]}/read`)).statusCode, 204);
    const unread = await f.list('?unread=true');
    assert.deepEqual(unread.notifications.map((n) => n.id), [ids[3], ids[2], ids[1], ids[0]]);
    assert.equal(unread.unread_count, 4);
    const one = await f.list('?unread=true&limit=1');
    assert.equal(one.notifications.length, 1);
    assert.equal(one.unread_count, 4, 'the unread count is of all unread notifications, not of the page');

    const bad = await f.call('GET', '/api/v1/notifications?cursor=not-a-cursor');
    assert.equal(bad.statusCode, 400);
    assert.deepEqual(Object.keys(bad.json()).sort(), ['error', 'message']);
  });

  test('POST /api/v1/notifications/:id/read → 204 and read_at is set; again → 204 with the first time kept; another person\'s notification → 404', async () => {
    const f = await fixture(await open());
    const mine = await f.notify();
    const theirs = await f.notify(undefined, { sub: f.otherSub });
    const res = await f.call('POST', `/api/v1/notifications/${mine}/read`);
    assert.equal(res.statusCode, 204);
    assert.equal(res.body, '');
    const readAt = (await f.list()).notifications[0]!.read_at;
    assert.equal(readAt, new Date(f.clock()).toISOString());
    f.clock.advance(5000);
    assert.equal((await f.call('POST', `/api/v1/notifications/${mine}/read`)).statusCode, 204);
    assert.equal((await f.list()).notifications[0]!.read_at, readAt);

    for (const id of [theirs, '00000000-0000-4000-8000-000000000000', 'not-an-id']) {
      const refused = await f.call('POST', `/api/v1/notifications/${id}/read`);
      assert.equal(refused.statusCode, 404, id);
      assert.equal(refused.json<{ error: string }>().error, 'not_found');
    }
    const other = await f.call('GET', '/api/v1/notifications', { cookie: f.otherCookie });
    assert.equal(other.json<Page>().notifications[0]!.read_at, null, "the other person's notification stays unread");
  });

  test('POST /api/v1/notifications/read-all → 204; every unread notification of the caller is read, nobody else\'s', async () => {
    const f = await fixture(await open());
    await f.notify();
    await f.notify();
    await f.notify(undefined, { sub: f.otherSub });
    const res = await f.call('POST', '/api/v1/notifications/read-all');
    assert.equal(res.statusCode, 204);
    const page = await f.list();
    assert.equal(page.unread_count, 0);
    assert.ok(page.notifications.every((n) => n.read_at !== null));
    assert.equal((await f.call('GET', '/api/v1/notifications', { cookie: f.otherCookie })).json<Page>().unread_count, 1);
  });

  test('"state-changing calls must carry an Origin equal to the serving host\'s base URL, else 403"; no session → 401; an access token → 401', async () => {
    const f = await fixture(await open());
    const id = await f.notify();
    for (const [method, url, body] of [
      ['POST', `/api/v1/notifications/${id}/read`, undefined],
      ['POST', '/api/v1/notifications/read-all', undefined],
      ['PUT', '/api/v1/notification-preferences', { categories: { translation: { email: true } } }],
    ] as const) {
      for (const origin of [undefined, 'https://evil.example', TEST_BASE_URL.replace('http:', 'https:')]) {
        const headers: Record<string, string> = origin === undefined ? { origin: '' } : { origin };
        const res = await f.call(method, url, { body, headers });
        assert.equal(res.statusCode, 403, `${method} ${url} with Origin ${origin}`);
        assert.deepEqual(Object.keys(res.json()).sort(), ['error', 'message']);
      }
      assert.equal((await f.call(method, url, { body, cookie: '' })).statusCode, 401);
    }
    assert.equal((await f.list()).unread_count, 1, 'nothing was marked read');
    const { access_token } = await f.exchange();
    const bearer = await f.app.inject({ method: 'GET', url: '/api/v1/notifications', headers: { host: HOST, authorization: `Bearer ${access_token}` } });
    assert.equal(bearer.statusCode, 401);
  });

  test('preferences: GET /api/v1/notification-preferences → every category × channel; defaults in-app on, e-mail off, push off; no muted applications', async () => {
    const f = await fixture(await open());
    const res = await f.call('GET', '/api/v1/notification-preferences');
    assert.equal(res.statusCode, 200);
    const defaults = { in_app: true, email: false, browser_push: false, mobile_push: false };
    assert.deepEqual(res.json(), { categories: { translation: defaults, docparse: defaults, security: defaults }, muted_clients: [] });
  });

  test('preferences: PUT changes what it names and returns the whole; unknown category or channel, a non-boolean, or enabling browser_push / mobile_push → 400 and nothing changes', async () => {
    const f = await fixture(await open());
    const ok = await f.call('PUT', '/api/v1/notification-preferences', { body: { categories: { translation: { email: true }, security: { in_app: false, browser_push: false } } } });
    assert.equal(ok.statusCode, 200, ok.body);
    const changed = ok.json<{ categories: Record<string, Record<string, boolean>> }>();
    assert.equal(changed.categories.translation!.email, true);
    assert.equal(changed.categories.security!.in_app, false);
    assert.equal(changed.categories.docparse!.email, false);

    for (const body of [
      { categories: { billing: { email: true } } },
      { categories: { translation: { sms: true } } },
      { categories: { translation: { email: 'yes' } } },
      { categories: { translation: { browser_push: true } } },
      { categories: { docparse: { in_app: false, mobile_push: true } } },
      { categories: [] },
      { muted_clients: ['not-an-authorized-client'] },
      { colour: 'blue' },
      [],
    ]) {
      const res = await f.call('PUT', '/api/v1/notification-preferences', { body });
      assert.equal(res.statusCode, 400, JSON.stringify(body));
      const error = res.json<{ error: string; message: string }>();
      assert.deepEqual(Object.keys(error).sort(), ['error', 'message']);
      assert.ok(error.message.length > 10);
    }
    assert.deepEqual((await f.call('GET', '/api/v1/notification-preferences')).json(), ok.json(), 'refused changes wrote nothing');
    const notJson = await f.call('PUT', '/api/v1/notification-preferences', { body: undefined, headers: { 'content-type': 'application/json' } });
    assert.equal(notJson.statusCode, 400);
  });

  test('"mute an authorized third-party application without revoking its access": userinfo still 200 for its token, and its next `security` notification has every delivery suppressed', async () => {
    const f = await fixture(await open());
    const { db, clock } = f.deps;
    const { clientId } = f.confidential.client;
    await recordConsent(db, clock, f.sub, clientId, ['openid', 'profile'], ['openid', 'profile'], { dialect: f.database.dialect, locale: 'en' });
    const tokens = await f.exchange('openid profile');
    const muted = await f.call('PUT', '/api/v1/notification-preferences', { body: { muted_clients: [clientId] } });
    assert.equal(muted.statusCode, 200, muted.body);
    assert.deepEqual(muted.json<{ muted_clients: string[] }>().muted_clients, [clientId]);

    const userinfo = await f.userinfo(`Bearer ${tokens.access_token}`);
    assert.equal(userinfo.statusCode, 200, 'muting keeps the access');

    const before = (await f.list()).unread_count;
    const id = await f.notify(authorized('Confidential'), { clientId });
    const notification = (await f.list()).notifications.find((n) => n.id === id)!;
    assert.equal(notification.client_id, clientId);
    assert.deepEqual(
      notification.deliveries.map((d) => [d.channel, d.status]),
      [
        ['in_app', 'suppressed'],
        ['email', 'suppressed'],
        ['browser_push', 'suppressed'],
        ['mobile_push', 'suppressed'],
      ],
    );
    assert.equal(notification.deliveries[0]!.reason, 'the application is muted');
    assert.equal((await f.list()).unread_count, before, 'a muted application rings no badge');
    // Another application is not muted.
    const other = await f.notify(authorized('Other'), { clientId: f.other.client.clientId });
    assert.equal((await f.list()).notifications.find((n) => n.id === other)!.deliveries[0]!.status, 'sent');
  });

  test('withdrawing an application clears its mute: authorized again, it is not muted', async () => {
    const f = await fixture(await open());
    const { db, clock } = f.deps;
    const { clientId } = f.confidential.client;
    const notice = { dialect: f.database.dialect, locale: 'en' };
    await recordConsent(db, clock, f.sub, clientId, ['openid'], ['openid'], notice);
    assert.equal((await f.call('PUT', '/api/v1/notification-preferences', { body: { muted_clients: [clientId] } })).statusCode, 200);
    await withdrawApplication(db, clock, f.sub, clientId);
    assert.deepEqual((await f.call('GET', '/api/v1/notification-preferences')).json<{ muted_clients: string[] }>().muted_clients, []);
    await recordConsent(db, clock, f.sub, clientId, ['openid'], ['openid'], notice);
    assert.deepEqual((await f.call('GET', '/api/v1/notification-preferences')).json<{ muted_clients: string[] }>().muted_clients, []);
    const latest = (await f.list()).notifications[0]!;
    assert.equal(latest.client_id, clientId);
    assert.equal(latest.deliveries[0]!.status, 'sent', 'notifications about it are delivered again');
  });

  test('security: "an application authorized for the first time" records one `security` notification from that application, in the page\'s language; later consents to it record none', async () => {
    const f = await fixture(await open());
    const { db, clock } = f.deps;
    const { clientId } = f.confidential.client;
    const notice = { dialect: f.database.dialect, locale: 'zh-CN' };
    await recordConsent(db, clock, f.sub, clientId, ['openid'], ['openid'], notice);
    await recordConsent(db, clock, f.sub, clientId, ['openid', 'email'], ['openid', 'email'], notice);
    const page = await f.list();
    assert.equal(page.notifications.length, 1);
    const [n] = page.notifications;
    assert.equal(n!.category, 'security');
    assert.equal(n!.client_id, clientId);
    assert.equal(n!.title, 'Confidential 现在可以让你登录');
    assert.equal(n!.link, '/account');
    assert.equal(page.unread_count, 1);
  });
});
