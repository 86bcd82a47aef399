// Account self-service in the domain, on SQLite and PostgreSQL: reset and verification links (32 random
// bytes, keyed hashes at rest, single use, lifetimes), the forgotten-password request (the same work and
// answer whether or not the account exists, limits), account mail through the worker's delivery rules,
// changing one's password, and the list of sessions.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KyselyPlugin, PluginTransformQueryArgs, PluginTransformResultArgs, QueryResult, RootOperationNode, UnknownRow } from 'kysely';
import * as accounts from '../../src/accounts/accounts.ts';
import { issueAccountToken, TOKEN_LIFETIME_MS, useAccountToken, type AccountLinkContext } from '../../src/accounts/account-tokens.ts';
import { requestEmailVerification, verifyEmail } from '../../src/accounts/email-verification.ts';
import { deliverNextAccountMail, type AccountMailDeps } from '../../src/accounts/mail/deliver.ts';
import { changePassword } from '../../src/accounts/password-change.ts';
import { requestPasswordReset, resetLinkUsable, resetPassword } from '../../src/accounts/password-reset.ts';
import { RESET_PER_CLIENT, RESET_PER_EMAIL } from '../../src/accounts/request-limits.ts';
import { endOtherSessions, endSessionByHandle, findSession, listSessions, startSession } from '../../src/accounts/sessions.ts';
import { signIn } from '../../src/accounts/signin.ts';
import { signUp } from '../../src/accounts/signup.ts';
import { blockedUntil } from '../../src/accounts/throttle.ts';
import { describeUserAgent } from '../../src/accounts/user-agent.ts';
import { HOUR, manualClock, MINUTE } from '../../src/config/clock.ts';
import type { Db } from '../../src/db/database.ts';
import { DEFAULT_EMAIL_POLICY } from '../../src/notifications/email/deliver.ts';
import { MailSendError, type Mailer, type OutgoingEmail } from '../../src/notifications/email/send.ts';
import { createLogger } from '../../src/web/logging.ts';
import { forEachDatabase, type TestDatabase } from '../helpers/databases.ts';

const HASH_KEY = Buffer.alloc(32, 1);
const TOKEN_KEY = Buffer.alloc(32, 2);
const SESSION_KEY = Buffer.alloc(32, 3);
const PASSWORD = 'the first password';
const BASE_URL = new URL('https://id.example');
const ORIGIN = BASE_URL.origin;
const CHROME_LINUX = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36';

type Sent = OutgoingEmail[];

function fakeMailer(sent: Sent, fail?: () => MailSendError | undefined): Mailer {
  return {
    async send(message) {
      const failure = fail?.();
      if (failure) throw failure;
      sent.push(message);
    },
    close() {},
  };
}

function setUp(database: TestDatabase) {
  const clock = manualClock();
  const ctx: AccountLinkContext = { db: database.db, clock, hashKey: HASH_KEY, tokenKey: TOKEN_KEY };
  const sent: Sent = [];
  let failNext: MailSendError | undefined;
  const mail: AccountMailDeps = {
    db: database.db,
    dialect: database.dialect,
    clock,
    mailer: fakeMailer(sent, () => {
      const failure = failNext;
      failNext = undefined;
      return failure;
    }),
    baseUrl: BASE_URL,
    tokenKey: TOKEN_KEY,
    productName: 'Signet',
    logger: createLogger('silent'),
  };
  return {
    clock,
    ctx,
    sent,
    person: (email: string, extra: Partial<accounts.NewAccount> = {}) => accounts.createAccount(database.db, clock, { email, password: PASSWORD, emailVerified: true, ...extra }),
    deliver: () => deliverNextAccountMail(mail, DEFAULT_EMAIL_POLICY, 'worker-1'),
    failNextSend(failure: MailSendError) {
      failNext = failure;
    },
    /** the token in the newest message's link */
    lastToken(): string {
      const message = sent.at(-1);
      assert.ok(message, 'a message was sent');
      const token = /\?token=([A-Za-z0-9_-]+)/.exec(message.text)?.[1];
      assert.ok(token, 'the message carries a link with a token');
      return token;
    },
  };
}

/** Runs `work` against a Kysely instance that records the kind and table of every statement. */
async function statementsOf(db: Db, work: (db: Db) => Promise<unknown>): Promise<string[]> {
  const seen: string[] = [];
  const recorder: KyselyPlugin = {
    transformQuery(args: PluginTransformQueryArgs): RootOperationNode {
      const node = args.node as RootOperationNode & { from?: { froms: Array<{ table?: { identifier?: { name?: string } } }> }; into?: { table: { identifier: { name: string } } }; table?: { table: { identifier: { name: string } } } };
      const table = node.into?.table.identifier.name ?? node.table?.table.identifier.name ?? node.from?.froms[0]?.table?.identifier?.name ?? '?';
      seen.push(`${node.kind}:${table}`);
      return args.node;
    },
    async transformResult(args: PluginTransformResultArgs): Promise<QueryResult<UnknownRow>> {
      return args.result;
    },
  };
  await work(db.withPlugin(recorder));
  return seen;
}

forEachDatabase('account self-service', (open) => {
  test('reset and verification tokens are 32 random bytes, stored only as keyed hashes, single use — of two simultaneous uses exactly one succeeds', async () => {
    const database = await open();
    const { clock, person } = setUp(database);
    const { sub } = await person('tokens@example.com');
    const token = await issueAccountToken(database.db, TOKEN_KEY, { purpose: 'password_reset', sub, email: 'tokens@example.com', now: clock(), expiresAt: clock() + TOKEN_LIFETIME_MS.password_reset });
    assert.equal(Buffer.from(token, 'base64url').length, 32);
    const rows = await database.db.selectFrom('account_tokens').selectAll().execute();
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(token), 'the token itself is nowhere in the table');
    const uses = await Promise.all([useAccountToken(database.db, TOKEN_KEY, 'password_reset', token, clock()), useAccountToken(database.db, TOKEN_KEY, 'password_reset', token, clock())]);
    assert.equal(uses.filter((u) => u !== undefined).length, 1);
    assert.equal(await useAccountToken(database.db, TOKEN_KEY, 'password_reset', token, clock()), undefined, 'a used token is refused');
    assert.equal(await useAccountToken(database.db, TOKEN_KEY, 'email_verification', token, clock()), undefined, 'a token is good for its own purpose only');
  });

  test('forgotten password: "the same answer whether or not the account exists" — and the same statements, in the same order', async () => {
    const database = await open();
    const { ctx, person } = setUp(database);
    await person('known@example.com');
    const known = await statementsOf(database.db, (db) => requestPasswordReset({ ...ctx, db }, { email: 'known@example.com', address: '192.0.2.1', locale: 'en' }));
    const unknown = await statementsOf(database.db, (db) => requestPasswordReset({ ...ctx, db }, { email: 'unknown@example.com', address: '192.0.2.2', locale: 'en' }));
    assert.deepEqual(unknown, known);
    assert.ok(known.includes('InsertQueryNode:mail_outbox'), known.join(', '));
    assert.deepEqual(await requestPasswordReset(ctx, { email: 'unknown@example.com', address: '192.0.2.3', locale: 'en' }), await requestPasswordReset(ctx, { email: 'known@example.com', address: '192.0.2.3', locale: 'en' }));
  });

  test('a reset link works 30 minutes from the request; "a reset ends every session", forgets the other reset links, verifies the address and lifts sign-in throttling', async () => {
    const database = await open();
    const { ctx, clock, person, deliver, lastToken, sent } = setUp(database);
    const { sub } = await person('reset@example.com', { emailVerified: false });
    await startSession(database.db, SESSION_KEY, clock, { sub, origin: ORIGIN });
    await startSession(database.db, SESSION_KEY, clock, { sub, origin: 'https://other.example' });
    await requestPasswordReset(ctx, { email: 'Reset@Example.com', address: '192.0.2.1', locale: 'en' });
    clock.advance(1000);
    await requestPasswordReset(ctx, { email: 'reset@example.com', address: '192.0.2.1', locale: 'zh-CN' });
    assert.equal((await deliver())?.outcome, 'sent');
    const first = lastToken();
    assert.equal((await deliver())?.outcome, 'sent');
    const second = lastToken();
    assert.equal(sent[0]!.to, 'reset@example.com');
    assert.match(sent[0]!.text, new RegExp(`^https://id\\.example/reset-password\\?token=${first}$`, 'm'), 'a link to {base_url}/reset-password?token=…');
    assert.match(sent[1]!.subject, /设置新的 Signet 密码/, 'in the language of the page it was asked from');
    for (let n = 0; n < 10; n++) await signIn(database.db, HASH_KEY, clock, { identifier: 'reset@example.com', password: 'wrong', address: '192.0.2.9' });
    assert.ok(await blockedUntil(database.db, clock, { account: sub, address: '192.0.2.9' }), 'locked before the reset');

    clock.advance(29 * MINUTE - 1000);
    assert.equal(await resetLinkUsable(ctx, first), true);
    assert.deepEqual(await resetPassword(ctx, { token: first, password: 'short' }), { outcome: 'invalid_password', problem: 'too_short' });
    assert.equal(await resetLinkUsable(ctx, first), true, 'a refused password does not use the link up');
    assert.deepEqual(await resetPassword(ctx, { token: first, password: 'the new password' }), { outcome: 'done', sub });
    assert.equal((await database.db.selectFrom('sessions').selectAll().where('sub', '=', sub).execute()).length, 0, 'every session ended');
    assert.deepEqual(await resetPassword(ctx, { token: first, password: 'another password' }), { outcome: 'invalid_link' }, 'single use');
    assert.deepEqual(await resetPassword(ctx, { token: second, password: 'another password' }), { outcome: 'invalid_link' }, 'the other reset link is forgotten');
    assert.equal((await accounts.checkCredentials(database.db, 'reset@example.com', 'the new password'))?.sub, sub);
    assert.equal((await accounts.findAccount(database.db, sub))?.email_verified, true, 'following the link proved the address');
    assert.equal(await blockedUntil(database.db, clock, { account: sub, address: '192.0.2.9' }), undefined, 'throttling lifted');

    await requestPasswordReset(ctx, { email: 'reset@example.com', address: '192.0.2.1', locale: 'en' });
    clock.advance(10 * MINUTE);
    await deliver();
    const late = lastToken();
    clock.advance(20 * MINUTE);
    assert.equal(await resetLinkUsable(ctx, late), false, 'valid 30 minutes from the request, not from the sending');
    assert.deepEqual(await resetPassword(ctx, { token: late, password: 'too late now' }), { outcome: 'invalid_link' });
  });

  test('reset requests are limited: 3 an hour for one e-mail address (then recorded, not sent), 20 an hour from one client address (then throttled)', async () => {
    const database = await open();
    const { ctx, clock, person, deliver, sent } = setUp(database);
    await person('limited@example.com');
    for (let n = 0; n < RESET_PER_EMAIL.max + 2; n++) assert.equal((await requestPasswordReset(ctx, { email: 'limited@example.com', address: `192.0.2.${n}`, locale: 'en' })).outcome, 'accepted');
    while (await deliver());
    assert.equal(sent.length, RESET_PER_EMAIL.max);
    const suppressed = await database.db.selectFrom('mail_outbox').select('reason').where('status', '=', 'suppressed').execute();
    assert.deepEqual(suppressed.map((r) => r.reason), ['too many reset requests for this address', 'too many reset requests for this address']);

    for (let n = 0; n < RESET_PER_CLIENT.max; n++) await requestPasswordReset(ctx, { email: `someone-${n}@example.com`, address: '198.51.100.7', locale: 'en' });
    const refused = await requestPasswordReset(ctx, { email: 'limited@example.com', address: '198.51.100.7', locale: 'en' });
    assert.equal(refused.outcome, 'throttled');
    assert.equal(refused.outcome === 'throttled' && refused.retryAt, clock() + HOUR);
    clock.advance(HOUR + 1);
    assert.equal((await requestPasswordReset(ctx, { email: 'limited@example.com', address: '198.51.100.7', locale: 'en' })).outcome, 'accepted');
  });

  test('account mail is not a notification: no preference turns it off; a retry after a 4xx mints a new link; a disabled or changed account gets nothing; an expired link is never sent', async () => {
    const database = await open();
    const { ctx, clock, person, deliver, sent, failNextSend } = setUp(database);
    const { sub } = await person('mail@example.com');
    // E-mail is off for every notification category by default: account mail goes anyway.
    await requestPasswordReset(ctx, { email: 'mail@example.com', address: '192.0.2.1', locale: 'en' });
    failNextSend(new MailSendError('The mail server answered: 451 busy', false));
    assert.equal((await deliver())?.outcome, 'retry');
    assert.equal(await deliver(), undefined, 'not due before its back-off');
    clock.advance(DEFAULT_EMAIL_POLICY.backoffMs);
    assert.equal((await deliver())?.outcome, 'sent');
    assert.equal(sent.length, 1);

    await requestPasswordReset(ctx, { email: 'mail@example.com', address: '192.0.2.1', locale: 'en' });
    await accounts.updateAccount(database.db, clock, sub, { email: 'moved@example.com' });
    assert.deepEqual(await deliver().then((d) => [d?.outcome, d?.reason]), ['suppressed', 'the account has another e-mail address now']);

    await requestPasswordReset(ctx, { email: 'moved@example.com', address: '192.0.2.1', locale: 'en' });
    await accounts.disableAccount(database.db, clock, sub);
    assert.equal((await deliver())?.outcome, 'suppressed');
    await accounts.enableAccount(database.db, clock, sub);

    await requestPasswordReset(ctx, { email: 'moved@example.com', address: '192.0.2.1', locale: 'en' });
    clock.advance(31 * MINUTE);
    assert.deepEqual(await deliver().then((d) => d?.outcome), 'failed');
    assert.equal(sent.length, 1, 'nothing more was sent');
  });

  test('two workers never send one account mail twice', async () => {
    const database = await open();
    const { ctx, person, deliver, sent } = setUp(database);
    await person('once@example.com');
    await requestPasswordReset(ctx, { email: 'once@example.com', address: '192.0.2.1', locale: 'en' });
    const outcomes = await Promise.all([deliver(), deliver(), deliver()]);
    assert.equal(outcomes.filter((o) => o?.outcome === 'sent').length, 1);
    assert.equal(sent.length, 1);
  });

  test('e-mail verification: "a verification link sets email_verified"; a second opening says verified already; a link for an address the account no longer uses verifies nothing', async () => {
    const database = await open();
    const { ctx, clock, person, deliver, lastToken } = setUp(database);
    const { sub } = await person('verify@example.com', { emailVerified: false });
    assert.deepEqual(await requestEmailVerification(ctx, { sub, locale: 'en' }), { outcome: 'queued', email: 'verify@example.com' });
    await deliver();
    const token = lastToken();
    assert.deepEqual(await verifyEmail(ctx, token), { outcome: 'verified', email: 'verify@example.com' });
    assert.equal((await accounts.findAccount(database.db, sub))?.email_verified, true);
    assert.deepEqual(await verifyEmail(ctx, token), { outcome: 'already_verified', email: 'verify@example.com' });
    assert.deepEqual(await requestEmailVerification(ctx, { sub, locale: 'en' }), { outcome: 'nothing_to_verify' });

    await accounts.updateAccount(database.db, clock, sub, { email: 'second@example.com' });
    await requestEmailVerification(ctx, { sub, locale: 'en' });
    await deliver();
    const forSecond = lastToken();
    await accounts.updateAccount(database.db, clock, sub, { email: 'third@example.com' });
    assert.deepEqual(await verifyEmail(ctx, forSecond), { outcome: 'stale' });
    assert.equal((await accounts.findAccount(database.db, sub))?.email_verified, false);
    assert.deepEqual(await verifyEmail(ctx, 'not-a-token'), { outcome: 'invalid_link' });

    // The CLI can still set it.
    await accounts.updateAccount(database.db, clock, sub, { emailVerified: true });
    assert.equal((await accounts.findAccount(database.db, sub))?.email_verified, true);
  });

  test('verification links expire after 24 hours and are limited to 5 an hour', async () => {
    const database = await open();
    const { ctx, clock, person, deliver, lastToken } = setUp(database);
    const { sub } = await person('slow@example.com', { emailVerified: false });
    await requestEmailVerification(ctx, { sub, locale: 'en' });
    await deliver();
    const token = lastToken();
    clock.advance(24 * HOUR);
    assert.deepEqual(await verifyEmail(ctx, token), { outcome: 'invalid_link' });
    for (let n = 0; n < 5; n++) assert.equal((await requestEmailVerification(ctx, { sub, locale: 'en' })).outcome, 'queued');
    assert.equal((await requestEmailVerification(ctx, { sub, locale: 'en' })).outcome, 'throttled');
  });

  test('sign-up: the account starts with email_verified=false and gets a verification link; an existing address gets the same answer and a note instead', async () => {
    const database = await open();
    const { ctx, person, deliver, sent } = setUp(database);
    const answer = await signUp(ctx, { email: 'New@Example.com', password: 'a new password', name: ' Newcomer ', address: '192.0.2.1', locale: 'en' });
    assert.deepEqual(answer, { outcome: 'check_email', email: 'new@example.com' });
    const created = await accounts.findAccountByEmail(database.db, 'new@example.com');
    assert.equal(created?.email_verified, false);
    assert.equal(created?.name, 'Newcomer');
    await deliver();
    assert.match(sent.at(-1)!.text, /https:\/\/id\.example\/verify-email\?token=/);

    await person('taken@example.com');
    assert.deepEqual(await signUp(ctx, { email: 'taken@example.com', password: 'somebody else', name: '', address: '192.0.2.1', locale: 'en' }), { outcome: 'check_email', email: 'taken@example.com' });
    await deliver();
    assert.equal(sent.at(-1)!.to, 'taken@example.com');
    assert.match(sent.at(-1)!.subject, /You already have a Signet account/);
    assert.equal(await accounts.checkCredentials(database.db, 'taken@example.com', 'somebody else'), undefined, 'the existing account is untouched');
    assert.deepEqual(await signUp(ctx, { email: 'x@example.com', password: 'short', name: '', address: '192.0.2.1', locale: 'en' }), { outcome: 'invalid_password', problem: 'too_short' });
  });

  test('changing the password: "current password required"; wrong ones count against sign-in throttling; every session ends (the route starts a new one)', async () => {
    const database = await open();
    const { clock, person } = setUp(database);
    const { sub } = await person('change@example.com');
    const session = await startSession(database.db, SESSION_KEY, clock, { sub, origin: ORIGIN });
    const attempt = (currentPassword: string) => changePassword(database.db, clock, { sub, currentPassword, newPassword: 'the second password', address: '192.0.2.1' });
    assert.equal((await attempt('wrong')).outcome, 'wrong_password');
    assert.ok(await findSession(database.db, SESSION_KEY, clock, session.id, ORIGIN), 'nothing changed');
    for (let n = 0; n < 9; n++) await attempt('wrong');
    assert.equal((await attempt(PASSWORD)).outcome, 'throttled', 'ten wrong passwords lock, as at sign-in');
    clock.advance(16 * MINUTE);
    assert.deepEqual(await changePassword(database.db, clock, { sub, currentPassword: PASSWORD, newPassword: 'short', address: '192.0.2.1' }), { outcome: 'invalid_password', problem: 'too_short' });
    assert.deepEqual(await attempt(PASSWORD), { outcome: 'changed' });
    assert.equal(await findSession(database.db, SESSION_KEY, clock, session.id, ORIGIN), undefined);
    assert.equal((await accounts.checkCredentials(database.db, 'change@example.com', 'the second password'))?.sub, sub);
    const stored = await database.db.selectFrom('users').select('password_hash').where('sub', '=', sub).executeTakeFirstOrThrow();
    assert.match(stored.password_hash, /^\$argon2id\$/);
  });

  test('sessions: where and when each signed in; one can be signed out by its handle (never another person\'s); "all others" keeps this one', async () => {
    const database = await open();
    const { clock, person } = setUp(database);
    const { sub } = await person('sessions@example.com');
    const stranger = await person('stranger@example.com');
    const first = await startSession(database.db, SESSION_KEY, clock, { sub, origin: ORIGIN, client: { userAgent: CHROME_LINUX, ip: '192.0.2.1' } });
    clock.advance(MINUTE);
    const second = await startSession(database.db, SESSION_KEY, clock, { sub, origin: ORIGIN, client: { userAgent: 'Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.0 Mobile/15E148 Safari/604.1', ip: '2001:db8::1' } });
    clock.advance(MINUTE);
    const third = await startSession(database.db, SESSION_KEY, clock, { sub, origin: ORIGIN, client: { userAgent: 'x'.repeat(1000) + '\u0000' } });
    const theirs = await startSession(database.db, SESSION_KEY, clock, { sub: stranger.sub, origin: ORIGIN });

    const listed = await listSessions(database.db, SESSION_KEY, clock, sub, { id: first.id, origin: ORIGIN });
    assert.deepEqual(
      listed.map((s) => [s.ip, s.current, s.signedInAt]),
      [
        [null, false, clock()],
        ['2001:db8::1', false, clock() - MINUTE],
        ['192.0.2.1', true, clock() - 2 * MINUTE],
      ],
    );
    assert.equal(listed[0]!.userAgent?.length, 300, 'a long User-Agent is shortened');
    assert.deepEqual(describeUserAgent(listed[1]!.userAgent), { browser: 'Safari', system: 'iOS' });
    assert.deepEqual(describeUserAgent(listed[2]!.userAgent), { browser: 'Chrome', system: 'Linux' });

    const strangerHandle = (await listSessions(database.db, SESSION_KEY, clock, stranger.sub, undefined))[0]!.handle;
    assert.equal(await endSessionByHandle(database.db, sub, strangerHandle), false, "another person's session is not found");
    assert.ok(await findSession(database.db, SESSION_KEY, clock, theirs.id, ORIGIN));
    assert.equal(await endSessionByHandle(database.db, sub, listed[1]!.handle), true);
    assert.equal(await findSession(database.db, SESSION_KEY, clock, second.id, ORIGIN), undefined);
    assert.equal(await endOtherSessions(database.db, SESSION_KEY, sub, { id: first.id, origin: ORIGIN }), 1);
    assert.equal(await findSession(database.db, SESSION_KEY, clock, third.id, ORIGIN), undefined);
    assert.ok(await findSession(database.db, SESSION_KEY, clock, first.id, ORIGIN), 'this one stays');
  });
});
