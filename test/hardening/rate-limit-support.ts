// Helpers of the rate-limit tests (rate-limits.test.ts, rate-limits-token.test.ts): requests from a
// chosen address, the 429's shape, counters set near their limit, and answers as fetch Responses for
// client libraries.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import type { FailureLimit } from '../../src/oauth/rate-limits.ts';
import type { TestDatabase } from '../helpers/databases.ts';
import { assertFrameHeaders } from '../oauth/authorize-support.ts';
import { HOST, type OAuthFixture } from '../oauth/token-fixtures.ts';

type Injectable = Pick<OAuthFixture, 'app'>;

export function postFrom(f: Injectable, address: string, url: string, form: Record<string, string>): Promise<LightMyRequestResponse> {
  return f.app.inject({
    method: 'POST',
    url,
    remoteAddress: address,
    headers: { host: HOST, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(form).toString(),
  });
}

export function userinfoFrom(f: Injectable, address: string, authorization?: string): Promise<LightMyRequestResponse> {
  return f.app.inject({ method: 'GET', url: '/oauth/userinfo', remoteAddress: address, headers: { host: HOST, ...(authorization === undefined ? {} : { authorization }) } });
}

/** The 429: OAuth error shape, Retry-After in seconds, never cached, the security headers, and no Bearer challenge. */
export function assertTooMany(res: LightMyRequestResponse, retryAfterSeconds: number): void {
  assert.equal(res.statusCode, 429, res.body);
  const body = res.json<{ error: string; error_description: string }>();
  assert.deepEqual(Object.keys(body).sort(), ['error', 'error_description']);
  assert.equal(body.error, 'temporarily_unavailable');
  assert.match(body.error_description, new RegExp(`Try again in ${retryAfterSeconds} seconds\\.$`));
  assert.equal(res.headers['retry-after'], String(retryAfterSeconds));
  assert.equal(res.headers['cache-control'], 'no-store');
  assert.equal(res.headers['www-authenticate'], undefined);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  assertFrameHeaders(res.headers);
}

/**
 * Puts a counter `below` refusals short of its limit, as if the earlier refusals of the window had been
 * counted (each real one costs a database write; a thousand of them per test would take most of a minute).
 */
export async function nearLimit(f: Pick<OAuthFixture, 'deps'>, limit: FailureLimit, subject: string, below = 5): Promise<void> {
  await f.deps.db.insertInto('signin_throttle').values({ key: `${limit.name}:${subject}`, failures: limit.max - below, window_started_at: f.deps.clock(), locked_until: null }).execute();
}

export async function counter(database: TestDatabase, key: string): Promise<number | undefined> {
  const row = await database.db.selectFrom('signin_throttle').select('failures').where('key', '=', key).executeTakeFirst();
  return row === undefined ? undefined : Number(row.failures);
}

/** An inject answer as a fetch Response, to hand to a client library. */
export function asResponse(res: LightMyRequestResponse): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(res.headers)) if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : String(value));
  return new Response(new Uint8Array(res.rawPayload), { status: res.statusCode, headers });
}
