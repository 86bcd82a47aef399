// E-mail delivery by `signet worker`, against a real SMTP server on loopback and real databases: pending
// without a worker, sent once it runs, in the owner's language with a one-click unsubscribe; retried
// with back-off while the server is down or answers 4xx, failed at once on a 5xx; suppressed without an
// address; several workers never send one delivery twice.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts.ts';
import { manualClock, MINUTE } from '../../src/config/clock.ts';
import { deriveKeys } from '../../src/config/keys.ts';
import { parseSettings } from '../../src/config/settings.ts';
import { claimDueDelivery } from '../../src/notifications/deliveries.store.ts';
import { DEFAULT_EMAIL_POLICY, deliverNextEmail, type EmailDeliveryDeps } from '../../src/notifications/email/deliver.ts';
import { createSmtpMailer } from '../../src/notifications/email/send.ts';
import { verifyUnsubscribeToken } from '../../src/notifications/email/unsubscribe-token.ts';
import type { NotificationEvent } from '../../src/notifications/messages.ts';
import { recordNotification } from '../../src/notifications/notifications.ts';
import { updatePreferences } from '../../src/notifications/preferences.ts';
import { createLogger } from '../../src/web/logging.ts';
import { startEmailRunner } from '../../src/worker/email-runner.ts';
import { startWorker } from '../../src/worker/worker.ts';
import { forEachDatabase, postgresDatabase, type TestDatabase } from '../helpers/databases.ts';
import { postgresUnavailableReason, skipUnlessAvailable } from '../helpers/services.ts';
import { headerOf, parseMail, PERMANENT_ANSWER, startSmtp, TEMPORARY_ANSWER, type TestSmtp } from '../helpers/smtp.ts';

const BASE_URL = new URL('https://signet.test');
const KEYS = deriveKeys('email-test-root-secret-email-test-root-secret');
const FROM = 'Signet <signet@signet.test>';
const PASSWORD = 'correct horse battery';

function capturingLogger() {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString('utf8')) as Record<string, unknown>);
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}
const silent = createLogger('silent');

const finished = (fileName: string): NotificationEvent => ({ category: 'translation', outcome: 'finished', fileName });

async function optedIn(database: TestDatabase, clock: ReturnType<typeof manualClock>, who: { email?: string; phone?: string }): Promise<string> {
  const person = await createAccount(database.db, clock, { ...who, password: PASSWORD });
  await updatePreferences(database.db, clock, person.sub, { categories: { translation: { email: true } } });
  return person.sub;
}

async function notify(database: TestDatabase, clock: ReturnType<typeof manualClock>, sub: string, event: NotificationEvent, locale = 'en'): Promise<string> {
  return database.db.transaction().execute((trx) => recordNotification(trx, database.dialect, clock(), { sub, locale, event, link: '/tasks#task-42' }));
}

async function deliveryOf(database: TestDatabase, id: string, channel: 'email' | 'in_app') {
  return database.db.selectFrom('notification_deliveries').selectAll().where('notification_id', '=', id).where('channel', '=', channel).executeTakeFirstOrThrow();
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

function deliverer(database: TestDatabase, clock: ReturnType<typeof manualClock>, smtpUrl: string): EmailDeliveryDeps {
  return { db: database.db, dialect: database.dialect, clock, mailer: createSmtpMailer({ url: smtpUrl, from: FROM }), baseUrl: BASE_URL, unsubscribeKey: KEYS.unsubscribe, logger: silent };
}

forEachDatabase('e-mail delivery', (open) => {
  let smtp: TestSmtp;
  before(async () => {
    smtp = await startSmtp();
  });
  after(() => smtp.close());

  test('"Without that process, notifications stay in status pending": pending with no worker (and with a worker that has no SMTP, which warns once); sent once the runner runs; in-app sent from the start', async () => {
    const database = await open();
    const clock = manualClock();
    const sub = await optedIn(database, clock, { email: 'pending@example.com' });
    const id = await notify(database, clock, sub, finished('report.pdf'));
    assert.equal((await deliveryOf(database, id, 'email')).status, 'pending');
    assert.equal((await deliveryOf(database, id, 'in_app')).status, 'sent');

    const { logger, lines } = capturingLogger();
    const idle = startEmailRunner({ db: database.db, dialect: database.dialect, clock, logger, smtp: undefined, baseUrl: BASE_URL, unsubscribeKey: KEYS.unsubscribe }, { pollMs: 10 });
    await idle.stop();
    assert.deepEqual(
      lines.filter((l) => l.level === 40).map((l) => l.msg),
      ['SIGNET_SMTP_URL is not set: e-mail notifications stay pending until a worker with a mail server runs'],
    );
    assert.equal((await deliveryOf(database, id, 'email')).status, 'pending');

    const before = smtp.received.length;
    const runner = startEmailRunner({ db: database.db, dialect: database.dialect, clock, logger: silent, smtp: { url: smtp.url, from: FROM }, baseUrl: BASE_URL, unsubscribeKey: KEYS.unsubscribe }, { pollMs: 10 });
    try {
      const sent = await until('the e-mail to be sent', async () => {
        const row = await deliveryOf(database, id, 'email');
        return row.status === 'pending' ? undefined : row;
      });
      assert.equal(sent.status, 'sent', sent.reason ?? '');
      assert.equal(sent.attempts, 1);
      assert.equal(sent.lease_owner, null);
    } finally {
      await runner.stop();
    }
    assert.equal(smtp.received.length, before + 1);
    assert.deepEqual(smtp.received.at(-1)!.to, ['pending@example.com']);
  });

  test('the message has a plain-text and an HTML part in the owner\'s language (en), the link to {base_url}{link}, and RFC 8058 List-Unsubscribe and List-Unsubscribe-Post headers', async () => {
    const database = await open();
    const clock = manualClock();
    const sub = await optedIn(database, clock, { email: 'en@example.com' });
    await notify(database, clock, sub, finished('<b>Q3 & "plans"</b>.pdf'));
    const done = await deliverNextEmail(deliverer(database, clock, smtp.url), DEFAULT_EMAIL_POLICY, 'test-worker');
    assert.equal(done?.outcome, 'sent');

    const mail = await parseMail(smtp.received.at(-1)!);
    assert.equal(mail.subject, 'Translation of <b>Q3 & "plans"</b>.pdf finished');
    assert.match(mail.text ?? '', /^Translation of <b>Q3 & "plans"<\/b>\.pdf finished\n\nThe results are ready to download under Tasks\./);
    assert.match(mail.text ?? '', /Open in Signet: https:\/\/signet\.test\/tasks#task-42/);
    const html = mail.html ?? '';
    assert.match(html, /<html lang="en">/);
    assert.match(html, /<h1[^>]*>Translation of &lt;b&gt;Q3 &amp; &quot;plans&quot;&lt;\/b&gt;\.pdf finished<\/h1>/);
    assert.doesNotMatch(html, /<b>Q3/, 'the file name is escaped in the HTML part');
    assert.match(html, /<a href="https:\/\/signet\.test\/tasks#task-42"/);

    const listUnsubscribe = headerOf(mail, 'List-Unsubscribe') ?? '';
    const match = /^<(https:\/\/signet\.test\/unsubscribe\?token=([^>]+))>$/.exec(listUnsubscribe);
    assert.ok(match, `List-Unsubscribe is one https URL in angle brackets: ${listUnsubscribe}`);
    assert.equal(headerOf(mail, 'List-Unsubscribe-Post'), 'List-Unsubscribe=One-Click');
    assert.deepEqual(verifyUnsubscribeToken(KEYS.unsubscribe, decodeURIComponent(match[2]!)), { sub, category: 'translation' });
    assert.ok((mail.text ?? '').includes(`Stop these e-mails: ${match[1]}`), 'the text part carries the unsubscribe link too');
    assert.ok(html.includes(`href="${match[1]}"`), 'so does the HTML part');
  });

  test('a zh-CN owner gets subject, text and HTML in Simplified Chinese', async () => {
    const database = await open();
    const clock = manualClock();
    const sub = await optedIn(database, clock, { email: 'zh@example.com' });
    await notify(database, clock, sub, finished('报告.pdf'), 'zh-CN');
    assert.equal((await deliverNextEmail(deliverer(database, clock, smtp.url), DEFAULT_EMAIL_POLICY, 'test-worker'))?.outcome, 'sent');

    const mail = await parseMail(smtp.received.at(-1)!);
    assert.equal(mail.subject, '报告.pdf 的翻译已完成');
    assert.match(mail.text ?? '', /可以在“任务”中下载结果。/);
    assert.match(mail.text ?? '', /在 Signet 中查看: https:\/\/signet\.test\/tasks#task-42/);
    assert.match(mail.text ?? '', /你为“翻译”通知开启了电子邮件/);
    assert.match(mail.html ?? '', /<html lang="zh-CN">/);
    assert.match(mail.html ?? '', /不再接收此类邮件<\/a>/);
  });

  test('SMTP down: retried with back-off (1, 4, 16, 64 minutes), then failed with the reason (no credentials in it); the in-app delivery was sent from the start', async () => {
    const database = await open();
    const clock = manualClock();
    const sub = await optedIn(database, clock, { email: 'outage@example.com' });
    const id = await notify(database, clock, sub, finished('outage.pdf'));
    const port = new URL(smtp.url).port;
    const deps = deliverer(database, clock, `smtp://mailer:s3cret-pass@127.0.0.1:${port}`);
    const before = smtp.received.length;
    await smtp.down();
    try {
      for (const [attempt, wait] of [[1, 1], [2, 4], [3, 16], [4, 64]] as const) {
        const started = clock();
        assert.equal((await deliverNextEmail(deps, DEFAULT_EMAIL_POLICY, 'test-worker'))?.outcome, 'retry');
        const row = await deliveryOf(database, id, 'email');
        assert.equal(row.status, 'pending');
        assert.equal(row.attempts, attempt);
        assert.equal(row.next_attempt_at, started + wait * MINUTE);
        assert.match(row.reason ?? '', /could not be reached/);
        assert.equal((await deliveryOf(database, id, 'in_app')).status, 'sent');
        // Not due a moment before its time, due at it.
        clock.advance(wait * MINUTE - 1);
        assert.equal(await deliverNextEmail(deps, DEFAULT_EMAIL_POLICY, 'test-worker'), undefined);
        clock.advance(1);
      }
      const last = await deliverNextEmail(deps, DEFAULT_EMAIL_POLICY, 'test-worker');
      assert.equal(last?.outcome, 'failed');
      const row = await deliveryOf(database, id, 'email');
      assert.equal(row.status, 'failed');
      assert.equal(row.attempts, 5);
      assert.equal(row.next_attempt_at, null);
      assert.match(row.reason ?? '', /^The mail server could not be reached/);
      assert.doesNotMatch(row.reason ?? '', /s3cret|mailer/);
      assert.equal(await deliverNextEmail(deps, DEFAULT_EMAIL_POLICY, 'test-worker'), undefined, 'a failed delivery is never tried again');
    } finally {
      await smtp.up();
    }
    assert.equal(smtp.received.length, before);
  });

  test('a 4xx answer is retried after the back-off and sent when the server accepts', async () => {
    const database = await open();
    const clock = manualClock();
    const sub = await optedIn(database, clock, { email: 'busy@example.com' });
    const id = await notify(database, clock, sub, finished('busy.pdf'));
    const deps = deliverer(database, clock, smtp.url);
    smtp.answer('temporary');
    try {
      assert.equal((await deliverNextEmail(deps, DEFAULT_EMAIL_POLICY, 'test-worker'))?.outcome, 'retry');
    } finally {
      smtp.answer('accept');
    }
    const waiting = await deliveryOf(database, id, 'email');
    assert.equal(waiting.status, 'pending');
    assert.match(waiting.reason ?? '', new RegExp(`451 4\\.3\\.0 ${TEMPORARY_ANSWER}`));
    clock.advance(MINUTE);
    assert.equal((await deliverNextEmail(deps, DEFAULT_EMAIL_POLICY, 'test-worker'))?.outcome, 'sent');
    const sent = await deliveryOf(database, id, 'email');
    assert.equal(sent.status, 'sent');
    assert.equal(sent.attempts, 2);
  });

  test('a 5xx answer fails the delivery at once, with the server\'s answer as the reason', async () => {
    const database = await open();
    const clock = manualClock();
    const sub = await optedIn(database, clock, { email: 'gone@example.com' });
    const id = await notify(database, clock, sub, finished('gone.pdf'));
    smtp.answer('permanent');
    try {
      assert.equal((await deliverNextEmail(deliverer(database, clock, smtp.url), DEFAULT_EMAIL_POLICY, 'test-worker'))?.outcome, 'failed');
    } finally {
      smtp.answer('accept');
    }
    const row = await deliveryOf(database, id, 'email');
    assert.equal(row.status, 'failed');
    assert.equal(row.attempts, 1);
    assert.match(row.reason ?? '', new RegExp(`550 5\\.1\\.1 ${PERMANENT_ANSWER}`));
  });

  test('"An account without an e-mail address: suppressed" — an account with only a phone number, opted in, gets nothing', async () => {
    const database = await open();
    const clock = manualClock();
    const sub = await optedIn(database, clock, { phone: '+4915112345678' });
    const id = await notify(database, clock, sub, finished('phone.pdf'));
    const before = smtp.received.length;
    assert.equal((await deliverNextEmail(deliverer(database, clock, smtp.url), DEFAULT_EMAIL_POLICY, 'test-worker'))?.outcome, 'suppressed');
    const row = await deliveryOf(database, id, 'email');
    assert.equal(row.status, 'suppressed');
    assert.equal(row.reason, 'no e-mail address');
    assert.equal(smtp.received.length, before);
  });

  test('a delivery held under a live lease is not claimed by another worker; a dead worker\'s lease expires and the next one takes it; dying on every attempt ends in failed', async () => {
    const database = await open();
    const clock = manualClock();
    const sub = await optedIn(database, clock, { email: 'lease@example.com' });
    const id = await notify(database, clock, sub, finished('lease.pdf'));
    const deps = deliverer(database, clock, smtp.url);
    const policy = { ...DEFAULT_EMAIL_POLICY, maxAttempts: 2 };
    const claimedByDeadWorker = () => claimDueDelivery(database.db, database.dialect, { channel: 'email', owner: 'dead-worker', now: clock(), leaseMs: policy.leaseMs });
    const before = smtp.received.length;

    assert.equal((await claimedByDeadWorker())?.notification_id, id);
    assert.equal(await deliverNextEmail(deps, policy, 'live-worker'), undefined, 'held by the dead worker until its lease expires');
    clock.advance(policy.leaseMs + 1);
    assert.equal((await claimedByDeadWorker())?.attempts, 2, 'claimed again after the lease expired');
    clock.advance(policy.leaseMs + 1);
    const last = await deliverNextEmail(deps, policy, 'live-worker');
    assert.equal(last?.outcome, 'failed');
    assert.match(last?.reason ?? '', /stopped before it finished, on every attempt/);
    assert.equal((await deliveryOf(database, id, 'email')).status, 'failed');
    assert.equal(smtp.received.length, before);
  });

  test('`signet worker` (kinds include email) sends with SIGNET_SMTP_URL and SIGNET_MAIL_FROM, and its unsubscribe link is signed with the root secret\'s subkey', async () => {
    const database = await open();
    const clock = manualClock();
    const sub = await optedIn(database, clock, { email: 'worker@example.com' });
    const id = await notify(database, clock, sub, finished('worker.pdf'));
    const secret = 'worker-email-secret-worker-email-secret-0123';
    const settings = {
      ...parseSettings({
        SIGNET_BASE_URL: 'https://id.example.com',
        SIGNET_SMTP_URL: smtp.url,
        SIGNET_MAIL_FROM: 'Signet <no-reply@example.com>',
        SIGNET_SECRET: secret,
        SIGNET_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'signet-email-worker-')),
      }),
      database: database.settings,
    };
    const worker = startWorker({ settings, database, clock, logger: silent, kinds: ['email'], emailOptions: { pollMs: 10 } });
    try {
      await until('the worker to send', async () => ((await deliveryOf(database, id, 'email')).status === 'sent' ? true : undefined));
    } finally {
      await worker.stop();
    }
    const received = smtp.received.at(-1)!;
    assert.equal(received.from, 'no-reply@example.com');
    const mail = await parseMail(received);
    const token = /token=([^>]+)>$/.exec(headerOf(mail, 'List-Unsubscribe') ?? '')?.[1];
    assert.match(headerOf(mail, 'List-Unsubscribe') ?? '', /^<https:\/\/id\.example\.com\/unsubscribe\?token=/);
    assert.deepEqual(verifyUnsubscribeToken(deriveKeys(secret).unsubscribe, decodeURIComponent(token ?? '')), { sub, category: 'translation' });
  });
});

describe('e-mail delivery with two workers on one PostgreSQL', { skip: skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason()) }, () => {
  test('30 pending deliveries, two runners: every one sent exactly once (counted at the SMTP server), and both runners took part', async () => {
    const database = await postgresDatabase();
    const smtp = await startSmtp({ answerDelayMs: 15 });
    const clock = manualClock();
    const { logger, lines } = capturingLogger();
    try {
      const subs = [await optedIn(database, clock, { email: 'a@example.com' }), await optedIn(database, clock, { email: 'b@example.com' }), await optedIn(database, clock, { email: 'c@example.com' })];
      const ids: string[] = [];
      for (let n = 0; n < 30; n++) ids.push(await notify(database, clock, subs[n % 3]!, finished(`file-${n}.pdf`)));
      const deps = { db: database.db, dialect: database.dialect, clock, logger, smtp: { url: smtp.url, from: FROM }, baseUrl: BASE_URL, unsubscribeKey: KEYS.unsubscribe };
      const runners = [startEmailRunner(deps, { pollMs: 10 }), startEmailRunner(deps, { pollMs: 10 })];
      try {
        await until('all 30 to be sent', async () => {
          const rows = await database.db.selectFrom('notification_deliveries').select('status').where('channel', '=', 'email').execute();
          return rows.every((r) => r.status === 'sent') ? true : undefined;
        });
      } finally {
        await Promise.all(runners.map((r) => r.stop()));
      }
      assert.equal(smtp.received.length, 30);
      const subjects = await Promise.all(smtp.received.map(async (m) => (await parseMail(m)).subject));
      assert.deepEqual(new Set(subjects), new Set(Array.from({ length: 30 }, (_, n) => `Translation of file-${n}.pdf finished`)));
      const attempts = await database.db.selectFrom('notification_deliveries').select('attempts').where('channel', '=', 'email').execute();
      assert.ok(attempts.every((r) => r.attempts === 1));
      const workers = new Set(lines.filter((l) => l.msg === 'e-mail delivery').map((l) => l.worker));
      assert.equal(workers.size, 2, 'both runners delivered some');
    } finally {
      await smtp.close();
      await database.dispose();
    }
  });
});
