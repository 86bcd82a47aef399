// Hardening 2, "A stranger can lock a known account out indefinitely": "the person with the right
// password from an address that has not been failing must still get in". The probe kept the
// per-account ceiling's wait alive from many addresses (24 failures, then about one a second), and the
// owner got 429 nearly every time. Device cookies (OWASP, "Slow Down Online Guessing Attacks with
// Device Cookies"): a browser that signed in to the account before is exempt from the ceiling.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock, DAY, MINUTE, SECOND } from '../../src/config/clock.ts';
import * as accounts from '../../src/accounts/accounts.ts';
import { DEVICE_COOKIE_LIFETIME_MS, deviceCookieAfterSignIn } from '../../src/accounts/device-cookies.ts';
import { signIn, type SignInResult } from '../../src/accounts/signin.ts';
import { PER_ACCOUNT, unlockAccount } from '../../src/accounts/throttle.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { EMAIL, flowSetup, PASSWORD, TinyBrowser } from '../oauth/authorize-support.ts';

const HASH_KEY = Buffer.alloc(32, 7);
const DEVICE_KEY = Buffer.alloc(32, 9);
const OWNER_EMAIL = 'owner@example.com';
const OWNER_PASSWORD = 'right-password';
/** An address that has not been failing, where the owner signs in. */
const CLEAN_ADDRESS = '203.0.113.50';

forEachDatabase('device cookies against lockout abuse', (open) => {
  async function setup() {
    const { db } = await open();
    const clock = manualClock();
    const { sub } = await accounts.createAccount(db, clock, { email: OWNER_EMAIL, password: OWNER_PASSWORD });
    /** One sign-in attempt at the owner's account, from `address`, presenting `cookie` (undefined: a browser without one). */
    const attempt = (password: string, address: string, cookie?: string) =>
      signIn(db, HASH_KEY, clock, { identifier: OWNER_EMAIL, password, address }, { key: DEVICE_KEY, cookie });
    /** The owner's browser signs in once (before any attack): its device cookie. */
    const ownersBrowser = async (): Promise<string> => {
      const r = await attempt(OWNER_PASSWORD, '192.0.2.1');
      assert.ok(r.outcome === 'signed_in' && r.deviceCookie !== undefined, 'a successful sign-in hands out a device cookie');
      return r.deviceCookie;
    };
    let nextAttacker = 0;
    /** The attacker: wrong passwords from addresses never used before (so only the ceiling can hold them). */
    const attack = async (times: number) => {
      for (let i = 0; i < times; i++) {
        nextAttacker++;
        await attempt('guess-' + nextAttacker, `198.18.${Math.floor(nextAttacker / 250)}.${nextAttacker % 250}`);
      }
    };
    /** The probe's scenario: 24 wrong passwords from 24 addresses push the ceiling. */
    const pushCeiling = () => attack(24);
    return { db, clock, sub, attempt, ownersBrowser, attack, pushCeiling };
  }

  test('"the person with the right password from an address that has not been failing must still get in": during a distributed attack (24 addresses, then one guess a second), the owner\'s browser that signed in before gets in every time', async () => {
    const s = await setup();
    let cookie = await s.ownersBrowser();
    await s.pushCeiling();
    const outcomes: string[] = [];
    for (let second = 1; second <= 120; second++) {
      s.clock.advance(SECOND);
      await s.attack(1);
      if (second % 10 === 0) {
        const r = await s.attempt(OWNER_PASSWORD, CLEAN_ADDRESS, cookie);
        outcomes.push(r.outcome);
        if (r.outcome === 'signed_in') cookie = r.deviceCookie!;
      }
    }
    assert.deepEqual(outcomes, Array(12).fill('signed_in'), 'every attempt of the known browser gets in');
  });

  test('"a per-account ceiling that slows, not locks" still holds a browser without a device cookie: during the same attack it is slowed (429), and gets in within 30 s', async () => {
    const s = await setup();
    await s.ownersBrowser();
    await s.pushCeiling();
    s.clock.advance(SECOND);
    await s.attack(1);
    const first = await s.attempt(OWNER_PASSWORD, CLEAN_ADDRESS);
    assert.equal(first.outcome, 'throttled', 'a new browser is slowed by the ceiling');
    assert.ok(first.outcome === 'throttled' && first.retryAt - s.clock() <= PER_ACCOUNT.maxWaitMs, 'for at most 30 s');
    s.clock.advance(first.retryAt - s.clock());
    assert.equal((await s.attempt(OWNER_PASSWORD, CLEAN_ADDRESS)).outcome, 'signed_in');
  });

  test('a forged, modified, expired or other-account device cookie gives no exemption from the ceiling', async () => {
    const cases: Array<{ name: string; cookie: (s: Awaited<ReturnType<typeof setup>>) => Promise<string> }> = [
      { name: 'made with another key', cookie: async (s) => deviceCookieAfterSignIn(Buffer.alloc(32, 1), s.sub, undefined, s.clock()) },
      {
        name: 'its MAC changed',
        cookie: async (s) => {
          const real = await s.ownersBrowser();
          return real.slice(0, -1) + (real.endsWith('A') ? 'B' : 'A');
        },
      },
      {
        name: 'its expiry moved later (the MAC covers it)',
        cookie: async (s) => {
          const [nonce, , mac] = (await s.ownersBrowser()).split('.');
          return `${nonce}.${(s.clock() + 1000 * DAY).toString(36)}.${mac}`;
        },
      },
      {
        name: 'expired (180 days after the sign-in that made it)',
        cookie: async (s) => {
          const real = await s.ownersBrowser();
          s.clock.advance(DEVICE_COOKIE_LIFETIME_MS);
          return real;
        },
      },
      {
        name: 'for another account',
        cookie: async (s) => {
          await accounts.createAccount(s.db, s.clock, { email: 'other@example.com', password: 'other-password' });
          const r = await signIn(s.db, HASH_KEY, s.clock, { identifier: 'other@example.com', password: 'other-password', address: '192.0.2.2' }, { key: DEVICE_KEY, cookie: undefined });
          assert.equal(r.outcome, 'signed_in');
          return (r as Extract<SignInResult, { outcome: 'signed_in' }>).deviceCookie!;
        },
      },
      { name: 'not a device cookie at all', cookie: async () => 'x'.repeat(66) },
    ];
    for (const { name, cookie: make } of cases) {
      const s = await setup();
      const cookie = await make(s);
      await s.pushCeiling();
      s.clock.advance(SECOND);
      await s.attack(1);
      assert.equal((await s.attempt(OWNER_PASSWORD, CLEAN_ADDRESS, cookie)).outcome, 'throttled', `a cookie ${name} is treated as none`);
    }
  });

  test('a browser keeps a device cookie for each account it signed in to (a shared computer): both are exempt', async () => {
    const s = await setup();
    let cookie = await s.ownersBrowser();
    await accounts.createAccount(s.db, s.clock, { email: 'other@example.com', password: 'other-password' });
    const other = await signIn(s.db, HASH_KEY, s.clock, { identifier: 'other@example.com', password: 'other-password', address: '192.0.2.1' }, { key: DEVICE_KEY, cookie });
    assert.equal(other.outcome, 'signed_in');
    cookie = (other as Extract<SignInResult, { outcome: 'signed_in' }>).deviceCookie!;
    await s.pushCeiling();
    s.clock.advance(SECOND);
    await s.attack(1);
    assert.equal((await s.attempt(OWNER_PASSWORD, CLEAN_ADDRESS, cookie)).outcome, 'signed_in', 'the first account is still known after the second signed in');
  });

  test('"so a stolen cookie cannot be used to guess freely": failures with a device cookie count against it, from any address; the 10th locks that cookie out for 15 minutes', async () => {
    const s = await setup();
    const stolen = await s.ownersBrowser();
    let last: SignInResult | undefined;
    for (let i = 1; i <= 10; i++) {
      last = await s.attempt(`guess-${i}`, `198.51.100.${i}`, stolen);
      assert.equal(last.outcome, 'wrong_credentials', `failure ${i}`);
      if (last.outcome === 'wrong_credentials' && last.retryAt !== undefined && i < 10) s.clock.advance(last.retryAt - s.clock());
    }
    assert.ok(last?.outcome === 'wrong_credentials' && last.locked, 'the 10th failure locks the device cookie');
    const refused = await s.attempt(OWNER_PASSWORD, CLEAN_ADDRESS, stolen);
    assert.equal(refused.outcome, 'throttled', 'even the right password, from a clean address, is refused with that cookie');
    assert.equal(refused.outcome === 'throttled' && refused.retryAt - s.clock(), 15 * MINUTE);
    s.clock.advance(15 * MINUTE);
    assert.equal((await s.attempt(OWNER_PASSWORD, CLEAN_ADDRESS, stolen)).outcome, 'signed_in', 'the lock ends after 15 minutes');
  });

  test('failures with a device cookie are counted against that device, not the account\'s ceiling: a browser without it is not held back by them', async () => {
    const s = await setup();
    const stolen = await s.ownersBrowser();
    for (let i = 1; i <= 10; i++) {
      const r = await s.attempt(`guess-${i}`, `198.51.100.${i}`, stolen);
      if (r.outcome === 'wrong_credentials' && r.retryAt !== undefined) s.clock.advance(r.retryAt - s.clock());
    }
    assert.equal((await s.attempt(OWNER_PASSWORD, CLEAN_ADDRESS)).outcome, 'signed_in');
  });

  test('"an operator can unlock": unlockAccount also lifts a device cookie\'s lock', async () => {
    const s = await setup();
    const stolen = await s.ownersBrowser();
    for (let i = 1; i <= 10; i++) {
      const r = await s.attempt(`guess-${i}`, `198.51.100.${i}`, stolen);
      if (r.outcome === 'wrong_credentials' && r.retryAt !== undefined && i < 10) s.clock.advance(r.retryAt - s.clock());
    }
    assert.equal((await s.attempt(OWNER_PASSWORD, CLEAN_ADDRESS, stolen)).outcome, 'throttled');
    assert.ok((await unlockAccount(s.db, s.sub)) >= 1);
    assert.equal((await s.attempt(OWNER_PASSWORD, CLEAN_ADDRESS, stolen)).outcome, 'signed_in');
  });

  test('"Keep the equal-time answer for unknown accounts": an unknown account with a device cookie is answered and throttled exactly as without one', async () => {
    const s = await setup();
    const cookie = await s.ownersBrowser();
    const outcomes = async (address: string, withCookie: string | undefined) => {
      const seen: string[] = [];
      for (let i = 1; i <= 11; i++) {
        const r = await signIn(s.db, HASH_KEY, s.clock, { identifier: 'ghost@example.com', password: 'guess', address }, { key: DEVICE_KEY, cookie: withCookie });
        seen.push(`${r.outcome}:${r.outcome === 'signed_in' || r.retryAt === undefined ? '-' : r.retryAt - s.clock()}`);
      }
      return seen;
    };
    assert.deepEqual(await outcomes('198.51.100.1', cookie), await outcomes('198.51.100.2', undefined));
  });

  test('a device cookie tells nobody but the server which account it is for: it holds neither the sub nor the e-mail', async () => {
    const s = await setup();
    const cookie = await s.ownersBrowser();
    assert.ok(!cookie.includes(s.sub) && !cookie.includes(s.sub.replaceAll('-', '')), 'no sub');
    assert.ok(!cookie.toLowerCase().includes('owner'), 'no e-mail');
    assert.match(cookie, /^[A-Za-z0-9_-]{22}\.[0-9a-z]+\.[A-Za-z0-9_-]{43}$/, 'a nonce, an expiry and a MAC');
  });

  test('HTTP: the probe\'s scenario end to end — the owner\'s browser that signed in before gets in (303) during the attack; a new browser gets 429', async () => {
    const flow = await flowSetup(await open());
    const owner = new TinyBrowser(flow);
    const first = await owner.signIn();
    assert.equal(first.statusCode, 303, first.body);
    const device = first.cookies.find((c) => c.name === 'signet_device');
    assert.ok(device, 'sign-in sets the device cookie');
    assert.equal(device.httpOnly, true);
    assert.equal(device.sameSite, 'Lax');
    assert.equal(device.path, '/');
    assert.equal(device.domain, undefined, 'host-only');
    assert.equal(device.maxAge, DEVICE_COOKIE_LIFETIME_MS / 1000, '180 days');
    owner.cookies.delete('signet_session');

    const attacker = (n: number) =>
      signIn(flow.deps.db, flow.deps.keys.tokenHash, flow.clock, { identifier: EMAIL, password: `guess-${n}`, address: `198.18.0.${n}` }, { key: flow.deps.keys.deviceCookie, cookie: undefined });
    for (let n = 1; n <= 24; n++) await attacker(n);
    for (let n = 25; n <= 60; n++) {
      flow.clock.advance(SECOND);
      await attacker(n);
      if (n % 12 === 0) {
        const again = await owner.signIn();
        assert.equal(again.statusCode, 303, `the known browser gets in (second ${n - 24})`);
        owner.cookies.delete('signet_session');
      }
    }
    const stranger = new TinyBrowser(flow);
    const slowed = await stranger.signIn();
    assert.equal(slowed.statusCode, 429, 'a browser without the device cookie is slowed');
    assert.match(slowed.body, /Too many failed sign-in attempts/);
    assert.ok(!flow.logs.some((line) => line.includes(device.value)), 'the device cookie is not logged');
  });

  test('HTTP on https: the device cookie is __Host-signet_device, Secure, Path=/, no Domain', async () => {
    const flow = await flowSetup(await open(), { SIGNET_BASE_URL: 'https://signet.test', SIGNET_ALT_BASE_URL: 'https://alt.signet.test' });
    const res = await new TinyBrowser(flow).signIn(undefined, EMAIL, PASSWORD);
    assert.equal(res.statusCode, 303, res.body);
    const device = res.cookies.find((c) => c.name === '__Host-signet_device');
    assert.ok(device, `set (saw ${res.cookies.map((c) => c.name).join(', ')})`);
    assert.equal(device.secure, true);
    assert.equal(device.path, '/');
    assert.equal(device.domain, undefined);
  });
});
