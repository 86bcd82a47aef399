import assert from 'node:assert/strict';
import { test } from 'node:test';
import { manualClock } from '../../src/config/clock.ts';
import * as accounts from '../../src/accounts/accounts.ts';
import { findSession, startSession } from '../../src/accounts/sessions.ts';
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

  test('set-password ends every session of the person', async () => {
    const { db } = await open();
    const clock = manualClock();
    const key = Buffer.alloc(32, 1);
    const profile = await accounts.createAccount(db, clock, { email: 'r@example.com', password: 'first-password' });
    const other = await accounts.createAccount(db, clock, { email: 'r2@example.com', password: 'first-password' });
    const sessions = [await startSession(db, key, clock, { sub: profile.sub, origin: 'https://a.example' }), await startSession(db, key, clock, { sub: profile.sub, origin: 'https://b.example' })];
    const untouched = await startSession(db, key, clock, { sub: other.sub, origin: 'https://a.example' });
    await accounts.setPassword(db, clock, profile.sub, 'second-password');
    assert.equal(await findSession(db, key, clock, sessions[0]!.id, 'https://a.example'), undefined);
    assert.equal(await findSession(db, key, clock, sessions[1]!.id, 'https://b.example'), undefined);
    assert.ok(await findSession(db, key, clock, untouched.id, 'https://a.example'), "another person's session stays");
  });

  test('enable undoes disable', async () => {
    const { db } = await open();
    const clock = manualClock();
    const profile = await accounts.createAccount(db, clock, { email: 'e@example.com', password: 'password-1' });
    assert.equal((await accounts.disableAccount(db, clock, profile.sub)).disabled, true);
    assert.equal((await accounts.enableAccount(db, clock, profile.sub)).disabled, false);
    assert.ok(await accounts.checkCredentials(db, 'e@example.com', 'password-1'));
  });

  test('find by e-mail or phone compares as sign-in does', async () => {
    const { db } = await open();
    const profile = await accounts.createAccount(db, manualClock(), { email: 'f@example.com', phone: '+4915112345679', password: 'password-1' });
    assert.equal((await accounts.findAccountByEmail(db, ' F@Example.com '))?.sub, profile.sub);
    assert.equal((await accounts.findAccountByPhone(db, '+49 151 12345679'))?.sub, profile.sub);
    assert.equal(await accounts.findAccountByEmail(db, 'not-an-email'), undefined);
  });

  test('update: a changed e-mail (phone) is unverified again unless it says verified; an unchanged one stays verified', async () => {
    const { db } = await open();
    const clock = manualClock();
    const { sub } = await accounts.createAccount(db, clock, { email: 'g@example.com', phone: '+4915112340010', emailVerified: true, phoneVerified: true, password: 'password-1' });
    const same = await accounts.updateAccount(db, clock, sub, { email: 'G@example.com', name: 'G' });
    assert.equal(same.email_verified, true, 'the same address, differently written, is not a change');
    const moved = await accounts.updateAccount(db, clock, sub, { email: 'h@example.com', phone: '+4915112340011' });
    assert.deepEqual([moved.email, moved.email_verified, moved.phone_number, moved.phone_number_verified], ['h@example.com', false, '+4915112340011', false]);
    const verified = await accounts.updateAccount(db, clock, sub, { email: 'i@example.com', emailVerified: true });
    assert.equal(verified.email_verified, true);
    assert.ok(await accounts.checkCredentials(db, 'i@example.com', 'password-1'), 'the password is untouched');
  });

  test('update and create refuse what create refuses', async () => {
    const { db } = await open();
    const clock = manualClock();
    await accounts.createAccount(db, clock, { email: 'taken@example.com', phone: '+4915112340020', password: 'password-1' });
    const { sub } = await accounts.createAccount(db, clock, { email: 'j@example.com', password: 'password-1' });
    const cases: Array<[accounts.AccountChanges, accounts.AccountErrorCode]> = [
      [{ email: 'nope' }, 'invalid_email'],
      [{ email: 'TAKEN@example.com' }, 'email_taken'],
      [{ phone: '+49 151 12340020' }, 'phone_taken'],
      [{ phone: '555' }, 'invalid_phone'],
      [{ picture: 'http://img.example/p.png' }, 'invalid_picture'],
      [{ picture: 'not a url' }, 'invalid_picture'],
      [{ name: 'n'.repeat(201) }, 'invalid_name'],
      [{ email: '' }, 'no_identifier'],
    ];
    for (const [changes, code] of cases) {
      await assert.rejects(accounts.updateAccount(db, clock, sub, changes), (e: unknown) => e instanceof accounts.AccountError && e.code === code, JSON.stringify(changes));
    }
    await assert.rejects(accounts.createAccount(db, clock, { email: 'k@example.com', picture: 'http://img.example/p.png', password: 'password-1' }), (e: unknown) => e instanceof accounts.AccountError && e.code === 'invalid_picture');
    await assert.rejects(accounts.updateAccount(db, clock, 'no-such-sub', { name: 'x' }), (e: unknown) => e instanceof accounts.AccountError && e.code === 'not_found');
    assert.equal((await accounts.findAccount(db, sub))?.email, 'j@example.com', 'nothing written');
  });

  test('delete removes the account with its sessions; a second delete is not_found', async () => {
    const { db } = await open();
    const clock = manualClock();
    const { sub } = await accounts.createAccount(db, clock, { email: 'l@example.com', password: 'password-1' });
    await startSession(db, Buffer.alloc(32, 2), clock, { sub, origin: 'https://a.example' });
    await accounts.deleteAccount(db, sub);
    assert.equal(await accounts.findAccount(db, sub), undefined);
    assert.equal((await db.selectFrom('sessions').select('sub').where('sub', '=', sub).execute()).length, 0);
    await assert.rejects(accounts.deleteAccount(db, sub), (e: unknown) => e instanceof accounts.AccountError && e.code === 'not_found');
  });
});
