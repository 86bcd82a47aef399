// /mcp's refusals without a browser or an agent (app.inject): the per-address limit on tokens Signet
// never issued, as userinfo has it ("floods of bad requests"), and what does not count toward it.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { MCP_FAILURES_PER_ADDRESS } from '../../src/agents/http.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { testApp, type TestApp } from '../helpers/app.ts';
import type { LightMyRequestResponse } from 'fastify';
import { counter, nearLimit } from '../hardening/rate-limit-support.ts';

/** 429 in the shape of every non-OAuth path, with Retry-After and no Bearer challenge (the token may be fine). */
function assertTooMany(res: LightMyRequestResponse): void {
  assert.equal(res.statusCode, 429, res.body);
  assert.deepEqual(Object.keys(res.json()).sort(), ['error', 'message']);
  assert.equal(res.json<{ error: string }>().error, 'too_many_requests');
  assert.equal(res.headers['retry-after'], String(MCP_FAILURES_PER_ADDRESS.windowMs / 1000));
  assert.equal(res.headers['www-authenticate'], undefined);
  assert.equal(res.headers['x-frame-options'], 'DENY');
}

describe('/mcp refusals', () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let f: TestApp;

  before(async () => {
    database = await sqliteDatabase();
    f = await testApp(database);
  });
  after(async () => {
    await f?.app.close();
    await database?.dispose();
  });

  const post = (address: string, authorization?: string) =>
    f.app.inject({
      method: 'POST',
      url: '/mcp',
      remoteAddress: address,
      headers: { host: 'signet.test', 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...(authorization ? { authorization } : {}) },
      payload: '{"jsonrpc":"2.0","id":1,"method":"tools/list"}',
    });

  test(`${MCP_FAILURES_PER_ADDRESS.max} requests with tokens Signet never issued from one address get the usual 401 challenge, the next 429 without a Bearer challenge; requests without a token do not count`, async () => {
    const flood = '192.0.2.50';
    await nearLimit(f, MCP_FAILURES_PER_ADDRESS, flood, 3);
    for (let i = 0; i < 3; i++) {
      const refused = await post(flood, `Bearer made-up-${i}`);
      assert.equal(refused.statusCode, 401);
      assert.match(String(refused.headers['www-authenticate']), /error="invalid_token"/);
      assert.deepEqual(Object.keys(refused.json()).sort(), ['error', 'message'], 'the shape of every non-OAuth path');
    }
    // Discovery (no token) is every agent's first step: never counted, never refused by the limit.
    const discovery = await post(flood);
    assert.equal(discovery.statusCode, 401);
    assert.equal(discovery.headers['www-authenticate'], 'Bearer resource_metadata="http://signet.test/.well-known/oauth-protected-resource/mcp"');
    assertTooMany(await post(flood, 'Bearer one-more'));
    assertTooMany(await post(flood, 'Bearer and-another'));
    assert.equal((await post('192.0.2.51', 'Bearer elsewhere')).statusCode, 401, 'another address is not affected');
    assert.equal(await counter(database, `${MCP_FAILURES_PER_ADDRESS.name}:192.0.2.51`), 1);
  });
});
