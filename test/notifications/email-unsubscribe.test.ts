// One-click unsubscribe (RFC 8058) through the real app: the URL from a real e-mail's List-Unsubscribe
// header, POSTed with no cookie, turns that category's e-mail off; GET only shows a button; a forged or
// altered token is 400 and changes nothing.
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts.ts';
import { deriveKeys } from '../../src/config/keys.ts';
import { DEFAULT_EMAIL_POLICY, deliverNextEmail } from '../../src/notifications/email/deliver.ts';
import { createSmtpMailer } from '../../src/notifications/email/send.ts';
import { createUnsubscribeToken, verifyUnsubscribeToken } from '../../src/notifications/email/unsubscribe-token.ts';
import { recordNotification } from '../../src/notifications/notifications.ts';
import { getPreferences, updatePreferences } from '../../src/notifications/preferences.ts';
import { createLogger } from '../../src/web/logging.ts';
import { testApp, TEST_BASE_URL, type TestApp } from '../helpers/app.ts';
import { forEachDatabase, type TestDatabase } from '../helpers/databases.ts';
import { headerOf, parseMail, startSmtp, type TestSmtp } from '../helpers/smtp.ts';

const silent = createLogger('silent', new Writable({ write: (_c, _e, done) => done() }));
const HOST = new URL(TEST_BASE_URL).host;

type Setup = { signet: TestApp; sub: string };

/** A person who turned e-mail on for translation and docparse, in the real app on a fresh database. */
async function setup(database: TestDatabase): Promise<Setup> {
  const signet = await testApp(database);
  const person = await createAccount(database.db, signet.clock, { email: 'reader@example.com', password: 'correct horse battery' });
  await updatePreferences(database.db, signet.clock, person.sub, { categories: { translation: { email: true }, docparse: { email: true } } });
  return { signet, sub: person.sub };
}

/** Records a finished translation, delivers its e-mail, and returns the List-Unsubscribe URL the mail carried. */
async function mailedUnsubscribeUrl(database: TestDatabase, smtp: TestSmtp, { signet, sub }: Setup): Promise<URL> {
  await database.db.transaction().execute((trx) =>
    recordNotification(trx, database.dialect, signet.clock(), { sub, locale: 'en', event: { category: 'translation', outcome: 'finished', fileName: 'a.pdf' }, link: '/tasks' }),
  );
  const deps = {
    db: database.db,
    dialect: database.dialect,
    clock: signet.clock,
    mailer: createSmtpMailer({ url: smtp.url, from: 'signet@signet.test' }),
    baseUrl: signet.deps.settings.baseUrl,
    unsubscribeKey: signet.deps.keys.unsubscribe,
    logger: silent,
  };
  assert.equal((await deliverNextEmail(deps, DEFAULT_EMAIL_POLICY, 'test-worker'))?.outcome, 'sent');
  const header = headerOf(await parseMail(smtp.received.at(-1)!), 'List-Unsubscribe') ?? '';
  return new URL(header.slice(1, -1));
}

function oneClick(signet: TestApp, pathAndQuery: string, body = 'List-Unsubscribe=One-Click', contentType = 'application/x-www-form-urlencoded') {
  return signet.app.inject({ method: 'POST', url: pathAndQuery, headers: { host: HOST, 'content-type': contentType }, payload: body });
}

async function emailChoices(database: TestDatabase, sub: string) {
  const { categories } = await getPreferences(database.db, sub);
  return { translation: categories.translation.email, docparse: categories.docparse.email, security: categories.security.email };
}

test('an unsubscribe token names its person and category and verifies only under its own key', () => {
  const keys = deriveKeys('unsubscribe-unit-secret-unsubscribe-unit-secret');
  const token = createUnsubscribeToken(keys.unsubscribe, { sub: 'a-sub', category: 'docparse' });
  assert.match(token, /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{43}$/);
  assert.deepEqual(verifyUnsubscribeToken(keys.unsubscribe, token), { sub: 'a-sub', category: 'docparse' });
  assert.equal(verifyUnsubscribeToken(keys.tokenHash, token), undefined, 'another subkey of the same secret does not verify it');
  assert.equal(verifyUnsubscribeToken(deriveKeys('another-root-secret-another-root-secret-0000').unsubscribe, token), undefined);
});

forEachDatabase('one-click unsubscribe', (open) => {
  let smtp: TestSmtp;
  before(async () => {
    smtp = await startSmtp();
  });
  after(() => smtp.close());

  test('RFC 8058: the List-Unsubscribe URL POSTed with List-Unsubscribe=One-Click and no cookie → 200, and that category\'s e-mail is off (only that one)', async () => {
    const database = await open();
    const setupDone = await setup(database);
    const url = await mailedUnsubscribeUrl(database, smtp, setupDone);
    assert.equal(url.pathname, '/unsubscribe');
    assert.deepEqual(await emailChoices(database, setupDone.sub), { translation: true, docparse: true, security: false });

    const response = await oneClick(setupDone.signet, url.pathname + url.search);
    assert.equal(response.statusCode, 200);
    assert.match(response.headers['content-type'] as string, /^text\/html/);
    assert.equal(response.headers['cache-control'], 'no-store');
    assert.equal(response.headers['set-cookie'], undefined);
    assert.match(response.body, /You will no longer get e-mail about translation notifications\./);
    assert.deepEqual(await emailChoices(database, setupDone.sub), { translation: false, docparse: true, security: false });

    const again = await oneClick(setupDone.signet, url.pathname + url.search);
    assert.equal(again.statusCode, 200, 'unsubscribing twice is fine');
  });

  test('the provider may post multipart/form-data (RFC 8058 §3.1): accepted the same way', async () => {
    const database = await open();
    const setupDone = await setup(database);
    const url = await mailedUnsubscribeUrl(database, smtp, setupDone);
    const boundary = 'signet-test-boundary';
    const body = `--${boundary}\r\nContent-Disposition: form-data; name="List-Unsubscribe"\r\n\r\nOne-Click\r\n--${boundary}--\r\n`;
    const response = await oneClick(setupDone.signet, url.pathname + url.search, body, `multipart/form-data; boundary=${boundary}`);
    assert.equal(response.statusCode, 200);
    assert.equal((await emailChoices(database, setupDone.sub)).translation, false);
  });

  test('after the one-click unsubscribe, an e-mail still pending for that category is suppressed, not sent', async () => {
    const database = await open();
    const setupDone = await setup(database);
    const { signet, sub } = setupDone;
    const url = await mailedUnsubscribeUrl(database, smtp, setupDone);
    const id = await database.db.transaction().execute((trx) =>
      recordNotification(trx, database.dialect, signet.clock(), { sub, locale: 'en', event: { category: 'translation', outcome: 'failed', fileName: 'b.pdf', error: 'x' } }),
    );
    assert.equal((await oneClick(signet, url.pathname + url.search)).statusCode, 200);
    const sentBefore = smtp.received.length;
    const deps = { db: database.db, dialect: database.dialect, clock: signet.clock, mailer: createSmtpMailer({ url: smtp.url, from: 'signet@signet.test' }), baseUrl: signet.deps.settings.baseUrl, unsubscribeKey: signet.deps.keys.unsubscribe, logger: silent };
    assert.deepEqual(await deliverNextEmail(deps, DEFAULT_EMAIL_POLICY, 'test-worker'), { notificationId: id, outcome: 'suppressed', reason: 'turned off in preferences' });
    assert.equal(smtp.received.length, sentBefore);
  });

  test('GET shows a button that POSTs to the same URL and changes nothing (mail scanners follow links); in the visitor\'s language', async () => {
    const database = await open();
    const setupDone = await setup(database);
    const url = await mailedUnsubscribeUrl(database, smtp, setupDone);
    const page = await setupDone.signet.app.inject({ method: 'GET', url: url.pathname + url.search, headers: { host: HOST } });
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /<html lang="en">/);
    const action = /<form class="card" method="post" action="([^"]+)">/.exec(page.body)?.[1];
    assert.equal(action?.replaceAll('&amp;', '&'), url.pathname + url.search);
    assert.match(page.body, /<input type="hidden" name="List-Unsubscribe" value="One-Click">/);
    assert.equal((await emailChoices(database, setupDone.sub)).translation, true);

    const chinese = await setupDone.signet.app.inject({ method: 'GET', url: url.pathname + url.search, headers: { host: HOST, 'accept-language': 'zh-CN,zh;q=0.9' } });
    assert.match(chinese.body, /<html lang="zh-CN">/);
    assert.match(chinese.body, /不再接收“翻译”通知的电子邮件？/);
  });

  test('a forged or altered token → 400 on POST and GET, and nothing changes', async () => {
    const database = await open();
    const setupDone = await setup(database);
    const { signet, sub } = setupDone;
    const genuine = (await mailedUnsubscribeUrl(database, smtp, setupDone)).searchParams.get('token')!;
    const [payload, signature] = genuine.split('.') as [string, string];
    const encode = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');
    const signWith = (key: Buffer, body: string) => `${body}.${createHmac('sha256', key).update(body).digest('base64url')}`;
    const flip = (s: string, at: number) => s.slice(0, at) + (s[at] === 'A' ? 'B' : 'A') + s.slice(at + 1);

    const bad: Record<string, string> = {
      'signed with another key': signWith(deriveKeys('forger-root-secret-forger-root-secret-000000').unsubscribe, payload),
      'signed with the token-hash subkey': signWith(signet.deps.keys.tokenHash, payload),
      'another category, old signature': `${encode({ sub, category: 'docparse', purpose: 'unsubscribe' })}.${signature}`,
      'another purpose, genuinely signed': signWith(signet.deps.keys.unsubscribe, encode({ sub, category: 'translation', purpose: 'password-reset' })),
      'signature altered in its last character': `${payload}.${flip(signature, signature.length - 1)}`,
      'payload altered': `${flip(payload, 5)}.${signature}`,
      'signature missing': payload,
      'an extra part': `${genuine}.x`,
      'garbage': 'not-a-token',
      'empty': '',
    };
    for (const [what, token] of Object.entries(bad)) {
      const query = `/unsubscribe?token=${encodeURIComponent(token)}`;
      const posted = await oneClick(signet, query);
      assert.equal(posted.statusCode, 400, `POST, ${what}`);
      assert.match(posted.body, /This unsubscribe link is not valid/);
      assert.equal((await signet.app.inject({ method: 'GET', url: query, headers: { host: HOST } })).statusCode, 400, `GET, ${what}`);
    }
    assert.equal((await oneClick(signet, '/unsubscribe')).statusCode, 400, 'no token at all');
    assert.deepEqual(await emailChoices(database, sub), { translation: true, docparse: true, security: false });
    assert.equal((await oneClick(signet, `/unsubscribe?token=${encodeURIComponent(genuine)}`)).statusCode, 200, 'the genuine token still works');
  });
});
