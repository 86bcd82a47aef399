// The admin console on the admin listener (issue 27), through app.inject: who gets in (operators with
// a second factor; others a 403 page with nothing listed; an operator without one is led to set it up),
// its own session (idle timeout, unusable on the public listener and the reverse), CSRF, framing,
// step-up before destructive changes, every change audited with the operator's sub as actor.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { totpCode } from '../../src/accounts/factors/totp.ts';
import { startSession } from '../../src/accounts/sessions.ts';
import { recordFailedAttempt } from '../../src/accounts/throttle.ts';
import { MINUTE } from '../../src/config/clock.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { adminFixture, type AdminFixture } from './admin-fixture.ts';
import { consoleBrowser, createOperator, signInToConsole } from './console-fixture.ts';
import { csvCell } from '../../src/admin/console/audit.routes.ts';

const NAV = ['Overview', 'Applications', 'People', 'Audit', 'Tasks', 'Admin keys', 'Import'];

async function operatorBrowser(f: AdminFixture) {
  const operator = await createOperator(f);
  const browser = consoleBrowser(f);
  const res = await signInToConsole(f, browser, 'operator@example.com', operator.secret);
  assert.equal(res.statusCode, 303, res.body);
  assert.equal(res.headers.location, '/admin');
  return { browser, operator };
}

forEachDatabase('admin console', (open) => {
  test('an operator signs in with the password and a TOTP code and sees the seven navigation links; the page refuses framing and loads nothing from elsewhere', async () => {
    const f = await adminFixture(await open());
    const signin = await consoleBrowser(f).get('/admin');
    assert.equal(signin.statusCode, 303);
    assert.equal(signin.headers.location, '/admin/signin');
    const { browser } = await operatorBrowser(f);
    const cookie = (await f.adminApp.inject({ method: 'GET', url: '/admin/signin' })).cookies;
    assert.ok(cookie.every((c) => c.name !== 'signet_session'));
    const page = await browser.get('/admin');
    assert.equal(page.statusCode, 200, page.body);
    for (const link of NAV) assert.match(page.body, new RegExp(`>${link}</a>`), link);
    assert.equal(page.headers['x-frame-options'], 'DENY');
    assert.match(String(page.headers['content-security-policy']), /frame-ancestors 'none'/);
    assert.match(String(page.headers['content-security-policy']), /script-src 'self'/);
    assert.ok(!/(src|href)="https?:/.test(page.body), 'no external scripts, fonts or styles');
    const events = (await f.admin('GET', '/admin/v1/audit-events?type=signin.succeeded')).json<{ events: Array<{ detail: Record<string, unknown> }> }>().events;
    assert.deepEqual(events[0]!.detail, { stage: 'console', factor: 'totp' });
    await f.adminApp.close();
    await f.app.close();
  });

  test('"anyone else signed in gets a 403 page" — nothing listed, no navigation', async () => {
    const f = await adminFixture(await open());
    await createOperator(f, 'person@example.com', { role: false, totp: false });
    const browser = consoleBrowser(f);
    const res = await signInToConsole(f, browser, 'person@example.com', undefined);
    assert.equal(res.headers.location, '/admin');
    for (const url of ['/admin', '/admin/people', `/admin/people/${f.sub}`, '/admin/applications', '/admin/audit', '/admin/tasks', '/admin/keys']) {
      const page = await browser.get(url);
      assert.equal(page.statusCode, 403, url);
      assert.ok(!page.body.includes('ada@example.com') && !page.body.includes('Confidential') && !page.body.includes('>People</a>'), `${url} lists nothing`);
    }
    const refused = await browser.post(`/admin/people/${f.sub}/end-sessions`, {});
    assert.equal(refused.statusCode, 403);
    await f.adminApp.close();
    await f.app.close();
  });

  test('"an operator without a second factor is led to set one up first" — the set-up page, then recovery codes, then the console', async () => {
    const f = await adminFixture(await open());
    const { sub } = await createOperator(f, 'new-operator@example.com', { totp: false });
    const browser = consoleBrowser(f);
    const res = await signInToConsole(f, browser, 'new-operator@example.com', undefined);
    assert.equal(res.headers.location, '/admin/signin/two-step/setup');
    assert.equal((await browser.get('/admin')).headers.location, '/admin/signin', 'no console session yet');
    const setup = await browser.get('/admin/signin/two-step/setup');
    const key = /data-setup-key="([A-Z2-7]+)"/.exec(setup.body)?.[1];
    assert.ok(key);
    const done = await browser.post('/admin/signin/two-step/setup', { code: totpCode(key, f.clock()) });
    assert.equal(done.statusCode, 200, done.body);
    assert.equal((done.body.match(/data-recovery-code=/g) ?? []).length, 10);
    assert.equal((await browser.get('/admin')).statusCode, 200);
    const notes = await f.deps.db.selectFrom('notifications').select('category').where('sub', '=', sub).execute();
    assert.ok(notes.some((n) => n.category === 'security'));
    await f.adminApp.close();
    await f.app.close();
  });

  test('"requests without the CSRF token are refused": a form POST without _csrf is 403 and changes nothing', async () => {
    const f = await adminFixture(await open());
    const { browser } = await operatorBrowser(f);
    await startSession(f.deps.db, f.deps.keys.tokenHash, f.clock, { sub: f.sub, origin: 'http://signet.test' });
    const refused = await browser.post(`/admin/people/${f.sub}/end-sessions`, {}, { csrf: false });
    assert.equal(refused.statusCode, 403);
    assert.equal((await f.deps.db.selectFrom('sessions').select('sub').where('sub', '=', f.sub).execute()).length, 1);
    await browser.get(`/admin/people/${f.sub}`);
    const ended = await browser.post(`/admin/people/${f.sub}/end-sessions`, {});
    assert.equal(ended.statusCode, 303);
    assert.equal((await f.deps.db.selectFrom('sessions').select('sub').where('sub', '=', f.sub).execute()).length, 0);
    await f.adminApp.close();
    await f.app.close();
  });

  test('"short idle timeout": 15 minutes without a request end the console session', async () => {
    const f = await adminFixture(await open());
    const { browser } = await operatorBrowser(f);
    f.clock.advance(14 * MINUTE);
    assert.equal((await browser.get('/admin')).statusCode, 200, 'a request within 15 minutes keeps it');
    f.clock.advance(14 * MINUTE);
    assert.equal((await browser.get('/admin/people')).statusCode, 200);
    f.clock.advance(15 * MINUTE);
    const after = await browser.get('/admin');
    assert.equal(after.statusCode, 303);
    assert.equal(after.headers.location, '/admin/signin?idle=1');
    await f.adminApp.close();
    await f.app.close();
  });

  test('"a console session cannot be used on the public listener and vice versa"', async () => {
    const f = await adminFixture(await open());
    const { browser } = await operatorBrowser(f);
    const consoleId = browser.cookies.get('signet_console');
    assert.ok(consoleId);
    const publicPage = await f.app.inject({ method: 'GET', url: '/account', headers: { host: 'signet.test', accept: 'text/html', cookie: `signet_session=${consoleId}; signet_console=${consoleId}` } });
    assert.ok([302, 303].includes(publicPage.statusCode), 'the public listener knows no console session');
    assert.match(String(publicPage.headers.location), /^\/signin/);
    const { id } = await startSession(f.deps.db, f.deps.keys.tokenHash, f.clock, { sub: (await f.deps.db.selectFrom('users').select('sub').where('email', '=', 'operator@example.com').executeTakeFirstOrThrow()).sub, origin: 'http://signet.test' });
    const consolePage = await f.adminApp.inject({ method: 'GET', url: '/admin', headers: { cookie: `signet_session=${id}; signet_console=${id}` } });
    assert.equal(consolePage.statusCode, 303, 'the console knows no public session');
    assert.match(String(consolePage.headers.location), /^\/admin\/signin/);
    await f.adminApp.close();
    await f.app.close();
  });

  test('"a destructive action asks for the second factor again when the last check is older than a few minutes"; the reset is audited with the operator\'s sub and notified to the person', async () => {
    const f = await adminFixture(await open());
    const { browser, operator } = await operatorBrowser(f);
    const victim = await createOperator(f, 'lost-phone@example.com', { role: false });
    f.clock.advance(11 * MINUTE);
    await browser.get(`/admin/people/${victim.sub}`);
    const asked = await browser.post(`/admin/people/${victim.sub}/reset-factors`, {});
    assert.equal(asked.statusCode, 303);
    assert.equal(asked.headers.location, `/admin/confirm?return=${encodeURIComponent(`/admin/people/${victim.sub}`)}`);
    assert.equal((await f.deps.db.selectFrom('second_factors').select('id').where('sub', '=', victim.sub).execute()).length, 1, 'nothing reset yet');
    await browser.get(String(asked.headers.location));
    f.clock.advance(30_000);
    const confirmed = await browser.post('/admin/confirm', { code: totpCode(operator.secret!, f.clock()), return: `/admin/people/${victim.sub}` });
    assert.equal(confirmed.headers.location, `/admin/people/${victim.sub}?notice=confirmed`);
    await browser.get(String(confirmed.headers.location));
    const reset = await browser.post(`/admin/people/${victim.sub}/reset-factors`, {});
    assert.equal(reset.headers.location, `/admin/people/${victim.sub}?notice=factors_reset&n=1`);
    assert.equal((await f.deps.db.selectFrom('second_factors').select('id').where('sub', '=', victim.sub).execute()).length, 0);
    const events = (await f.admin('GET', `/admin/v1/audit-events?type=account.factors_reset&sub=${victim.sub}`)).json<{ events: Array<{ actor: string; outcome: string }> }>().events;
    assert.deepEqual(events.map((e) => [e.actor, e.outcome]), [[`operator:${operator.sub}`, 'success']]);
    const notes = await f.deps.db.selectFrom('notifications').select('title').where('sub', '=', victim.sub).execute();
    assert.ok(notes.some((n) => n.title === 'Two-step verification was reset'));
    await f.adminApp.close();
    await f.app.close();
  });

  test('a locked-out person shows their lock-out, and Unlock lifts it (account.unlocked by the operator)', async () => {
    const f = await adminFixture(await open());
    const { browser, operator } = await operatorBrowser(f);
    for (let i = 0; i < 10; i++) await recordFailedAttempt(f.deps.db, f.clock, { account: f.sub, address: '203.0.113.9' });
    const list = await browser.get('/admin/people?locked=1');
    assert.match(list.body, /ada@example\.com/);
    const page = await browser.get(`/admin/people/${f.sub}`);
    assert.match(page.body, /203\.0\.113\.9/);
    const unlocked = await browser.post(`/admin/people/${f.sub}/unlock`, {});
    assert.equal(unlocked.headers.location, `/admin/people/${f.sub}?notice=unlocked`);
    assert.doesNotMatch((await browser.get('/admin/people?locked=1')).body, /ada@example\.com/);
    const events = (await f.admin('GET', `/admin/v1/audit-events?type=account.unlocked`)).json<{ events: Array<{ actor: string; sub: string }> }>().events;
    assert.deepEqual(events.map((e) => [e.actor, e.sub]), [[`operator:${operator.sub}`, f.sub]]);
    await f.adminApp.close();
    await f.app.close();
  });

  test('New application shows its secret once inside data-client-secret; the secret works at the token endpoint; client.created by the operator', async () => {
    const f = await adminFixture(await open());
    const { browser, operator } = await operatorBrowser(f);
    await browser.get('/admin/applications');
    const created = await browser.post('/admin/applications', { name: 'Console App', redirect_uris: 'https://console-app.example/cb\n', scopes: 'openid profile', allowed_origins: '' });
    assert.equal(created.statusCode, 201, created.body);
    const secret = /data-client-secret="([^"]+)"/.exec(created.body)?.[1];
    const clientId = /data-client-id="([^"]+)"/.exec(created.body)?.[1];
    assert.ok(secret && clientId);
    assert.ok(!(await browser.get(`/admin/applications/${clientId}`)).body.includes(secret), 'shown once');
    const code = await f.mintCode({ clientId, redirectUri: 'https://console-app.example/cb', scope: 'openid' });
    const token = await f.token({ grant_type: 'authorization_code', code, redirect_uri: 'https://console-app.example/cb', client_id: clientId, client_secret: secret });
    assert.equal(token.statusCode, 200, token.body);
    const events = (await f.admin('GET', `/admin/v1/audit-events?type=client.created`)).json<{ events: Array<{ actor: string; client_id: string }> }>().events;
    assert.deepEqual(events.map((e) => [e.actor, e.client_id]), [[`operator:${operator.sub}`, clientId]]);
    await f.adminApp.close();
    await f.app.close();
  });

  test('Audit: filters by type family, person and time; Export gives the filtered list as JSON Lines and as CSV', async () => {
    const f = await adminFixture(await open());
    const { browser } = await operatorBrowser(f);
    await browser.get(`/admin/people/${f.sub}`);
    await browser.post(`/admin/people/${f.sub}/unlock`, {});
    await browser.post(`/admin/people/${f.sub}/end-sessions`, {});
    const list = await browser.get(`/admin/audit?type=account.*&sub=${f.sub}`);
    assert.equal(list.statusCode, 200);
    assert.match(list.body, /account\.unlocked/);
    assert.match(list.body, /account\.sessions_ended/);
    assert.doesNotMatch(list.body, /signin\.succeeded/);
    const jsonl = await browser.get(`/admin/audit/export?type=account.*&sub=${f.sub}&format=jsonl`);
    const lines = jsonl.body.trim().split('\n').map((l) => JSON.parse(l) as { type: string });
    assert.deepEqual(lines.map((l) => l.type), ['account.sessions_ended', 'account.unlocked']);
    const csv = await browser.get(`/admin/audit/export?type=account.*&sub=${f.sub}&format=csv`);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    assert.equal(csv.body.trim().split('\n').length, 3);
    const tomorrow = new Date(f.clock() + 24 * 3600_000).toISOString().slice(0, 10);
    const none = await browser.get(`/admin/audit/export?type=account.*&from=${tomorrow}&format=jsonl`);
    assert.equal(none.body, '');
    assert.equal((await browser.get('/admin/audit?from=yesterday')).statusCode, 400);
    await f.adminApp.close();
    await f.app.close();
  });

  test('roles in the admin API: PUT and DELETE /admin/v1/accounts/:sub/roles/operator, audited; an unknown role is 400', async () => {
    const f = await adminFixture(await open());
    assert.deepEqual((await f.admin('PUT', `/admin/v1/accounts/${f.sub}/roles/operator`)).json(), { roles: ['operator'] });
    assert.deepEqual((await f.admin('GET', `/admin/v1/accounts/${f.sub}/roles`)).json(), { roles: ['operator'] });
    assert.deepEqual((await f.admin('DELETE', `/admin/v1/accounts/${f.sub}/roles/operator`)).json(), { roles: [] });
    assert.equal((await f.admin('PUT', `/admin/v1/accounts/${f.sub}/roles/root`)).statusCode, 400);
    assert.equal((await f.admin('PUT', '/admin/v1/accounts/no-such-sub/roles/operator')).statusCode, 404);
    const events = (await f.admin('GET', `/admin/v1/audit-events?type=account.*`)).json<{ events: Array<{ type: string; actor: string; outcome: string; detail: unknown }> }>().events;
    assert.deepEqual(events.filter((e) => e.type.startsWith('account.role') && e.outcome === 'success').map((e) => [e.type, e.actor, e.detail]), [
      ['account.role_removed', `admin_key:${f.keyId}`, { role: 'operator' }],
      ['account.role_added', `admin_key:${f.keyId}`, { role: 'operator' }],
    ]);
    await f.adminApp.close();
    await f.app.close();
  });
});

test('CSV export: a cell a spreadsheet would run as a formula is quoted with a leading apostrophe', () => {
  assert.equal(csvCell('=HYPERLINK("x")'), `"'=HYPERLINK(""x"")"`);
  assert.equal(csvCell('plain'), 'plain');
  assert.equal(csvCell(null), '');
});
