// `signet user …`: find, update, disable/enable, unlock, set-password, delete — through the real command.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { checkCredentials } from '../../src/accounts/accounts.ts';
import { findSession, startSession } from '../../src/accounts/sessions.ts';
import { signIn } from '../../src/accounts/signin.ts';
import { newRecoveryCodes } from '../../src/accounts/factors/recovery-codes.ts';
import { beginTotpSetup, confirmTotpSetup, totpCode } from '../../src/accounts/factors/totp.ts';
import { MINUTE, manualClock } from '../../src/config/clock.ts';
import type { Settings } from '../../src/config/settings.ts';
import { openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { issueAuthorizationCode } from '../../src/oauth/codes.ts';
import { issueTokenPair } from '../../src/oauth/token/issue-tokens.ts';
import { insertAccessToken, insertRefreshToken } from '../../src/oauth/tokens.store.ts';
import { runSignet, type CliResult } from '../helpers/cli.ts';
import { createPostgresDatabase, postgresUnavailableReason, skipUnlessAvailable } from '../helpers/services.ts';

const pgSkip = skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason());
const KEY = Buffer.alloc(32, 7);
const ORIGIN = 'https://id.example';

function ok(result: CliResult): unknown {
  assert.equal(result.code, 0, result.stderr);
  assert.equal(result.stderr, '', 'stderr stays empty on success');
  return JSON.parse(result.stdout);
}

function refused(result: CliResult, code: number, message: RegExp): void {
  assert.equal(result.code, code, result.stdout + result.stderr);
  assert.equal(result.stdout, '');
  const lines = result.stderr.trim().split('\n');
  assert.equal(lines.length, 1, `one line on stderr: ${result.stderr}`);
  assert.match(lines[0]!, message);
}

for (const kind of ['sqlite', 'postgres'] as const) {
  describe(`signet user commands [${kind}]`, { skip: kind === 'postgres' ? pgSkip : false }, () => {
    let env: Record<string, string>;
    let dropDatabase: (() => Promise<void>) | undefined;
    let handle: DatabaseHandle;
    let counter = 0;

    before(async () => {
      const dir = mkdtempSync(path.join(tmpdir(), 'signet-cli-user-'));
      env = { SIGNET_DATA_DIR: dir };
      let settings: Settings['database'] = { kind: 'sqlite', file: path.join(dir, 'signet.sqlite') };
      if (kind === 'postgres') {
        const created = await createPostgresDatabase();
        env.SIGNET_DATABASE_URL = created.url;
        dropDatabase = created.drop;
        settings = { kind: 'postgres', url: created.url, poolSize: 2 };
      }
      ok(await runSignet(['migrate'], { env }));
      handle = openDatabase(settings);
    });
    after(async () => {
      await handle.close();
      await dropDatabase?.();
    });

    const user = (args: string[], stdin?: string) => runSignet(['user', ...args], { env, stdin });
    async function newAccount(extra: string[] = []): Promise<{ sub: string; email: string }> {
      const email = `person${++counter}@example.com`;
      const profile = ok(await user(['create', '--email', email, ...extra, '--password-stdin'], 'first password')) as { sub: string };
      return { sub: profile.sub, email };
    }

    test('`user find --email E` prints the account (compared as sign-in compares it); `--phone P` in any spelling', async () => {
      const { sub, email } = await newAccount(['--phone', '+44 20 7946 0001']);
      assert.equal((ok(await user(['find', '--email', email.toUpperCase()])) as { sub: string }).sub, sub);
      assert.equal((ok(await user(['find', '--phone', '+442079460001'])) as { sub: string }).sub, sub);
    });

    test('spec: "`signet user role add SUB operator` · `signet user role remove SUB operator` — grants or takes the operator role; `user show` lists `roles`", audited as the CLI', async () => {
      const { sub } = await newAccount();
      assert.deepEqual((ok(await user(['show', sub])) as { roles: string[] }).roles, []);
      assert.deepEqual(ok(await user(['role', 'add', sub, 'operator'])), { sub, roles: ['operator'], changed: true });
      assert.deepEqual(ok(await user(['role', 'add', sub, 'operator'])), { sub, roles: ['operator'], changed: false });
      assert.deepEqual((ok(await user(['show', sub])) as { roles: string[] }).roles, ['operator']);
      assert.deepEqual(ok(await user(['role', 'remove', sub, 'operator'])), { sub, roles: [], changed: true });
      refused(await user(['role', 'add', sub, 'root']), 1, /unknown role "root": the roles are operator/);
      refused(await user(['role', 'grant', sub, 'operator']), 2, /unknown action grant/);
      refused(await user(['role', 'add', 'no-such-sub', 'operator']), 1, /no account with sub no-such-sub/);
      const events = await handle.db.selectFrom('audit_events').select(['type', 'actor', 'outcome']).where('sub', '=', sub).where('type', 'like', 'account.role%').orderBy('id').execute();
      assert.deepEqual(events.map((e) => [e.type, e.actor, e.outcome]), [
        ['account.role_added', 'cli', 'success'],
        ['account.role_added', 'cli', 'success'],
        ['account.role_removed', 'cli', 'success'],
        ['account.role_added', 'cli', 'failure'],
      ]);
    });

    test('`user find` fails because there is no such account: exit 1 "no account with that e-mail"', async () => {
      refused(await user(['find', '--email', 'nobody@example.com']), 1, /^signet: no account with that e-mail$/);
      refused(await user(['find', '--phone', '+4915199999999']), 1, /^signet: no account with that phone number$/);
      refused(await user(['find']), 2, /give --email or --phone/);
    });

    test('`user update SUB` changes the profile; a changed e-mail is unverified again unless --email-verified', async () => {
      const { sub } = await newAccount(['--email-verified', '--phone', '+4915112340001', '--phone-verified']);
      const renamed = ok(await user(['update', sub, '--name', 'Ada Lovelace', '--picture', 'https://img.example/ada.png'])) as Record<string, unknown>;
      assert.equal(renamed.name, 'Ada Lovelace');
      assert.equal(renamed.picture, 'https://img.example/ada.png');
      assert.equal(renamed.email_verified, true, 'an unchanged e-mail stays verified');

      const moved = ok(await user(['update', sub, '--email', `Moved${counter}@Example.com`, '--phone', '+49 151 12340002'])) as Record<string, unknown>;
      assert.equal(moved.email, `moved${counter}@example.com`);
      assert.equal(moved.email_verified, false, 'changing the e-mail resets email_verified');
      assert.equal(moved.phone_number, '+4915112340002');
      assert.equal(moved.phone_number_verified, false, 'changing the phone resets phone_number_verified');

      const verified = ok(await user(['update', sub, '--email', `again${counter}@example.com`, '--email-verified'])) as Record<string, unknown>;
      assert.equal(verified.email_verified, true, '--email-verified keeps it verified');
      const cleared = ok(await user(['update', sub, '--picture', '', '--name', ''])) as Record<string, unknown>;
      assert.equal(cleared.picture, null);
      assert.equal(cleared.name, null);
      assert.ok(await checkCredentials(handle.db, `again${counter}@example.com`, 'first password'), 'the new e-mail signs in');
    });

    test('`user update` validates like create: e-mail format and uniqueness, E.164 phone, https-or-empty picture, name length', async () => {
      const taken = await newAccount();
      const { sub } = await newAccount();
      const cases: Array<[string[], number, RegExp]> = [
        [['--email', 'not-an-email'], 1, /not an e-mail address/],
        [['--email', taken.email.toUpperCase()], 1, /exists already/],
        [['--phone', '12345'], 1, /country code/],
        [['--picture', 'http://img.example/a.png'], 1, /https URL/],
        [['--picture', 'javascript:alert(1)'], 1, /https URL/],
        [['--name', 'x'.repeat(201)], 1, /at most 200 characters/],
        [['--email', ''], 1, /needs an e-mail or a phone number/],
        [[], 2, /nothing to change/],
      ];
      for (const [args, code, message] of cases) refused(await user(['update', sub, ...args]), code, message);
      refused(await user(['update', 'no-such-sub', '--name', 'X']), 1, /no account with sub no-such-sub/);
      const unchanged = ok(await user(['show', sub])) as Record<string, unknown>;
      assert.equal(unchanged.name, null, 'refused updates wrote nothing');
    });

    test('`user set-password` ends existing sessions', async () => {
      const clock = manualClock();
      const { sub, email } = await newAccount();
      const session = await startSession(handle.db, KEY, clock, { sub, origin: ORIGIN });
      assert.ok(await findSession(handle.db, KEY, clock, session.id, ORIGIN));
      assert.deepEqual(ok(await user(['set-password', sub, '--password-stdin'], 'second password')), { sub, password_changed: true, sessions_ended: true });
      assert.equal(await findSession(handle.db, KEY, clock, session.id, ORIGIN), undefined);
      assert.ok(await checkCredentials(handle.db, email, 'second password'));
    });

    test('`user enable` undoes `disable`; the sessions disable ended stay ended', async () => {
      const clock = manualClock();
      const { sub, email } = await newAccount();
      const session = await startSession(handle.db, KEY, clock, { sub, origin: ORIGIN });
      assert.equal((ok(await user(['disable', sub])) as { disabled: boolean }).disabled, true);
      assert.equal(await checkCredentials(handle.db, email, 'first password'), undefined, 'a disabled account cannot sign in');
      assert.equal((ok(await user(['enable', sub])) as { disabled: boolean }).disabled, false);
      assert.ok(await checkCredentials(handle.db, email, 'first password'), 'enabled again, it signs in');
      assert.equal(await findSession(handle.db, KEY, clock, session.id, ORIGIN), undefined, '`user disable` ended the session');
      refused(await user(['enable', 'no-such-sub']), 1, /no account with sub no-such-sub/);
    });

    test('`user unlock` lifts a lockout', async () => {
      const clock = manualClock();
      const { sub, email } = await newAccount();
      const attempt = (password: string) => signIn(handle.db, KEY, clock, { identifier: email, password, address: '203.0.113.9' });
      // Wrong passwords, waiting out each slow-down, until one locks the account (a wait over a minute).
      for (let i = 0; ; i++) {
        assert.ok(i < 100, 'wrong passwords lock the account at some point');
        const result = await attempt('wrong password');
        assert.equal(result.outcome, 'wrong_credentials');
        if (result.retryAt === undefined) continue;
        if (result.retryAt - clock() > MINUTE) break;
        clock.set(result.retryAt);
      }
      clock.advance(MINUTE);
      assert.equal((await attempt('first password')).outcome, 'throttled', 'locked: even the right password is refused');
      assert.equal((ok(await user(['unlock', sub])) as { unlocked: boolean }).unlocked, true);
      assert.deepEqual(await attempt('first password'), { outcome: 'signed_in', sub });
      refused(await user(['unlock', 'no-such-sub']), 1, /no account with sub no-such-sub/);
    });

    test('`user unlock SUB --address IP` also forgets the failures counted against that address; a value that is not an IP address is refused', async () => {
      const clock = manualClock();
      const { sub, email } = await newAccount();
      const shared = '203.0.113.77';
      let blocked = false;
      for (let i = 0; i < 100 && !blocked; i++) {
        const r = await signIn(handle.db, KEY, clock, { identifier: `nobody-${i}@example.com`, password: 'guess', address: shared });
        // Each wait is waited out until one is a lock (15 minutes), which stays.
        if (r.outcome !== 'signed_in' && r.retryAt !== undefined) {
          if (r.retryAt - clock() > 60_000) blocked = true;
          else clock.set(r.retryAt);
        }
      }
      const attempt = () => signIn(handle.db, KEY, clock, { identifier: email, password: 'first password', address: shared });
      assert.equal((await attempt()).outcome, 'throttled');
      refused(await user(['unlock', sub, '--address', 'somewhere']), 1, /not an IP address/);
      assert.equal((ok(await user(['unlock', sub, '--address', shared])) as { counters_cleared: number }).counters_cleared, 1);
      assert.deepEqual(await attempt(), { outcome: 'signed_in', sub });
    });

    test('`user delete` leaves no grant, token or session row', async () => {
      const clock = manualClock(Date.now());
      const { sub } = await newAccount();
      const client = ok(await runSignet(['client', 'create', '--name', `App ${counter}`, '--redirect-uri', 'https://app.example/cb'], { env })) as { client_id: string };
      const db = handle.db;
      await db.insertInto('grants').values({ sub, client_id: client.client_id, scope: 'openid profile', first_authorized_at: clock(), updated_at: clock(), muted: 0 }).execute();
      await issueAuthorizationCode(db, KEY, clock, { clientId: client.client_id, sub, redirectUri: 'https://app.example/cb', scope: 'openid', codeChallenge: null, codeChallengeMethod: null });
      await issueTokenPair(db, KEY, clock(), { clientId: client.client_id, sub, scope: 'openid', expiresAt: clock() + 30 * 24 * 60 * MINUTE });
      // and tokens of the format before one row per chain (migration 0010)
      const token = { client_id: client.client_id, sub, scope: 'openid', chain_id: `chain-${sub}`, created_at: clock(), revoked_at: null };
      await insertAccessToken(db, { ...token, token_hash: `at-${sub}`, expires_at: clock() + MINUTE });
      await insertRefreshToken(db, { ...token, token_hash: `rt-${sub}`, chain_expires_at: clock() + 30 * 24 * 60 * MINUTE, rotated_at: null });
      await startSession(db, KEY, clock, { sub, origin: ORIGIN });

      const rowsOf = async () => {
        const counts: Record<string, number> = {};
        for (const table of ['users', 'grants', 'token_chains', 'access_tokens', 'refresh_tokens', 'sessions'] as const) {
          counts[table] = (await db.selectFrom(table).select('sub').where('sub', '=', sub).execute()).length;
        }
        return counts;
      };
      assert.deepEqual(await rowsOf(), { users: 1, grants: 1, token_chains: 2, access_tokens: 1, refresh_tokens: 1, sessions: 1 }, 'a code (generation 0) and a chain with tokens');
      assert.deepEqual(ok(await user(['delete', sub])), { sub, deleted: true });
      assert.deepEqual(await rowsOf(), { users: 0, grants: 0, token_chains: 0, access_tokens: 0, refresh_tokens: 0, sessions: 0 });
      refused(await user(['show', sub]), 1, /no account with sub/);
      refused(await user(['delete', sub]), 1, /no account with sub/);
      assert.equal((ok(await runSignet(['client', 'show', client.client_id], { env })) as { client_id: string }).client_id, client.client_id, 'the application stays');
    });

    test('`user factors SUB` lists second factors (kinds, names, dates — never secrets); `user factors reset SUB` removes them with the recovery codes and ends the sessions', async () => {
      const { sub } = await newAccount();
      const clock = manualClock();
      const setup = await beginTotpSetup(handle.db, KEY, clock, { sub, issuer: 'Signet', label: 'x' });
      await confirmTotpSetup(handle.db, KEY, clock, sub, totpCode(setup.secretBase32, clock()));
      await newRecoveryCodes(handle.db, KEY, clock, sub);
      await startSession(handle.db, KEY, clock, { sub, origin: ORIGIN });
      const listed = await user(['factors', sub]);
      const shown = ok(listed) as { sub: string; factors: Array<{ kind: string; name: string }>; recovery_codes_left: number };
      assert.deepEqual(shown.factors.map((x) => [x.kind, x.name]), [['totp', 'Authenticator app']]);
      assert.equal(shown.recovery_codes_left, 10);
      assert.ok(!listed.stdout.includes(setup.secretBase32));
      assert.deepEqual(ok(await user(['factors', 'reset', sub])), { sub, factors_removed: 1, recovery_codes_removed: 10, sessions_ended: 1 });
      assert.deepEqual((ok(await user(['factors', sub])) as { factors: unknown[] }).factors, []);
      const audit = await handle.db.selectFrom('audit_events').selectAll().where('type', '=', 'account.factors_reset').where('sub', '=', sub).execute();
      assert.equal(audit.length, 1);
      assert.equal(audit[0]!.actor, 'cli');
      refused(await user(['factors', 'no-such-sub']), 1, /no account with sub/);
      refused(await user(['factors', 'wipe', sub]), 2, /unknown action wipe/);
    });
  });
}
