// Sign-in sessions in the database: keyed-hash ids bound to the served origin, expiry, disabled accounts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAY, manualClock } from '../../src/config/clock.ts';
import * as accounts from '../../src/accounts/accounts.ts';
import { endSession, findSession, forgetExpiredSessions, SESSION_LIFETIME_MS, startSession } from '../../src/accounts/sessions.ts';
import { forEachDatabase } from '../helpers/databases.ts';

const KEY = Buffer.alloc(32, 3);
const A = 'https://id.example';
const B = 'https://login.example';

forEachDatabase('sessions', (open) => {
  test('a session is found on its own host only, and never by its stored hash', async () => {
    const { db } = await open();
    const clock = manualClock();
    const { sub } = await accounts.createAccount(db, clock, { email: 's@example.com', password: 'password-1' });
    const { id } = await startSession(db, KEY, clock, { sub, origin: A });
    assert.equal(id.length, 44);
    const found = await findSession(db, KEY, clock, id, A);
    // issue 28: a session also knows when and how the person signed in (auth_time, amr) and its public sid
    assert.deepEqual({ ...found, sid: typeof found?.sid }, { sub, expiresAt: clock() + SESSION_LIFETIME_MS, checkedAt: clock(), authTime: clock(), amr: ['pwd'], sid: 'string' });
    assert.equal(await findSession(db, KEY, clock, id, B), undefined);
    const row = await db.selectFrom('sessions').selectAll().executeTakeFirstOrThrow();
    assert.notEqual(row.id_hash, id);
    assert.equal(await findSession(db, KEY, clock, row.id_hash, A), undefined);
  });

  test('"its id rotated at sign-in": starting a session ends the previous one', async () => {
    const { db } = await open();
    const clock = manualClock();
    const { sub } = await accounts.createAccount(db, clock, { email: 't@example.com', password: 'password-1' });
    const first = await startSession(db, KEY, clock, { sub, origin: A });
    const second = await startSession(db, KEY, clock, { sub, origin: A, previousId: first.id });
    assert.notEqual(first.id, second.id);
    assert.equal(await findSession(db, KEY, clock, first.id, A), undefined);
    assert.ok(await findSession(db, KEY, clock, second.id, A));
    await endSession(db, KEY, second.id, A);
    assert.equal(await findSession(db, KEY, clock, second.id, A), undefined);
  });

  test('sessions expire after 14 days; a disabled account is signed out', async () => {
    const { db } = await open();
    const clock = manualClock();
    const { sub } = await accounts.createAccount(db, clock, { email: 'u@example.com', password: 'password-1' });
    const { id } = await startSession(db, KEY, clock, { sub, origin: A });
    clock.advance(14 * DAY - 1);
    assert.ok(await findSession(db, KEY, clock, id, A));
    clock.advance(1);
    assert.equal(await findSession(db, KEY, clock, id, A), undefined);
    clock.advance(1);
    assert.equal(await forgetExpiredSessions(db, clock), 1, 'expired sessions are swept');
    const again = await startSession(db, KEY, clock, { sub, origin: A });
    await accounts.disableAccount(db, clock, sub);
    assert.equal(await findSession(db, KEY, clock, again.id, A), undefined);
  });
});
