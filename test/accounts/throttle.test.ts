// Sign-in throttling: repeated wrong passwords slow down and then lock that account from that
// address, and that address; a per-account ceiling only slows. A stranger cannot lock a known account
// out: the person with the right password, from an address that has not been failing, still gets in.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock, MINUTE, SECOND } from '../../src/config/clock.ts';
import * as accounts from '../../src/accounts/accounts.ts';
import { signIn } from '../../src/accounts/signin.ts';
import {
  FAILURE_WINDOW_MS,
  forgetStaleCounters,
  PER_ACCOUNT,
  PER_ACCOUNT_AND_ADDRESS,
  PER_ADDRESS,
  PER_DEVICE,
  unlockAccount,
  waitAfterFailure,
} from '../../src/accounts/throttle.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { EMAIL, flowSetup, TinyBrowser } from '../oauth/authorize-support.ts';

const KEY = Buffer.alloc(32, 7);

test('waits per (account, address): none before 5 failures, then 5 s doubling, then a 15-minute lock at 10', () => {
  assert.deepEqual(
    [1, 4, 5, 6, 7, 9, 10, 11].map((n) => waitAfterFailure(PER_ACCOUNT_AND_ADDRESS, n)),
    [0, 0, 5 * SECOND, 10 * SECOND, 20 * SECOND, 80 * SECOND, 15 * MINUTE, 15 * MINUTE],
  );
});

test('waits per address (over every account): none before 15 failures, then 5 s doubling up to a minute, a 15-minute lock at 30; the waits fit in the window', () => {
  assert.deepEqual(
    [14, 15, 16, 18, 19, 29, 30].map((n) => waitAfterFailure(PER_ADDRESS, n)),
    [0, 5 * SECOND, 10 * SECOND, 40 * SECOND, MINUTE, MINUTE, 15 * MINUTE],
  );
  let total = 0;
  for (let n = 1; n < PER_ADDRESS.lock!.after; n++) total += waitAfterFailure(PER_ADDRESS, n);
  assert.ok(total < FAILURE_WINDOW_MS, 'an address that keeps failing reaches the lock inside one window');
});

test('the per-account ceiling slows, not locks: from 20 failures over every address, 5 s doubling, never more than 30 s', () => {
  assert.deepEqual(
    [19, 20, 21, 22, 23, 100, 10_000].map((n) => waitAfterFailure(PER_ACCOUNT, n)),
    [0, 5 * SECOND, 10 * SECOND, 20 * SECOND, 30 * SECOND, 30 * SECOND, 30 * SECOND],
  );
});

test('a known browser (device cookie) is counted per device instead of the ceiling: 5 s from the 5th failure, doubling; the 10th locks that device cookie out for 15 minutes', () => {
  assert.deepEqual(
    [4, 5, 6, 9, 10, 11].map((n) => waitAfterFailure(PER_DEVICE, n)),
    [0, 5 * SECOND, 10 * SECOND, 80 * SECOND, 15 * MINUTE, 15 * MINUTE],
  );
});

forEachDatabase('sign-in throttling', (open) => {
  async function person(email = 'p@example.com') {
    const { db } = await open();
    const clock = manualClock();
    const { sub } = await accounts.createAccount(db, clock, { email, password: 'right-password' });
    const attempt = (password: string, address: string) => signIn(db, KEY, clock, { identifier: email, password, address });
    return { db, clock, attempt, sub };
  }

  /** Wrong passwords from one address, each after the wait the previous one imposed. */
  async function failFrom(p: Awaited<ReturnType<typeof person>>, address: string, times: number): Promise<void> {
    for (let i = 0; i < times; i++) {
      const r = await p.attempt('wrong', address);
      if (r.outcome !== 'signed_in' && r.retryAt !== undefined && i < times - 1) p.clock.advance(r.retryAt - p.clock());
    }
  }

  test('"A stranger can lock a known account out" no more: ten wrong passwords from one address lock that address for that account; the person with the right password from an address that has not been failing still gets in', async () => {
    const p = await person();
    await failFrom(p, '198.51.100.66', 10);
    assert.equal((await p.attempt('right-password', '198.51.100.66')).outcome, 'throttled', 'the failing address is locked');
    assert.equal((await p.attempt('right-password', '203.0.113.7')).outcome, 'signed_in', 'the owner, elsewhere, is not');
    // And again every 15 minutes: still only the stranger's address.
    p.clock.advance(15 * MINUTE);
    await failFrom(p, '198.51.100.66', 10);
    assert.equal((await p.attempt('right-password', '203.0.113.8')).outcome, 'signed_in');
  });

  test('per (account, address): wrong passwords slow down, then lock; a locked attempt is refused even with the right password; the lock ends after 15 minutes', async () => {
    const p = await person();
    const from = '10.0.0.1';
    const { sub } = p;
    for (let i = 1; i < 5; i++) assert.deepEqual(await p.attempt('wrong', from), { outcome: 'wrong_credentials', retryAt: undefined, locked: false, sub });
    assert.deepEqual(await p.attempt('wrong', from), { outcome: 'wrong_credentials', retryAt: p.clock() + 5 * SECOND, locked: false, sub });
    assert.deepEqual(await p.attempt('right-password', from), { outcome: 'throttled', retryAt: p.clock() + 5 * SECOND, sub }, 'slowed down: must wait');
    for (let i = 6; i <= 10; i++) {
      p.clock.advance(waitAfterFailure(PER_ACCOUNT_AND_ADDRESS, i - 1));
      const result = await p.attempt('wrong', from);
      assert.equal(result.outcome, 'wrong_credentials');
      assert.equal(result.outcome === 'wrong_credentials' && result.locked, i === 10, `the 10th failure starts the lock (failure ${i})`);
    }
    p.clock.advance(15 * MINUTE - MINUTE);
    assert.equal((await p.attempt('right-password', from)).outcome, 'throttled', 'locked');
    p.clock.advance(MINUTE);
    assert.equal((await p.attempt('right-password', from)).outcome, 'signed_in', 'the lock ended');
  });

  test('per address: wrong passwords spread over many accounts from one address slow it down, then lock it for every account; other addresses are unaffected', async () => {
    const { db } = await open();
    const clock = manualClock();
    await accounts.createAccount(db, clock, { email: 'q@example.com', password: 'right-password' });
    for (let i = 1; i <= PER_ADDRESS.lock!.after; i++) {
      clock.advance(waitAfterFailure(PER_ADDRESS, i - 1));
      const r = await signIn(db, KEY, clock, { identifier: `nobody${i}@example.com`, password: 'wrong-password', address: '192.0.2.9' });
      assert.equal(r.outcome, 'wrong_credentials');
    }
    assert.equal((await signIn(db, KEY, clock, { identifier: 'q@example.com', password: 'right-password', address: '192.0.2.9' })).outcome, 'throttled');
    assert.equal((await signIn(db, KEY, clock, { identifier: 'q@example.com', password: 'right-password', address: '192.0.2.10' })).outcome, 'signed_in');
  });

  test('the per-account ceiling slows, not locks: after wrong passwords from many addresses, the owner from a fresh address waits at most 30 s, then gets in', async () => {
    const p = await person();
    for (let i = 0; i < 60; i++) {
      const r = await p.attempt('wrong', `198.18.${Math.floor(i / 200)}.${i % 200}`);
      if (r.outcome === 'throttled') p.clock.advance(r.retryAt - p.clock());
    }
    const first = await p.attempt('right-password', '203.0.113.50');
    assert.equal(first.outcome, 'throttled', 'slowed down');
    assert.ok(first.outcome === 'throttled' && first.retryAt - p.clock() <= 30 * SECOND, 'never more than 30 s');
    p.clock.advance(30 * SECOND);
    assert.equal((await p.attempt('right-password', '203.0.113.50')).outcome, 'signed_in');
  });

  test('an account that does not exist is throttled the same way (equal answers: throttling does not reveal which accounts exist)', async () => {
    const { db } = await open();
    const clock = manualClock();
    await accounts.createAccount(db, clock, { email: 'real@example.com', password: 'right-password' });
    const outcomes = async (identifier: string, address: string) => {
      const seen: string[] = [];
      for (let i = 1; i <= 11; i++) {
        const r = await signIn(db, KEY, clock, { identifier, password: 'wrong-password', address });
        seen.push(`${r.outcome}:${r.outcome === 'signed_in' || r.retryAt === undefined ? '-' : r.retryAt - clock()}:${r.outcome === 'wrong_credentials' ? r.locked : '-'}`);
        clock.advance(waitAfterFailure(PER_ACCOUNT_AND_ADDRESS, i) < 15 * MINUTE ? waitAfterFailure(PER_ACCOUNT_AND_ADDRESS, i) : 0);
      }
      return seen;
    };
    assert.deepEqual(await outcomes('ghost@example.com', '198.51.100.1'), await outcomes('real@example.com', '198.51.100.2'));
  });

  test('failures older than the 15-minute window are forgotten; a successful sign-in clears the counter of that account from that address', async () => {
    const p = await person('r@example.com');
    for (let i = 0; i < 4; i++) await p.attempt('wrong', '203.0.113.1');
    p.clock.advance(15 * MINUTE + 1);
    for (let i = 0; i < 4; i++) assert.deepEqual(await p.attempt('wrong', '203.0.113.1'), { outcome: 'wrong_credentials', retryAt: undefined, locked: false, sub: p.sub }, 'a new window starts at 1');
    assert.equal((await p.attempt('right-password', '203.0.113.1')).outcome, 'signed_in');
    const keys = (await p.db.selectFrom('signin_throttle').select('key').execute()).map((r) => r.key).sort();
    assert.equal(keys.length, 2, `the address counter and the account ceiling stay: ${keys.join(', ')}`);
    assert.ok(keys.some((k) => k.startsWith('address:')) && keys.some((k) => k.startsWith('account:')));
    assert.equal(await forgetStaleCounters(p.db, p.clock), 0, 'counters inside their window are kept');
    p.clock.advance(15 * MINUTE + 1);
    assert.equal(await forgetStaleCounters(p.db, p.clock), 2, 'stale counters are swept');
  });

  test('an operator can unlock: unlockAccount(db, sub) lifts every lock and wait on the account at once, from every address', async () => {
    const p = await person('u@example.com');
    const sub = (await accounts.findAccountByIdentifier(p.db, 'u@example.com'))!.sub;
    await failFrom(p, '198.51.100.7', 10);
    await failFrom(p, '198.51.100.8', 10);
    assert.equal((await p.attempt('right-password', '198.51.100.7')).outcome, 'throttled');
    assert.equal(await unlockAccount(p.db, sub), 3, 'two (account, address) counters and the account ceiling');
    assert.equal((await p.attempt('right-password', '198.51.100.7')).outcome, 'signed_in');
    assert.equal((await p.attempt('right-password', '198.51.100.8')).outcome, 'signed_in');
  });

  test('HTTP: the sign-in page answers 429 with Retry-After and a message saying when to retry; then locks with a clear message', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    const tryWrong = () => browser.submit('/signin', '/signin', { identifier: EMAIL, password: 'wrong-password' });
    for (let i = 1; i < 5; i++) {
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
    for (let i = 6; i <= 10; i++) {
      flow.clock.advance(waitAfterFailure(PER_ACCOUNT_AND_ADDRESS, i - 1));
      await tryWrong();
    }
    const locked = await tryWrong();
    assert.equal(locked.statusCode, 429);
    assert.match(locked.body, /Wait 15 minutes and try again/);
  });
});
