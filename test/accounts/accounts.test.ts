import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock } from '../../src/config/clock.ts';
import * as accounts from '../../src/accounts/accounts.ts';
import { forEachDatabase } from '../helpers/databases.ts';

forEachDatabase('accounts', (open) => {
  test('sub "is a UUID for recent accounts and a numeric string for accounts that predate a schema migration"', async () => {
    const { db } = await open();
    const clock = manualClock();
    const recent = await accounts.createAccount(db, clock, { email: 'new@example.com', password: 'password-1' });
    assert.match(recent.sub, /^[0-9a-f-]{36}$/);
    const legacyA = await accounts.createAccount(db, clock, { email: 'old1@example.com', password: 'password-1', legacyNumericId: true });
    const legacyB = await accounts.createAccount(db, clock, { email: 'old2@example.com', password: 'password-1', legacyNumericId: true });
    assert.match(legacyA.sub, /^\d+$/);
    assert.equal(BigInt(legacyB.sub), BigInt(legacyA.sub) + 1n);
  });

  test('e-mail and phone are unique per account; e-mail compared case-insensitively, phone as E.164', async () => {
    const { db } = await open();
    const clock = manualClock();
    await accounts.createAccount(db, clock, { email: 'Person@Example.com', phone: '+44 20 7946 0958', password: 'password-1' });
    await assert.rejects(accounts.createAccount(db, clock, { email: 'person@example.COM', password: 'password-1' }), (e: unknown) => e instanceof accounts.AccountError && e.code === 'email_taken');
    await assert.rejects(accounts.createAccount(db, clock, { phone: '+442079460958', password: 'password-1' }), (e: unknown) => e instanceof accounts.AccountError && e.code === 'phone_taken');
    assert.equal((await accounts.listAccounts(db)).length, 1);
  });

  test('profile fields are each optional; the password hash is argon2id and never shown', async () => {
    const { db } = await open();
    const profile = await accounts.createAccount(db, manualClock(), { phone: '+4915112345678', password: 'password-1', phoneVerified: true });
    assert.equal(profile.email, null);
    assert.equal(profile.name, null);
    assert.equal(profile.phone_number_verified, true);
    assert.ok(!('password_hash' in profile));
    const row = await db.selectFrom('users').select('password_hash').where('sub', '=', profile.sub).executeTakeFirstOrThrow();
    assert.match(row.password_hash, /^\$argon2id\$/);
  });

  test('checkCredentials signs in by e-mail or phone; a wrong password, unknown account or disabled account fails', async () => {
    const { db } = await open();
    const clock = manualClock();
    const profile = await accounts.createAccount(db, clock, { email: 'p@example.com', phone: '+4915112345678', password: 'right-password' });
    assert.deepEqual(await accounts.checkCredentials(db, 'P@example.com', 'right-password'), { sub: profile.sub });
    assert.deepEqual(await accounts.checkCredentials(db, '+49 151 12345678', 'right-password'), { sub: profile.sub });
    assert.equal(await accounts.checkCredentials(db, 'p@example.com', 'wrong-password'), undefined);
    assert.equal(await accounts.checkCredentials(db, 'nobody@example.com', 'right-password'), undefined);
    await accounts.disableAccount(db, clock, profile.sub);
    assert.equal(await accounts.checkCredentials(db, 'p@example.com', 'right-password'), undefined);
  });

  test('set-password replaces the password', async () => {
    const { db } = await open();
    const clock = manualClock();
    const profile = await accounts.createAccount(db, clock, { email: 'q@example.com', password: 'first-password' });
    await accounts.setPassword(db, clock, profile.sub, 'second-password');
    assert.equal(await accounts.checkCredentials(db, 'q@example.com', 'first-password'), undefined);
    assert.ok(await accounts.checkCredentials(db, 'q@example.com', 'second-password'));
  });
});
