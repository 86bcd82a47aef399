import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAY, HOUR } from '../../src/config/clock.ts';
import { sweepExpired } from '../../src/web/housekeeping.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { oauthFixture } from '../oauth/token-fixtures.ts';

forEachDatabase('housekeeping', (open) => {
  test('expired codes, deny-list entries of expired access tokens and ended refresh chains are swept; a live chain stays (a replay of its rotated token is still recognised)', async () => {
    const f = await oauthFixture(await open());
    const { db } = f.deps;
    const first = await f.exchange();
    assert.equal((await f.refresh(first.refresh_token)).statusCode, 200);
    await f.mintCode();
    // Revoking one access token puts it on the deny list until it would have expired.
    assert.equal((await f.revoke({ token: first.access_token, client_id: f.confidential.client.clientId, client_secret: f.confidential.secret })).statusCode, 200);
    assert.equal((await db.selectFrom('revoked_access_tokens').selectAll().execute()).length, 1);

    f.clock.advance(3 * HOUR);
    const early = await sweepExpired(db, f.clock);
    assert.equal(early.codesAndTokens, 0, 'nothing is swept before the one-day grace after expiry');

    f.clock.advance(DAY);
    const swept = await sweepExpired(db, f.clock);
    assert.equal(swept.codesAndTokens, 2, 'the code never redeemed (its chain at generation 0) and the deny-list entry of an expired access token');
    assert.equal((await db.selectFrom('token_chains').selectAll().execute()).length, 1, 'the chain stays while it lives');
    const replay = await f.refresh(first.refresh_token);
    assert.equal(replay.statusCode, 400);

    f.clock.advance(31 * DAY);
    await sweepExpired(db, f.clock);
    assert.equal((await db.selectFrom('token_chains').selectAll().execute()).length, 0, 'an ended chain is forgotten');
    await f.app.close();
  });
});
