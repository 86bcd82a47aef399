import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DAY, HOUR } from '../../src/config/clock.ts';
import { sweepExpired } from '../../src/web/housekeeping.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { oauthFixture } from '../oauth/token-fixtures.ts';

forEachDatabase('housekeeping', (open) => {
  test('expired codes, access tokens and ended refresh chains are swept; live ones and rotated tokens of a live chain stay (a replay is still recognised)', async () => {
    const f = await oauthFixture(await open());
    const { db } = f.deps;
    const first = await f.exchange();
    assert.equal((await f.refresh(first.refresh_token)).statusCode, 200);
    await f.mintCode();

    f.clock.advance(3 * HOUR);
    const early = await sweepExpired(db, f.clock);
    assert.equal(early.codesAndTokens, 0, 'nothing is swept before the one-day grace after expiry');

    f.clock.advance(DAY);
    const swept = await sweepExpired(db, f.clock);
    assert.equal(swept.codesAndTokens, 4, 'two codes and two expired access tokens');
    assert.equal((await db.selectFrom('refresh_tokens').selectAll().execute()).length, 2, 'the rotated refresh token stays while its chain lives');
    const replay = await f.refresh(first.refresh_token);
    assert.equal(replay.statusCode, 400);

    f.clock.advance(31 * DAY);
    await sweepExpired(db, f.clock);
    assert.equal((await db.selectFrom('refresh_tokens').selectAll().execute()).length, 0, 'an ended chain is forgotten');
    await f.app.close();
  });
});
