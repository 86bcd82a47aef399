// Second factors in the domain, on SQLite and PostgreSQL (issue 19): the TOTP window and replay, the
// secret sealed at rest, recovery codes used once, the code throttle, the half-signed-in state's
// 5 minutes, the step-up window, remembered browsers, and an operator's reset.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts.ts';
import { listFactors, resetFactors } from '../../src/accounts/factors/factors.ts';
import { newRecoveryCodes, useRecoveryCode } from '../../src/accounts/factors/recovery-codes.ts';
import { isRememberedBrowser, rememberBrowser } from '../../src/accounts/factors/remembered-browser.ts';
import { beginSecondStep, checkCode, findSecondStep, finishSecondStep, forgetExpiredSecondSteps, secondStepDue, type SecondStepContext } from '../../src/accounts/factors/second-step.ts';
import { countPasskeys } from '../../src/accounts/factors/passkeys.ts';
import { insertPasskey } from '../../src/accounts/factors/passkeys.store.ts';
import { isRecentlyChecked, requireRecentCheck } from '../../src/accounts/factors/step-up.ts';
import { beginTotpSetup, confirmTotpSetup, openSecret, totpCode, verifyTotp } from '../../src/accounts/factors/totp.ts';
import { findSession, startSession } from '../../src/accounts/sessions.ts';
import { DAY, MINUTE, SECOND, manualClock } from '../../src/config/clock.ts';
import { forEachDatabase, type TestDatabase } from '../helpers/databases.ts';

const HASH_KEY = Buffer.alloc(32, 1);
const FACTOR_KEY = Buffer.alloc(32, 2);
const REMEMBER_KEY = Buffer.alloc(32, 3);
const ORIGIN = 'https://id.example';

async function setUp(database: TestDatabase, mfa: 'optional' | 'required' = 'optional') {
  // A moment in the middle of a 30-second step, so ±1 step is exact.
  const clock = manualClock(Date.UTC(2026, 0, 1, 12, 0, 15));
  const ctx: SecondStepContext = { db: database.db, clock, hashKey: HASH_KEY, factorKey: FACTOR_KEY, passkeys: { count: countPasskeys }, mfa };
  const person = await createAccount(database.db, clock, { email: `p${Math.random().toString(36).slice(2)}@example.com`, password: 'a good long password' });
  return { clock, ctx, sub: person.sub };
}

/** Sets up and turns on an authenticator app; returns its base32 key. */
async function withApp(f: Awaited<ReturnType<typeof setUp>>): Promise<string> {
  const setup = await beginTotpSetup(f.ctx.db, FACTOR_KEY, f.clock, { sub: f.sub, issuer: 'Signet', label: 'p@example.com' });
  assert.equal(await confirmTotpSetup(f.ctx.db, FACTOR_KEY, f.clock, f.sub, totpCode(setup.secretBase32, f.clock())), 'enabled');
  return setup.secretBase32;
}

forEachDatabase('second factors', (open) => {
  test('TOTP window: "a code is accepted in the current step and one step either side" — not two steps away', async () => {
    const f = await setUp(await open());
    const key = await withApp(f);
    f.clock.advance(10 * MINUTE);
    const at = (offsetSteps: number) => totpCode(key, f.clock() + offsetSteps * 30 * SECOND);
    assert.equal(await verifyTotp(f.ctx.db, FACTOR_KEY, f.clock, f.sub, at(-2)), false, 'two steps ago');
    assert.equal(await verifyTotp(f.ctx.db, FACTOR_KEY, f.clock, f.sub, at(2)), false, 'two steps ahead');
    assert.equal(await verifyTotp(f.ctx.db, FACTOR_KEY, f.clock, f.sub, at(-1)), true, 'one step ago');
    assert.equal(await verifyTotp(f.ctx.db, FACTOR_KEY, f.clock, f.sub, at(0)), true, 'this step');
    assert.equal(await verifyTotp(f.ctx.db, FACTOR_KEY, f.clock, f.sub, at(1)), true, 'one step ahead');
  });

  test('TOTP replay: "a code that was accepted once is never accepted again" — nor an earlier step\'s code, and of two requests at once exactly one wins', async () => {
    const f = await setUp(await open());
    const key = await withApp(f);
    assert.equal(await verifyTotp(f.ctx.db, FACTOR_KEY, f.clock, f.sub, totpCode(key, f.clock())), false, 'the set-up code itself was used');
    f.clock.advance(30 * SECOND);
    const code = totpCode(key, f.clock());
    const both = await Promise.all([verifyTotp(f.ctx.db, FACTOR_KEY, f.clock, f.sub, code), verifyTotp(f.ctx.db, FACTOR_KEY, f.clock, f.sub, code)]);
    assert.deepEqual(both.sort(), [false, true]);
    f.clock.advance(20 * SECOND);
    assert.equal(await verifyTotp(f.ctx.db, FACTOR_KEY, f.clock, f.sub, code), false, 'still inside its window, but used');
    assert.equal(await verifyTotp(f.ctx.db, FACTOR_KEY, f.clock, f.sub, totpCode(key, f.clock() - 60 * SECOND)), false);
  });

  test('the secret is "stored encrypted with a key derived from SIGNET_SECRET": never in plaintext, and unreadable under another key or for another account', async () => {
    const f = await setUp(await open());
    const key = await withApp(f);
    const [row] = await f.ctx.db.selectFrom('second_factors').selectAll().where('sub', '=', f.sub).execute();
    assert.ok(row && !row.secret_enc.includes(key));
    assert.match(row.secret_enc, /^v1\./);
    assert.throws(() => openSecret(Buffer.alloc(32, 9), f.sub, row.secret_enc));
    assert.throws(() => openSecret(FACTOR_KEY, 'someone-else', row.secret_enc));
    assert.equal(openSecret(FACTOR_KEY, f.sub, row.secret_enc).length, 20);
  });

  test('recovery code once: each code works a single time (two at once: one wins), is another person\'s nothing, and a new set ends the old', async () => {
    const f = await setUp(await open());
    const other = await createAccount(f.ctx.db, f.clock, { email: 'other@example.com', password: 'a good long password' });
    const codes = await newRecoveryCodes(f.ctx.db, HASH_KEY, f.clock, f.sub);
    assert.equal(codes.length, 10);
    assert.equal(await useRecoveryCode(f.ctx.db, HASH_KEY, f.clock, other.sub, codes[0]!), false);
    const both = await Promise.all([useRecoveryCode(f.ctx.db, HASH_KEY, f.clock, f.sub, codes[0]!), useRecoveryCode(f.ctx.db, HASH_KEY, f.clock, f.sub, ` ${codes[0]!.toUpperCase()} `)]);
    assert.deepEqual(both.sort(), [false, true]);
    assert.equal(await useRecoveryCode(f.ctx.db, HASH_KEY, f.clock, f.sub, codes[1]!.replace('-', '')), true, 'without the dash');
    const fresh = await newRecoveryCodes(f.ctx.db, HASH_KEY, f.clock, f.sub);
    assert.equal(await useRecoveryCode(f.ctx.db, HASH_KEY, f.clock, f.sub, codes[2]!), false, 'the old set stopped working');
    assert.equal(await useRecoveryCode(f.ctx.db, HASH_KEY, f.clock, f.sub, fresh[2]!), true);
  });

  test('throttle on wrong codes: 5 from one address → growing waits; over many addresses the account only slows (at most a minute), never locks', async () => {
    const f = await setUp(await open());
    const key = await withApp(f);
    const wrong = () => ['000000', '111111', '222222'].find((c) => ![-30, 0, 30].some((d) => totpCode(key, f.clock() + d * SECOND) === c))!;
    for (let i = 1; i <= 4; i++) assert.deepEqual(await checkCode(f.ctx, f.sub, wrong(), '192.0.2.1'), { outcome: 'wrong', retryAt: undefined, locked: false });
    const fifth = await checkCode(f.ctx, f.sub, wrong(), '192.0.2.1');
    assert.equal(fifth.outcome === 'wrong' && fifth.retryAt! - f.clock(), 5 * SECOND);
    assert.equal((await checkCode(f.ctx, f.sub, totpCode(key, f.clock() + 30 * SECOND), '192.0.2.1')).outcome, 'throttled');
    // Strangers who know the password, from many addresses: the account's ceiling slows, capped at a minute.
    let longest = 0;
    for (let i = 0; i < 30; i++) {
      f.clock.advance(2 * MINUTE);
      const r = await checkCode(f.ctx, f.sub, wrong(), `198.51.100.${i + 1}`);
      assert.notEqual(r.outcome, 'accepted');
      if (r.outcome === 'wrong' && r.retryAt !== undefined) longest = Math.max(longest, r.retryAt - f.clock());
      if (r.outcome === 'wrong') assert.equal(r.locked, false);
    }
    assert.ok(longest > 0 && longest <= MINUTE, `longest wait ${longest} ms`);
    // The owner, after the wait, from a fresh address: gets in.
    f.clock.advance(MINUTE + SECOND);
    assert.equal((await checkCode(f.ctx, f.sub, totpCode(key, f.clock() + 30 * SECOND), '203.0.113.9')).outcome, 'accepted');
  });

  test('half-signed-in state: found only on its origin, "the step has its own 5-minute limit", and it finishes once', async () => {
    const f = await setUp(await open());
    await withApp(f);
    assert.equal(await secondStepDue(f.ctx, f.sub), 'verify');
    const { id } = await beginSecondStep(f.ctx, { sub: f.sub, purpose: 'verify', origin: ORIGIN, requestId: 'req' });
    assert.equal((await findSecondStep(f.ctx, id, ORIGIN))?.requestId, 'req');
    assert.equal(await findSecondStep(f.ctx, id, 'https://alt.example'), undefined);
    f.clock.advance(5 * MINUTE);
    assert.equal(await findSecondStep(f.ctx, id, ORIGIN), undefined);
    const again = await beginSecondStep(f.ctx, { sub: f.sub, purpose: 'verify', origin: ORIGIN });
    assert.deepEqual(await Promise.all([finishSecondStep(f.ctx, again.id, ORIGIN), finishSecondStep(f.ctx, again.id, ORIGIN)]).then((r) => r.sort()), [false, true]);
  });

  test('SIGNET_MFA: optional asks nothing of an account without a factor; required asks it to enrol', async () => {
    const optional = await setUp(await open());
    assert.equal(await secondStepDue(optional.ctx, optional.sub), undefined);
    const required = await setUp(await open(), 'required');
    assert.equal(await secondStepDue(required.ctx, required.sub), 'enrol');
    // A passkey is a factor too: with one, the step is 'verify' (the passkey, or a code).
    await insertPasskey(required.ctx.db, { id: 'pk-1', sub: required.sub, credential_id: 'Y3JlZA', public_key: 'a2V5', counter: 0, transports: null, rp_id: 'id.example', name: 'Phone', created_at: required.clock(), last_used_at: null });
    assert.equal(await secondStepDue(required.ctx, required.sub), 'verify');
  });

  test('step-up: a session is "recently checked" for 10 minutes after sign-in, then the confirm page is required', async () => {
    const f = await setUp(await open());
    const { id } = await startSession(f.ctx.db, HASH_KEY, f.clock, { sub: f.sub, origin: ORIGIN });
    const session = (await findSession(f.ctx.db, HASH_KEY, f.clock, id, ORIGIN))!;
    assert.equal(isRecentlyChecked(session, f.clock()), true);
    f.clock.advance(10 * MINUTE - 1);
    assert.equal(requireRecentCheck(session, f.clock(), '/account/two-step/turn-off'), undefined);
    f.clock.advance(1);
    assert.equal(requireRecentCheck(session, f.clock(), '/account/two-step/turn-off'), '/account/confirm?return=%2Faccount%2Ftwo-step%2Fturn-off');
    assert.equal(isRecentlyChecked({ checkedAt: null }, f.clock()), false, 'a session from before step-up');
  });

  test('remembered browser: good for 30 days for that account and those factors only', async () => {
    const f = await setUp(await open());
    const cookie = rememberBrowser(REMEMBER_KEY, f.sub, ['f1'], undefined, f.clock());
    assert.equal(isRememberedBrowser(REMEMBER_KEY, f.sub, ['f1'], cookie, f.clock()), true);
    assert.equal(isRememberedBrowser(REMEMBER_KEY, 'another-sub', ['f1'], cookie, f.clock()), false);
    assert.equal(isRememberedBrowser(REMEMBER_KEY, f.sub, ['f2'], cookie, f.clock()), false, 'factors reset and set up again');
    assert.equal(isRememberedBrowser(REMEMBER_KEY, f.sub, ['f1'], cookie, f.clock() + 30 * DAY), false);
    assert.equal(isRememberedBrowser(REMEMBER_KEY, f.sub, ['f1'], cookie.replace(/.$/, (c) => (c === 'A' ? 'B' : 'A')), f.clock()), false);
  });

  test('a set-up never finished is forgotten after a day; an expired half-signed-in state is swept', async () => {
    const f = await setUp(await open());
    await beginTotpSetup(f.ctx.db, FACTOR_KEY, f.clock, { sub: f.sub, issuer: 'Signet', label: 'x' });
    await beginSecondStep(f.ctx, { sub: f.sub, purpose: 'verify', origin: ORIGIN });
    f.clock.advance(5 * MINUTE);
    assert.equal(await forgetExpiredSecondSteps(f.ctx.db, f.clock), 1, 'the state, not yet the set-up');
    f.clock.advance(DAY);
    assert.equal(await forgetExpiredSecondSteps(f.ctx.db, f.clock), 1);
    assert.deepEqual(await f.ctx.db.selectFrom('second_factors').selectAll().execute(), []);
  });

  test('admin reset: "every factor and recovery code removed, sessions ended" (and a half-signed-in state)', async () => {
    const f = await setUp(await open());
    await withApp(f);
    await newRecoveryCodes(f.ctx.db, HASH_KEY, f.clock, f.sub);
    await startSession(f.ctx.db, HASH_KEY, f.clock, { sub: f.sub, origin: ORIGIN });
    const step = await beginSecondStep(f.ctx, { sub: f.sub, purpose: 'verify', origin: ORIGIN });
    const listed = await listFactors(f.ctx.db, f.sub);
    assert.deepEqual(listed.factors.map((x) => [x.kind, x.name]), [['totp', 'Authenticator app']]);
    assert.equal(listed.recoveryCodesLeft, 10);
    assert.deepEqual(await resetFactors(f.ctx.db, f.sub), { factorsRemoved: 1, recoveryCodesRemoved: 10, sessionsEnded: 1 });
    assert.deepEqual(await listFactors(f.ctx.db, f.sub), { factors: [], recoveryCodesLeft: 0 });
    assert.equal(await findSecondStep(f.ctx, step.id, ORIGIN), undefined);
    assert.equal(await secondStepDue(f.ctx, f.sub), undefined);
  });
});
