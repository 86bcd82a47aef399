// Issue 20: "a test that counts PostgreSQL round trips per userinfo and per refresh (a query counter on
// the pool), so the count can't silently grow back". Every statement the pool sends is one round trip
// (a named prepared statement goes as Bind/Execute/Sync in one write); BEGIN and COMMIT count too.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts.ts';
import { sql } from 'kysely';
import { openDatabase } from '../../src/db/database.ts';
import * as store from '../../src/oauth/tokens.store.ts';
import { postgresDatabase } from '../helpers/databases.ts';
import { postgresUnavailableReason, skipUnlessAvailable } from '../helpers/services.ts';
import { oauthFixture, REDIRECT_URI, s256Challenge, VERIFIER, type OAuthFixture, type TokenJson } from './token-fixtures.ts';

/** The counts issue 20 brought them to (from 3 for userinfo, 7 for refresh and 8 for the code grant; refresh and code went 2 → 1 with one row per chain). */
const USERINFO_ROUND_TRIPS = 1;
const REFRESH_ROUND_TRIPS = 1;
const CODE_ROUND_TRIPS = 1;

const skip = process.env.SIGNET_TEST_POSTGRES_URL
  ? skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason())
  : skipUnlessAvailable('PostgreSQL', 'SIGNET_TEST_POSTGRES_URL is not set; the round-trip counts are a PostgreSQL property');

describe('PostgreSQL round trips per request', { skip }, () => {
  const opened: Array<{ dispose(): Promise<void> }> = [];
  after(async () => {
    for (const d of opened) await d.dispose();
  });

  async function setUp(): Promise<{ f: OAuthFixture; count: () => number }> {
    const database = await postgresDatabase();
    opened.push(database);
    const f = await oauthFixture(database);
    assert.ok(database.roundTrips, 'a PostgreSQL handle counts its statements');
    return { f, count: database.roundTrips };
  }

  /** Round trips of one call. */
  async function roundTripsOf<T>(count: () => number, run: () => Promise<T>): Promise<{ trips: number; result: T }> {
    const before = count();
    const result = await run();
    return { trips: count() - before, result };
  }

  test(`issue 20 "PostgreSQL in one round trip": a userinfo request is ${USERINFO_ROUND_TRIPS} round trip once its application is cached`, async () => {
    const { f, count } = await setUp();
    const tokens = await f.exchange();
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 200);
    for (let i = 0; i < 3; i++) {
      const { trips, result } = await roundTripsOf(count, () => f.userinfo(`Bearer ${tokens.access_token}`));
      assert.equal(result.statusCode, 200, result.body);
      assert.equal(trips, USERINFO_ROUND_TRIPS, `userinfo took ${trips} round trips`);
    }
    // A refused token is the read plus the refusal counter (rate-limits.ts), nothing more.
    const { trips, result } = await roundTripsOf(count, () => f.userinfo(`Bearer ${'x'.repeat(43)}=`));
    assert.equal(result.statusCode, 401);
    assert.equal(trips, USERINFO_ROUND_TRIPS + 1);
    await f.app.close();
  });

  test('issue 44 "one round trip per userinfo": userinfo requests that arrive together share one statement, and each gets the answer it would get alone (another person, another scope, a revoked token)', async () => {
    const { f, count } = await setUp();
    const grace = await createAccount(f.deps.db, f.deps.clock, { email: 'grace@example.com', name: 'Grace Hopper', emailVerified: false, password: 'compiler-cobol-1959' });
    const tokens = [await f.exchange('openid profile email'), await f.exchange('openid email'), await f.exchange('openid profile', grace.sub)];
    const revoked = await f.exchange();
    const revokedAnswer = await f.revoke({ token: revoked.access_token, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret });
    assert.equal(revokedAnswer.statusCode, 200);
    // Each token alone (this also caches the application).
    const alone = new Map<string, string>();
    for (const { access_token: token } of tokens) {
      const answer = await f.userinfo(`Bearer ${token}`);
      assert.equal(answer.statusCode, 200, answer.body);
      alone.set(token, answer.body);
    }
    assert.equal(new Set(alone.values()).size, 3, 'three different answers');
    // Eight live ones at once (two of them the same token): one statement for all.
    const asked = [0, 1, 2, 0, 1, 2, 2, 0].map((i) => tokens[i]!.access_token);
    const together = await roundTripsOf(count, () => Promise.all(asked.map((token) => f.userinfo(`Bearer ${token}`))));
    assert.equal(together.trips, USERINFO_ROUND_TRIPS, `eight userinfo requests together took ${together.trips} round trips`);
    together.result.forEach((answer, index) => {
      assert.equal(answer.statusCode, 200, answer.body);
      assert.equal(answer.body, alone.get(asked[index]!));
    });
    // A revoked token and an unknown chain among live ones: refused, the others answered.
    const unknown = `${tokens[0]!.access_token.slice(0, 2)}${tokens[0]!.access_token[2] === 'A' ? 'B' : 'A'}${tokens[0]!.access_token.slice(3)}`;
    const mixed = [tokens[0]!.access_token, revoked.access_token, tokens[2]!.access_token, unknown];
    const answers = await Promise.all(mixed.map((token) => f.userinfo(`Bearer ${token}`)));
    assert.deepEqual(answers.map((answer) => answer.statusCode), [200, 401, 200, 401]);
    assert.equal(answers[0]!.body, alone.get(tokens[0]!.access_token));
    assert.equal(answers[2]!.body, alone.get(tokens[2]!.access_token));
    await f.app.close();
  });

  test(`issue 20: a refresh is ${REFRESH_ROUND_TRIPS} round trip${REFRESH_ROUND_TRIPS === 1 ? "" : "s"} — the rotation's conditional UPDATE of its chain row is also the check (no read first, no BEGIN/COMMIT)`, async () => {
    const { f, count } = await setUp();
    let current = await f.exchange();
    for (let i = 0; i < 3; i++) {
      const { trips, result } = await roundTripsOf(count, () => f.refresh(current.refresh_token));
      assert.equal(result.statusCode, 200, result.body);
      assert.equal(trips, REFRESH_ROUND_TRIPS, `refresh took ${trips} round trips`);
      current = result.json<TokenJson>();
    }
    // What it issued works: the rotation stored the pair.
    assert.equal((await f.userinfo(`Bearer ${current.access_token}`)).statusCode, 200);
    await f.app.close();
  });

  test('issue 44 "at most two round trips on refresh": refreshes of different chains that arrive together rotate in one statement, each once, each answer working', async () => {
    const { f, count } = await setUp();
    const grace = await createAccount(f.deps.db, f.deps.clock, { email: 'grace@example.com', name: 'Grace Hopper', emailVerified: false, password: 'compiler-cobol-1959' });
    const chains = [await f.exchange(), await f.exchange('openid email'), await f.exchange(), await f.exchange(undefined, grace.sub)];
    await f.refresh(chains[3]!.refresh_token); // Grace's first refresh token is now rotated: presenting it again is the replay
    const together = await roundTripsOf(count, () => Promise.all(chains.slice(0, 3).map((tokens) => f.refresh(tokens.refresh_token))));
    assert.equal(together.trips, REFRESH_ROUND_TRIPS, `three refreshes together took ${together.trips} round trips`);
    const pairs = together.result.map((answer) => {
      assert.equal(answer.statusCode, 200, answer.body);
      return answer.json<TokenJson>();
    });
    assert.equal(new Set(pairs.map((pair) => pair.refresh_token)).size, 3);
    assert.deepEqual(pairs.map((pair) => pair.scope), ['openid profile email', 'openid email', 'openid profile email']);
    for (const pair of pairs) assert.equal((await f.userinfo(`Bearer ${pair.access_token}`)).statusCode, 200);
    assert.deepEqual((await f.tokenRows(f.confidential.client.clientId)).chains.map((chain) => chain.generation).sort(), [2, 2, 2]);
    // A replay (another person's) among live refreshes: refused and that person's tokens revoked, the others rotated.
    const answers = await Promise.all([pairs[0]!.refresh_token, chains[3]!.refresh_token, pairs[1]!.refresh_token].map((token) => f.refresh(token)));
    assert.deepEqual(answers.map((answer) => answer.statusCode), [200, 400, 200]);
    assert.deepEqual((await f.tokenRows(f.confidential.client.clientId)).chains.map((chain) => [chain.generation, chain.revoked_at]).sort(), [[2, null], [3, null], [3, null]]);
    const graces = await f.deps.db.selectFrom('token_chains').select('revoked_at').where('sub', '=', grace.sub).execute();
    assert.ok(graces.length === 1 && graces[0]!.revoked_at !== null, 'the replayed chain is revoked');
    await f.app.close();
  });

  test('issue 44: the batched statements keep PostgreSQL\'s generic plan — after the first runs they are not planned anew each time (a custom plan cost more than the statement)', async () => {
    const database = await postgresDatabase();
    opened.push(database);
    // One connection, so the prepared statements seen are the ones the batches used.
    const single = openDatabase({ kind: 'postgres', url: (database.settings as { url: string }).url, poolSize: 1 });
    try {
      for (let run = 0; run < 8; run++) {
        const keys = Array.from({ length: 2 + (run % 3) }, (_, i) => `chain${run}-${i}`);
        await Promise.all(keys.map((id) => store.findChainForAccessToken(single.db, id, `${id}.1`)));
        await Promise.all(keys.map((id) => store.rotateChain(single.db, { id, generation: 1, clientId: 'nobody', now: Date.now(), issuance: id })));
      }
      const { rows } = await sql<{ statement: string; generic_plans: number; custom_plans: number }>`select statement, generic_plans, custom_plans from pg_prepared_statements where statement like '%with ordinality%'`.execute(single.db);
      assert.equal(rows.length, 2, 'both batched statements ran as named statements');
      for (const row of rows) assert.ok(row.generic_plans >= 3 && row.custom_plans <= 5, `${row.generic_plans} generic and ${row.custom_plans} custom plans for ${row.statement.slice(0, 60)}…`);
    } finally {
      await single.close();
    }
  });

  test(`issue 20: a code exchange is ${CODE_ROUND_TRIPS} round trip${CODE_ROUND_TRIPS === 1 ? '' : 's'} — the redemption's conditional UPDATE of the chain row (client, redirect URI, credential, person) is also the check`, async () => {
    const { f, count } = await setUp();
    await f.exchange(); // caches the application
    const code = await f.mintCode();
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret };
    const { trips, result } = await roundTripsOf(count, () => f.token(form));
    assert.equal(result.statusCode, 200, result.body);
    assert.equal(trips, CODE_ROUND_TRIPS, `the code exchange took ${trips} round trips`);
    // With PKCE (a public client) too, once its application is cached.
    const pkceCode = () => f.mintCode({ clientId: f.publicClient.clientId, challenge: s256Challenge(VERIFIER), method: 'S256' });
    const publicForm = (code: string) => ({ grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.publicClient.clientId, code_verifier: VERIFIER });
    assert.equal((await f.token(publicForm(await pkceCode()))).statusCode, 200);
    const pkce = await pkceCode();
    const withPkce = await roundTripsOf(count, () => f.token(publicForm(pkce)));
    assert.equal(withPkce.result.statusCode, 200, withPkce.result.body);
    assert.equal(withPkce.trips, CODE_ROUND_TRIPS, `with PKCE: ${withPkce.trips} round trips`);
    await f.app.close();
  });
});
