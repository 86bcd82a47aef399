// spec "Limits — refresh concurrency: two simultaneous refreshes of one token count as replay and
// revoke everything". One conditional UPDATE decides the winner; every loser sees a rotated token and
// revokes every token of that person for that application, the winner's new pair included.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OAuthError } from '../../src/oauth/errors.ts';
import { OAuthParams, parseFormBody } from '../../src/oauth/form-params.ts';
import { refreshTokenGrant } from '../../src/oauth/token/refresh-token.ts';
import { decodeCode, decodeRefreshToken } from '../../src/oauth/token-format.ts';
import * as store from '../../src/oauth/tokens.store.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { oauthFixture, REDIRECT_URI, type TokenJson } from './token-fixtures.ts';

const CONCURRENT = 20;

forEachDatabase('refresh race', (open) => {
  test(`Limits | refresh concurrency: ${CONCURRENT} concurrent refreshes of one token → exactly one 200; afterwards every token of that person for that application is revoked`, async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const answers = await Promise.all(Array.from({ length: CONCURRENT }, () => f.refresh(tokens.refresh_token)));
    const won = answers.filter((r) => r.statusCode === 200);
    assert.equal(won.length, 1, answers.map((r) => r.statusCode).join(' '));
    assert.ok(answers.filter((r) => r.statusCode !== 200).every((r) => r.statusCode === 400 && r.json<{ error: string }>().error === 'invalid_grant'));
    const rows = await f.tokenRows(f.confidential.client.clientId);
    assert.deepEqual(rows.chains.map((r) => r.generation), [2], 'one chain: the first pair (generation 1) and the winner\'s pair (generation 2)');
    assert.ok(rows.chains.every((r) => r.revoked_at !== null), 'everything is revoked, including what the winner just received');
    assert.equal((await f.userinfo(`Bearer ${tokens.access_token}`)).statusCode, 401, 'the first access token too');
    const winner = won[0]!.json<TokenJson>();
    assert.equal((await f.userinfo(`Bearer ${winner.access_token}`)).statusCode, 401);
    assert.equal((await f.refresh(winner.refresh_token)).statusCode, 400);
    await f.app.close();
  });

  test(`Authorization code | "redeemable once": ${CONCURRENT} concurrent redemptions of one code → exactly one 200; the tokens issued from it are revoked`, async () => {
    const f = await oauthFixture(await open());
    const code = await f.mintCode();
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret };
    const answers = await Promise.all(Array.from({ length: CONCURRENT }, () => f.token(form)));
    const won = answers.filter((r) => r.statusCode === 200);
    assert.equal(won.length, 1, answers.map((r) => r.statusCode).join(' '));
    const rows = await f.tokenRows(f.confidential.client.clientId);
    assert.equal(rows.chains.length, 1, 'one chain started');
    assert.ok(rows.chains.every((r) => r.revoked_at !== null), 'a code presented a second time revokes every token issued from it');
    assert.equal((await f.userinfo(`Bearer ${won[0]!.json<TokenJson>().access_token}`)).statusCode, 401);
    await f.app.close();
  });

  test('refreshes of one chain made one after another (serialized, as the spec asks) all succeed', async () => {
    const f = await oauthFixture(await open());
    let current = await f.exchange();
    for (let i = 0; i < 10; i++) {
      const res = await f.refresh(current.refresh_token);
      assert.equal(res.statusCode, 200, res.body);
      current = res.json<TokenJson>();
    }
    assert.equal((await f.userinfo(`Bearer ${current.access_token}`)).statusCode, 200);
    await f.app.close();
  });

  test(`rotation is one atomic conditional UPDATE: ${CONCURRENT} concurrent rotateChain calls on one generation → exactly one gets the row`, async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const { chainId, generation } = decodeRefreshToken(f.deps.keys.tokenHash, tokens.refresh_token)!;
    const results = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) => store.rotateChain(f.deps.db, { id: chainId, generation, clientId: f.confidential.client.clientId, now: f.clock(), issuance: `race-${i}` })),
    );
    assert.equal(results.filter((r) => r !== undefined).length, 1);
    assert.equal((await store.findChain(f.deps.db, chainId))?.generation, generation + 1, 'moved on once');
    await f.app.close();
  });

  test(`single use is one atomic conditional UPDATE: ${CONCURRENT} concurrent redeemChainCode calls on one code → exactly one wins`, async () => {
    const f = await oauthFixture(await open());
    const id = decodeCode(f.deps.keys.tokenHash, await f.mintCode())!;
    const results = await Promise.all(Array.from({ length: CONCURRENT }, (_, i) => store.redeemChainCode(f.deps.db, { id, now: f.clock(), issuance: `redeem-${i}`, chainExpiresAt: f.clock() + 86_400_000 })));
    assert.equal(results.filter(Boolean).length, 1);
    assert.equal((await store.findChain(f.deps.db, id))?.generation, 1);
    await f.app.close();
  });

  test(`every request passed "check", then ${CONCURRENT} "issue" steps race: one wins, the losers see a rotated token and revoke everything`, async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const ctx = { db: f.deps.db, hashKey: f.deps.keys.tokenHash, now: f.clock(), origin: undefined };
    const form = new URLSearchParams({ refresh_token: tokens.refresh_token, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret }).toString();
    const checked = await Promise.all(Array.from({ length: CONCURRENT }, () => refreshTokenGrant.check(ctx, OAuthParams.from(parseFormBody(form)))));
    const outcomes = await Promise.allSettled(checked.map((c) => refreshTokenGrant.issue(ctx, c)));
    assert.equal(outcomes.filter((o) => o.status === 'fulfilled').length, 1);
    for (const o of outcomes) if (o.status === 'rejected') assert.ok(o.reason instanceof OAuthError && o.reason.error === 'invalid_grant', String(o.reason));
    const rows = await f.tokenRows(f.confidential.client.clientId);
    assert.deepEqual(rows.chains.map((r) => r.generation), [2]);
    assert.ok(rows.chains.every((r) => r.revoked_at !== null));
    await f.app.close();
  });
});
