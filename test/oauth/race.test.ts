// spec "Limits — refresh concurrency: two simultaneous refreshes of one token count as replay and
// revoke everything". One conditional UPDATE decides the winner; every loser sees a rotated token and
// revokes every token of that person for that application, the winner's new pair included.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { OAuthError } from '../../src/oauth/errors.ts';
import { OAuthParams, parseFormBody } from '../../src/oauth/form-params.ts';
import { keyedHash } from '../../src/oauth/secrets.ts';
import { refreshTokenGrant } from '../../src/oauth/token/refresh-token.ts';
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
    assert.equal(rows.access.length, 2, 'the first pair and the winner\'s pair');
    assert.equal(rows.refresh.length, 2);
    assert.ok([...rows.access, ...rows.refresh].every((r) => r.revoked_at !== null), 'everything is revoked, including what the winner just received');
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
    assert.equal(rows.access.length, 1);
    assert.ok([...rows.access, ...rows.refresh].every((r) => r.revoked_at !== null), 'a code presented a second time revokes every token issued from it');
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

  test(`rotation is one atomic conditional UPDATE: ${CONCURRENT} concurrent rotateRefreshToken calls on one token → exactly one gets the row`, async () => {
    const f = await oauthFixture(await open());
    const tokens = await f.exchange();
    const hash = keyedHash(f.deps.keys.tokenHash, tokens.refresh_token);
    const results = await Promise.all(Array.from({ length: CONCURRENT }, () => store.rotateRefreshToken(f.deps.db, hash, f.confidential.client.clientId, f.clock())));
    assert.equal(results.filter((r) => r !== undefined).length, 1);
    await f.app.close();
  });

  test(`single use is one atomic conditional UPDATE: ${CONCURRENT} concurrent redeemCode calls on one code → exactly one wins`, async () => {
    const f = await oauthFixture(await open());
    const hash = keyedHash(f.deps.keys.tokenHash, await f.mintCode());
    const results = await Promise.all(Array.from({ length: CONCURRENT }, () => store.redeemCode(f.deps.db, hash, f.clock())));
    assert.equal(results.filter(Boolean).length, 1);
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
    assert.equal(rows.access.length, 2);
    assert.ok([...rows.access, ...rows.refresh].every((r) => r.revoked_at !== null));
    await f.app.close();
  });
});
