// Sign-in throttling: "Repeated wrong passwords slow down and then temporarily lock that account and
// that source address, with a clear message".
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock, MINUTE, SECOND } from '../../src/config/clock.ts';
import * as accounts from '../../src/accounts/accounts.ts';
import { signIn } from '../../src/accounts/signin.ts';
import { forgetStaleCounters, LOCK_AFTER, LOCK_MS, SLOW_DOWN_AFTER, waitAfterFailure } from '../../src/accounts/throttle.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { EMAIL, flowSetup, TinyBrowser } from '../oauth/authorize-support.ts';

const KEY = Buffer.alloc(32, 7);

test('waits: none before 5 failures, then 5 s doubling, then a 15-minute lock at 10', () => {
  assert.deepEqual(
    [1, 4, 5, 6, 7, 9, 10, 11].map(waitAfterFailure),
    [0, 0, 5 * SECOND, 10 * SECOND, 20 * SECOND, 80 * SECOND, 15 * MINUTE, 15 * MINUTE],
  );
  assert.equal(SLOW_DOWN_AFTER, 5);
  assert.equal(LOCK_AFTER, 10);
});

forEachDatabase('sign-in throttling', (open) => {
  test('wrong passwords slow down, then lock the account; a locked attempt is refused even with the right password; the lock ends after 15 minutes', async () => {
    const { db } = await open();
    const clock = manualClock();
    await accounts.createAccount(db, clock, { email: 'p@example.com', password: 'right-password' });
    const attempt = (password: string, address: string) => signIn(db, KEY, clock, { identifier: 'p@example.com', password, address });
    for (let i = 1; i < SLOW_DOWN_AFTER; i++) assert.deepEqual(await attempt('wrong', `10.0.0.${i}`), { outcome: 'wrong_credentials', retryAt: undefined });
    const fifth = await attempt('wrong', '10.0.0.5');
    assert.deepEqual(fifth, { outcome: 'wrong_credentials', retryAt: clock() + 5 * SECOND });
    assert.deepEqual(await attempt('right-password', '10.0.0.6'), { outcome: 'throttled', retryAt: clock() + 5 * SECOND }, 'slowed down: must wait');
    for (let i = SLOW_DOWN_AFTER + 1; i <= LOCK_AFTER; i++) {
      clock.advance(waitAfterFailure(i - 1));
      assert.equal((await attempt('wrong', `10.0.1.${i}`)).outcome, 'wrong_credentials');
    }
    // Locked, from any address, with the right password.
    clock.advance(LOCK_MS - MINUTE);
    assert.equal((await attempt('right-password', '10.0.2.1')).outcome, 'throttled');
    clock.advance(MINUTE);
    assert.equal((await attempt('right-password', '10.0.2.2')).outcome, 'signed_in');
  });

  test('the source address is locked too: wrong passwords spread over many accounts from one address', async () => {
    const { db } = await open();
    const clock = manualClock();
    for (let i = 1; i <= LOCK_AFTER; i++) {
      clock.advance(waitAfterFailure(i - 1));
      const r = await signIn(db, KEY, clock, { identifier: `nobody${i}@example.com`, password: 'wrong-password', address: '192.0.2.9' });
      assert.equal(r.outcome, 'wrong_credentials');
    }
    await accounts.createAccount(db, clock, { email: 'q@example.com', password: 'right-password' });
    assert.equal((await signIn(db, KEY, clock, { identifier: 'q@example.com', password: 'right-password', address: '192.0.2.9' })).outcome, 'throttled');
    assert.equal((await signIn(db, KEY, clock, { identifier: 'q@example.com', password: 'right-password', address: '192.0.2.10' })).outcome, 'signed_in');
  });

  test('an account that does not exist locks the same way (lockouts do not reveal which accounts exist)', async () => {
    const { db } = await open();
    const clock = manualClock();
    for (let i = 1; i <= LOCK_AFTER; i++) {
      clock.advance(waitAfterFailure(i - 1));
      const r = await signIn(db, KEY, clock, { identifier: 'ghost@example.com', password: 'wrong-password', address: `198.51.100.${i}` });
      assert.equal(r.outcome, 'wrong_credentials');
    }
    assert.equal((await signIn(db, KEY, clock, { identifier: 'ghost@example.com', password: 'x', address: '198.51.100.200' })).outcome, 'throttled');
  });

  test('failures older than the 15-minute window are forgotten; a successful sign-in clears the account counter', async () => {
    const { db } = await open();
    const clock = manualClock();
    await accounts.createAccount(db, clock, { email: 'r@example.com', password: 'right-password' });
    const attempt = (password: string) => signIn(db, KEY, clock, { identifier: 'r@example.com', password, address: '203.0.113.1' });
    for (let i = 0; i < 4; i++) await attempt('wrong');
    clock.advance(15 * MINUTE + 1);
    assert.deepEqual(await attempt('wrong'), { outcome: 'wrong_credentials', retryAt: undefined }, 'a new window starts at 1');
    assert.equal((await attempt('right-password')).outcome, 'signed_in');
    const rows = await db.selectFrom('signin_throttle').select('key').execute();
    assert.deepEqual(rows.map((r) => r.key), ['address:203.0.113.1']);
    assert.equal(await forgetStaleCounters(db, clock), 0, 'a counter inside its window is kept');
    clock.advance(15 * MINUTE + 1);
    assert.equal(await forgetStaleCounters(db, clock), 1, 'a stale counter is swept');
  });

  test('HTTP: the sign-in page answers 429 with Retry-After and a message saying when to retry; then locks with a clear message', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    const tryWrong = () => browser.submit('/signin', '/signin', { identifier: EMAIL, password: 'wrong-password' });
    for (let i = 1; i < SLOW_DOWN_AFTER; i++) {
      const res = await tryWrong();
      assert.equal(res.statusCode, 401);
      assert.match(res.body, /do not match an account/);
      assert.match(res.body, new RegExp(`value="${EMAIL.replace('.', '\\.')}"`), 'the identifier is kept in the field');
    }
    const fifth = await tryWrong();
    assert.equal(fifth.statusCode, 401);
    assert.match(fifth.body, /Wait 5 seconds and try again/);
    const throttled = await tryWrong();
    assert.equal(throttled.statusCode, 429);
    assert.equal(throttled.headers['retry-after'], '5');
    assert.match(throttled.body, /Too many failed sign-in attempts\. Wait 5 seconds and try again\./);
    for (let i = SLOW_DOWN_AFTER + 1; i <= LOCK_AFTER; i++) {
      flow.clock.advance(waitAfterFailure(i - 1));
      await tryWrong();
    }
    const locked = await tryWrong();
    assert.equal(locked.statusCode, 429);
    assert.match(locked.body, /Wait 15 minutes and try again/);
  });
});
