// Audit events of a real flow through the app: "who signed in, failed or was locked out, consented,
// which refresh token was replayed — each with its time, account, application, client address and
// outcome, never a secret". Recording must not fail the request it describes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { auditCounters } from '../../src/audit/audit-metrics.ts';
import { listAuditEvents, type AuditEventView } from '../../src/audit/audit.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { EMAIL, flowSetup, PASSWORD, REDIRECT_URI, TinyBrowser, type Flow } from '../oauth/authorize-support.ts';
import type { TokenJson } from '../oauth/token-fixtures.ts';

const WRONG_PASSWORD = 'not the right horse';
/** app.inject's client address */
const IP = '127.0.0.1';

async function allEvents(flow: Flow): Promise<AuditEventView[]> {
  return (await listAuditEvents(flow.deps.db, {}, { limit: 500 })).events.reverse();
}

function tokenRequest(flow: Flow, form: Record<string, string>) {
  return flow.app.inject({
    method: 'POST',
    url: '/oauth/token',
    headers: { host: flow.host, 'content-type': 'application/x-www-form-urlencoded' },
    payload: new URLSearchParams(form).toString(),
  });
}

/** A counter's value for one label set (0 before its first count). */
async function counted(counter: { get(): Promise<{ values: Array<{ value: number; labels: Partial<Record<string, string | number>> }> }> }, labels: Record<string, string> = {}): Promise<number> {
  const { values } = await counter.get();
  return values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l))?.value ?? 0;
}

async function counters() {
  return {
    failed: await counted(auditCounters.signins, { outcome: 'failed' }),
    succeeded: await counted(auditCounters.signins, { outcome: 'succeeded' }),
    byCode: await counted(auditCounters.tokensIssued, { grant: 'authorization_code' }),
    byRefresh: await counted(auditCounters.tokensIssued, { grant: 'refresh_token' }),
    replays: await counted(auditCounters.refreshReplays),
  };
}

/** authorize → a wrong password → the right one → consent; returns the code from the callback. */
async function signInAndConsent(flow: Flow, browser: TinyBrowser): Promise<string> {
  const id = await browser.authorize({ scope: 'openid profile email' });
  assert.equal((await browser.signIn(id, EMAIL, WRONG_PASSWORD)).statusCode, 401);
  assert.equal((await browser.signIn(id)).statusCode, 303);
  const allowed = await browser.consent(id, 'allow');
  assert.equal(allowed.statusCode, 303, allowed.body);
  const code = new URL(String(allowed.headers.location)).searchParams.get('code');
  assert.ok(code, 'the callback carries a code');
  return code;
}

forEachDatabase('audit events of the sign-in, consent and token flow', (open) => {
  test('a wrong password, the right one, consent, code redemption, a refresh and a refresh replay are recorded in order with sub, client_id, ip and outcome; no event or log line holds a secret', async () => {
    const flow = await flowSetup(await open());
    const before = await counters();
    const browser = new TinyBrowser(flow);
    const code = await signInAndConsent(flow, browser);

    const redeemed = await tokenRequest(flow, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: flow.clientId, client_secret: flow.clientSecret });
    assert.equal(redeemed.statusCode, 200, redeemed.body);
    const first = redeemed.json<TokenJson>();
    const refreshed = await tokenRequest(flow, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: flow.clientId, client_secret: flow.clientSecret });
    assert.equal(refreshed.statusCode, 200, refreshed.body);
    const second = refreshed.json<TokenJson>();
    const replayed = await tokenRequest(flow, { grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: flow.clientId, client_secret: flow.clientSecret });
    assert.equal(replayed.statusCode, 400, replayed.body);
    const codeAgain = await tokenRequest(flow, { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: flow.clientId, client_secret: flow.clientSecret });
    assert.equal(codeAgain.statusCode, 400, codeAgain.body);

    const events = await allEvents(flow);
    const about = { sub: flow.sub, client_id: flow.clientId, ip: IP, actor: null };
    assert.deepEqual(
      events.map(({ type, sub, client_id, ip, outcome, actor, detail }) => ({ type, sub, client_id, ip, outcome, actor, detail })),
      [
        { ...about, type: 'signin.failed', outcome: 'failure', detail: null },
        { ...about, type: 'signin.succeeded', outcome: 'success', detail: null },
        { ...about, type: 'consent.granted', outcome: 'success', detail: { scope: 'openid profile email' } },
        // the replay revoked the one chain (both of its access tokens, and its refresh token)
        { ...about, type: 'token.replay_detected', outcome: 'refused', detail: { revoked: 'user_client_tokens', revoked_chains: 1 } },
        // the code's chain was revoked by the replay already
        { ...about, type: 'code.replay_detected', outcome: 'refused', detail: { revoked: 'code_chain', revoked_chains: 0 } },
      ],
    );
    const at = events.map((e) => Date.parse(e.at));
    assert.ok(at.every((t) => Number.isFinite(t)), 'every event has its time');

    const after = await counters();
    assert.deepEqual(
      { failed: after.failed - before.failed, succeeded: after.succeeded - before.succeeded, byCode: after.byCode - before.byCode, byRefresh: after.byRefresh - before.byRefresh, replays: after.replays - before.replays },
      { failed: 1, succeeded: 1, byCode: 1, byRefresh: 1, replays: 1 },
      'signet_signins_total, signet_tokens_issued_total and signet_refresh_replays_total counted the flow',
    );

    const auditLines = flow.logs.filter((line) => line.includes('"event":"audit"'));
    assert.equal(auditLines.length, events.length, 'each event is also one log line');
    const secrets = { password: PASSWORD, wrongPassword: WRONG_PASSWORD, clientSecret: flow.clientSecret, code, firstAccess: first.access_token, firstRefresh: first.refresh_token, secondAccess: second.access_token, secondRefresh: second.refresh_token };
    assert.ok(flow.logs.some((line) => line.includes('tokens issued')), 'the scan below reads the request logs (debug level)');
    const everything = [JSON.stringify(events), ...flow.logs].join('\n');
    for (const [what, value] of Object.entries(secrets)) {
      assert.ok(!everything.includes(value), `no event, detail or log line holds the ${what}`);
      // base64url values also appear without their padding in some encodings
      assert.ok(!everything.includes(value.replace(/=+$/, '')), `no event, detail or log line holds the ${what} (unpadded)`);
    }
    assert.ok(!JSON.stringify(events).includes(EMAIL), 'no event holds the e-mail address');
  });

  test('the failure that starts a lock is signin.locked with retry_at; an attempt while it holds is signin.throttled (refused) — the same for an unknown account, without a sub', async () => {
    const flow = await flowSetup(await open());
    const browser = new TinyBrowser(flow);
    for (const identifier of [EMAIL, 'nobody@example.com']) {
      // One account from one address: waits from the 5th failure (each skipped here), the 10th locks.
      for (let n = 1; n <= 10; n++) {
        const res = await browser.signIn(undefined, identifier, WRONG_PASSWORD);
        assert.equal(res.statusCode, 401, `attempt ${n}`);
        if (n < 10) flow.clock.advance(Number(res.headers['retry-after'] ?? 0) * 1000);
      }
      const refused = await browser.signIn(undefined, identifier, PASSWORD);
      assert.equal(refused.statusCode, 429, 'refused unchecked while the lock holds');
      flow.clock.advance(Number(refused.headers['retry-after']) * 1000);
    }
    const events = await allEvents(flow);
    for (const sub of [flow.sub, null]) {
      const mine = events.filter((e) => e.sub === sub);
      assert.deepEqual(mine.map((e) => e.type), [...Array<string>(9).fill('signin.failed'), 'signin.locked', 'signin.throttled'], sub ?? 'unknown account');
      const [locked, throttled] = mine.slice(-2) as [AuditEventView, AuditEventView];
      assert.deepEqual([locked.outcome, throttled.outcome], ['failure', 'refused']);
      assert.ok(mine.every((e) => e.client_id === null && e.ip === IP), 'no pending request, so no application; the client address');
      assert.match(String(locked.detail?.retry_at), /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      assert.equal(throttled.detail?.retry_at, locked.detail?.retry_at, 'the refusal names when the lock ends');
      assert.equal(Date.parse(String(locked.detail?.retry_at)) - Date.parse(locked.at), 15 * 60 * 1000, 'a 15-minute lock');
    }
  });

  test('recording must not fail the request: with the audit table gone, sign-in, consent and the token endpoint answer as usual and the failure is logged', async () => {
    const flow = await flowSetup(await open());
    await flow.deps.db.schema.dropTable('audit_events').execute();
    const browser = new TinyBrowser(flow);
    const code = await signInAndConsent(flow, browser);
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT_URI, client_id: flow.clientId, client_secret: flow.clientSecret };
    assert.equal((await tokenRequest(flow, form)).statusCode, 200);
    const again = await tokenRequest(flow, form);
    assert.equal(again.statusCode, 400, 'a code presented twice is still invalid_grant, not a 500');
    assert.equal(again.json<{ error: string }>().error, 'invalid_grant');
    const failures = flow.logs.filter((line) => line.includes('an audit event could not be recorded'));
    assert.deepEqual(
      failures.map((line) => (JSON.parse(line) as { auditType: string }).auditType),
      ['signin.failed', 'signin.succeeded', 'consent.granted', 'code.replay_detected'],
    );
  });
});
