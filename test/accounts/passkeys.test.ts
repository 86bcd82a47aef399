// Passkeys in the domain, on SQLite and PostgreSQL (issue 19 item 3), answered by a software
// authenticator with a real key pair: challenges single use and five minutes on the injected clock,
// unknown credentials refused, counter and last-used time recorded, removal, origin and RP ID checked,
// user verification for a passkey on its own, disabled accounts refused, the second-step form.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import * as accounts from '../../src/accounts/accounts.ts';
import {
  countPasskeys,
  finishPasskeyRegistration,
  forgetExpiredPasskeyChallenges,
  listPasskeys,
  PasskeyError,
  relyingPartyFor,
  removePasskey,
  startPasskeyAuthentication,
  startPasskeyRegistration,
  verifyPasskeyAssertion,
  type PasskeyContext,
  type PasskeyErrorCode,
  type RelyingParty,
} from '../../src/accounts/factors/passkeys.ts';
import { manualClock, MINUTE, SECOND } from '../../src/config/clock.ts';
import { forEachDatabase, type TestDatabase } from '../helpers/databases.ts';
import { SoftwareAuthenticator } from '../helpers/software-authenticator.ts';

const HASH_KEY = Buffer.alloc(32, 7);
const RP: RelyingParty = relyingPartyFor(new URL('https://id.example'), 'Signet')!;
const ALT: RelyingParty = relyingPartyFor(new URL('https://login.example.net'), 'Signet')!;

async function refusedWith(code: PasskeyErrorCode, attempt: Promise<unknown>): Promise<void> {
  await assert.rejects(attempt, (error: unknown) => {
    assert.ok(error instanceof PasskeyError, `a PasskeyError, not ${String(error)}`);
    assert.equal(error.code, code, error.message);
    return true;
  });
}

function setUp(database: TestDatabase) {
  const clock = manualClock();
  const ctx: PasskeyContext = { db: database.db, dialect: database.dialect, clock, hashKey: HASH_KEY };
  let people = 0;
  async function person(): Promise<string> {
    const { sub } = await accounts.createAccount(database.db, clock, { email: `pk-${++people}@example.com`, password: 'a passkey test password' });
    return sub;
  }
  /** Adds a passkey made by `authenticator` to the person's account. */
  async function register(sub: string, authenticator: SoftwareAuthenticator, name = 'Laptop', rp = RP) {
    const options = await startPasskeyRegistration(ctx, rp, { sub, userName: 'person', displayName: 'Person' });
    return finishPasskeyRegistration(ctx, rp, sub, { name, response: authenticator.register(options, rp.origin), locale: 'en' });
  }
  async function signInOptions(rp = RP) {
    return startPasskeyAuthentication(ctx, rp);
  }
  return { clock, ctx, person, register, signInOptions };
}

forEachDatabase('passkeys', (open) => {
  test('adding a passkey: "discoverable" (residentKey required), user verification preferred; listed by name with its dates and never its key; a security notification', async () => {
    const { ctx, person, register } = setUp(await open());
    const sub = await person();
    const options = await startPasskeyRegistration(ctx, RP, { sub, userName: 'pk@example.com', displayName: 'Pat' });
    assert.equal(options.rp.id, 'id.example');
    assert.equal(options.authenticatorSelection?.residentKey, 'required');
    assert.equal(options.authenticatorSelection?.userVerification, 'preferred');
    assert.equal(options.attestation, 'none');
    const added = await register(sub, new SoftwareAuthenticator(), '  Work laptop  ');
    assert.equal(added.name, 'Work laptop');
    const listed = await listPasskeys(ctx.db, sub);
    assert.deepEqual(listed, [{ id: added.id, kind: 'passkey', name: 'Work laptop', rpId: 'id.example', createdAt: ctx.clock(), lastUsedAt: null }]);
    assert.equal(await countPasskeys(ctx.db, sub), 1);
    const notes = await ctx.db.selectFrom('notifications').select(['category', 'title', 'body']).where('sub', '=', sub).execute();
    assert.deepEqual(notes.map((n) => [n.category, n.title]), [['security', 'A passkey was added to your account']]);
    assert.match(notes[0]!.body, /Work laptop/);
  });

  test('a registration names the passkey: an empty or too long name is refused before anything is kept', async () => {
    const { ctx, person, register } = setUp(await open());
    const sub = await person();
    await refusedWith('invalid_name', register(sub, new SoftwareAuthenticator(), '   '));
    await refusedWith('invalid_name', register(sub, new SoftwareAuthenticator(), 'x'.repeat(61)));
    assert.equal(await countPasskeys(ctx.db, sub), 0);
  });

  test('challenges are single use: a second answer to one registration challenge is refused', async () => {
    const { ctx, person } = setUp(await open());
    const sub = await person();
    const options = await startPasskeyRegistration(ctx, RP, { sub, userName: 'p', displayName: 'P' });
    const answer = new SoftwareAuthenticator().register(options, RP.origin);
    await finishPasskeyRegistration(ctx, RP, sub, { name: 'First', response: answer, locale: 'en' });
    const again = new SoftwareAuthenticator().register(options, RP.origin);
    await refusedWith('challenge_expired', finishPasskeyRegistration(ctx, RP, sub, { name: 'Second', response: again, locale: 'en' }));
    assert.equal(await countPasskeys(ctx.db, sub), 1);
  });

  test('challenges are single use: a sign-in answer presented twice is refused the second time', async () => {
    const { ctx, person, register, signInOptions } = setUp(await open());
    const sub = await person();
    const key = new SoftwareAuthenticator();
    await register(sub, key);
    const answer = key.assert(await signInOptions(), RP.origin);
    assert.equal((await verifyPasskeyAssertion(ctx, RP, answer, { requireUserVerification: true })).sub, sub);
    await refusedWith('challenge_expired', verifyPasskeyAssertion(ctx, RP, answer, { requireUserVerification: true }));
  });

  test('challenges expire after five minutes (injected clock): at 4:59 accepted, at 5:00 refused', async () => {
    const { clock, ctx, person, register, signInOptions } = setUp(await open());
    const sub = await person();
    const key = new SoftwareAuthenticator();
    await register(sub, key);
    const early = await signInOptions();
    clock.advance(5 * MINUTE - SECOND);
    assert.equal((await verifyPasskeyAssertion(ctx, RP, key.assert(early, RP.origin))).sub, sub);
    const late = await signInOptions();
    clock.advance(5 * MINUTE);
    await refusedWith('challenge_expired', verifyPasskeyAssertion(ctx, RP, key.assert(late, RP.origin)));
    // A registration challenge too.
    const registration = await startPasskeyRegistration(ctx, RP, { sub, userName: 'p', displayName: 'P' });
    clock.advance(5 * MINUTE);
    await refusedWith('challenge_expired', finishPasskeyRegistration(ctx, RP, sub, { name: 'Late', response: new SoftwareAuthenticator().register(registration, RP.origin), locale: 'en' }));
  });

  test('expired challenges are swept; live ones stay', async () => {
    const { clock, ctx, signInOptions } = setUp(await open());
    await signInOptions();
    clock.advance(4 * MINUTE);
    await signInOptions();
    clock.advance(MINUTE);
    assert.equal(await forgetExpiredPasskeyChallenges(ctx.db, clock), 1);
    assert.equal(Number((await ctx.db.selectFrom('passkey_challenges').select((eb) => eb.fn.countAll().as('n')).executeTakeFirstOrThrow()).n), 1);
  });

  test('a challenge the server never made is refused, and challenges are stored only as keyed hashes', async () => {
    const { ctx, person, register, signInOptions } = setUp(await open());
    const sub = await person();
    const key = new SoftwareAuthenticator();
    await register(sub, key);
    const options = await signInOptions();
    const stored = await ctx.db.selectFrom('passkey_challenges').select('challenge_hash').execute();
    assert.ok(stored.every((row) => row.challenge_hash !== options.challenge), 'not the challenge itself');
    await refusedWith('challenge_expired', verifyPasskeyAssertion(ctx, RP, key.assert(options, RP.origin, { challenge: Buffer.alloc(32, 9).toString('base64url') })));
  });

  test('an unknown credential is refused (never registered here)', async () => {
    const { ctx, person, register, signInOptions } = setUp(await open());
    await register(await person(), new SoftwareAuthenticator());
    const stranger = new SoftwareAuthenticator();
    await refusedWith('unknown_credential', verifyPasskeyAssertion(ctx, RP, stranger.assert(await signInOptions(), RP.origin)));
  });

  test('the counter and last-used time are updated by a sign-in; a counter that does not grow is refused', async () => {
    const { clock, ctx, person, register, signInOptions } = setUp(await open());
    const sub = await person();
    const key = new SoftwareAuthenticator();
    await register(sub, key);
    clock.advance(MINUTE);
    const first = await verifyPasskeyAssertion(ctx, RP, key.assert(await signInOptions(), RP.origin));
    assert.equal(first.passkey.lastUsedAt, clock());
    assert.equal((await ctx.db.selectFrom('passkeys').select('counter').executeTakeFirstOrThrow()).counter, 1);
    clock.advance(MINUTE);
    await verifyPasskeyAssertion(ctx, RP, key.assert(await signInOptions(), RP.origin));
    const [listed] = await listPasskeys(ctx.db, sub);
    assert.equal(listed!.lastUsedAt, clock());
    assert.equal((await ctx.db.selectFrom('passkeys').select('counter').executeTakeFirstOrThrow()).counter, 2);
    // A cloned authenticator replaying an old counter value.
    await refusedWith('not_verified', verifyPasskeyAssertion(ctx, RP, key.assert(await signInOptions(), RP.origin, { counter: 2 })));
  });

  test('an authenticator without a counter (always 0) signs in again and again', async () => {
    const { ctx, person, register, signInOptions } = setUp(await open());
    const sub = await person();
    const key = new SoftwareAuthenticator({ counts: false });
    await register(sub, key);
    for (let i = 0; i < 3; i++) assert.equal((await verifyPasskeyAssertion(ctx, RP, key.assert(await signInOptions(), RP.origin))).sub, sub);
  });

  test('removal: the person removes their passkey (with a security notification), it no longer signs in; nobody else can remove it', async () => {
    const { ctx, person, register, signInOptions } = setUp(await open());
    const sub = await person();
    const other = await person();
    const key = new SoftwareAuthenticator();
    const added = await register(sub, key, 'Phone');
    assert.equal(await removePasskey(ctx, other, added.id, 'en'), undefined, "another person's removal removes nothing");
    assert.equal(await removePasskey(ctx, sub, 'not-a-passkey-id', 'en'), undefined);
    assert.equal((await removePasskey(ctx, sub, added.id, 'en'))?.name, 'Phone');
    assert.equal(await countPasskeys(ctx.db, sub), 0);
    await refusedWith('unknown_credential', verifyPasskeyAssertion(ctx, RP, key.assert(await signInOptions(), RP.origin)));
    const titles = (await ctx.db.selectFrom('notifications').select('title').where('sub', '=', sub).orderBy('created_at').execute()).map((n) => n.title);
    assert.deepEqual(titles, ['A passkey was added to your account', 'A passkey was removed from your account']);
    assert.equal(await removePasskey(ctx, sub, added.id, 'en'), undefined, 'removed once');
  });

  test('the expected origin is checked: an answer made on another origin is refused', async () => {
    const { ctx, person, register, signInOptions } = setUp(await open());
    const sub = await person();
    const key = new SoftwareAuthenticator();
    await register(sub, key);
    await refusedWith('not_verified', verifyPasskeyAssertion(ctx, RP, key.assert(await signInOptions(), RP.origin, { origin: 'https://id.example.evil' })));
    const options = await startPasskeyRegistration(ctx, RP, { sub, userName: 'p', displayName: 'P' });
    await refusedWith('not_verified', finishPasskeyRegistration(ctx, RP, sub, { name: 'Phish', response: new SoftwareAuthenticator().register(options, 'https://phish.example'), locale: 'en' }));
  });

  test('each served host is its own relying party: a passkey made on one host does not sign in on the other, nor does its challenge', async () => {
    const { ctx, person, register } = setUp(await open());
    const sub = await person();
    const key = new SoftwareAuthenticator();
    await register(sub, key, 'Base host');
    // A challenge from the base host answered on the alternate host: refused as unknown there.
    const baseOptions = await startPasskeyAuthentication(ctx, RP);
    await refusedWith('challenge_expired', verifyPasskeyAssertion(ctx, ALT, key.assert(baseOptions, ALT.origin, { rpId: ALT.id })));
    // A challenge from the alternate host, signed by the base host's passkey: no such passkey there.
    const altOptions = await startPasskeyAuthentication(ctx, ALT);
    await refusedWith('unknown_credential', verifyPasskeyAssertion(ctx, ALT, key.assert(altOptions, ALT.origin)));
    assert.equal(relyingPartyFor(new URL('http://127.0.0.1:8080'), 'Signet'), undefined, 'an IP address cannot be an RP ID');
    assert.equal(relyingPartyFor(new URL('http://[::1]:8080'), 'Signet'), undefined);
    assert.deepEqual(relyingPartyFor(new URL('http://localhost:8080'), 'Signet'), { id: 'localhost', origin: 'http://localhost:8080', name: 'Signet' });
  });

  test('a passkey sign-in on its own needs user verification; as a second step for the person, presence is enough', async () => {
    const { ctx, person, register, signInOptions } = setUp(await open());
    const sub = await person();
    const key = new SoftwareAuthenticator({ userVerified: false });
    await register(sub, key, 'Security key');
    await refusedWith('user_not_verified', verifyPasskeyAssertion(ctx, RP, key.assert(await signInOptions(), RP.origin), { requireUserVerification: true }));
    const secondStep = await startPasskeyAuthentication(ctx, RP, { sub });
    assert.deepEqual(secondStep.allowCredentials?.map((c) => c.id), [key.id], 'the second step lists the person’s passkeys');
    const result = await verifyPasskeyAssertion(ctx, RP, key.assert(secondStep, RP.origin), { sub });
    assert.deepEqual([result.sub, result.userVerified], [sub, false]);
  });

  test('second step: another person’s passkey, or a challenge made for another person, is refused', async () => {
    const { ctx, person, register } = setUp(await open());
    const sub = await person();
    const other = await person();
    const theirs = new SoftwareAuthenticator();
    await register(other, theirs);
    await refusedWith('unknown_credential', verifyPasskeyAssertion(ctx, RP, theirs.assert(await startPasskeyAuthentication(ctx, RP, { sub }), RP.origin), { sub }));
    await refusedWith('challenge_expired', verifyPasskeyAssertion(ctx, RP, theirs.assert(await startPasskeyAuthentication(ctx, RP, { sub: other }), RP.origin), { sub }));
    // A second step's challenge does not serve a sign-in that names nobody.
    await refusedWith('challenge_expired', verifyPasskeyAssertion(ctx, RP, theirs.assert(await startPasskeyAuthentication(ctx, RP, { sub: other }), RP.origin)));
  });

  test('a disabled account is refused even with a valid passkey, and its passkey records no use', async () => {
    const { clock, ctx, person, register, signInOptions } = setUp(await open());
    const sub = await person();
    const key = new SoftwareAuthenticator();
    await register(sub, key);
    await accounts.disableAccount(ctx.db, clock, sub);
    await refusedWith('account_disabled', verifyPasskeyAssertion(ctx, RP, key.assert(await signInOptions(), RP.origin), { requireUserVerification: true }));
    assert.equal((await listPasskeys(ctx.db, sub))[0]!.lastUsedAt, null);
  });

  test('one authenticator is added once: its options exclude the person’s passkeys, and the same credential again is refused', async () => {
    const { ctx, person, register } = setUp(await open());
    const sub = await person();
    const key = new SoftwareAuthenticator();
    await register(sub, key);
    const options = await startPasskeyRegistration(ctx, RP, { sub, userName: 'p', displayName: 'P' });
    assert.deepEqual(options.excludeCredentials?.map((c) => c.id), [key.id]);
    await refusedWith('already_registered', finishPasskeyRegistration(ctx, RP, sub, { name: 'Again', response: key.register(options, RP.origin), locale: 'en' }));
    assert.equal(await countPasskeys(ctx.db, sub), 1);
  });

  test('answers that are not WebAuthn answers are refused as invalid_response', async () => {
    const { ctx, person } = setUp(await open());
    const sub = await person();
    for (const junk of [undefined, null, 'text', 42, [], {}, { id: 'x', rawId: 'x', type: 'public-key', response: {} }, { id: 'a b', rawId: 'x', type: 'public-key', response: { clientDataJSON: 'e30', authenticatorData: 'AA', signature: 'AA' } }]) {
      await refusedWith('invalid_response', verifyPasskeyAssertion(ctx, RP, junk));
      await refusedWith('invalid_response', finishPasskeyRegistration(ctx, RP, sub, { name: 'Junk', response: junk, locale: 'en' }));
    }
    // Well-formed, but its clientDataJSON holds no challenge.
    await refusedWith('invalid_response', verifyPasskeyAssertion(ctx, RP, { id: 'AAAA', rawId: 'AAAA', type: 'public-key', response: { clientDataJSON: Buffer.from('{}').toString('base64url'), authenticatorData: 'AA', signature: 'AA' } }));
  });
});
