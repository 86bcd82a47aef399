// Audit events: "each with time, account, application, client address and outcome, never a secret";
// kept in the database with a retention setting, written as structured log lines, counted for
// Prometheus; listed newest first with filters.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { Registry } from 'prom-client';
import { countTokensIssued, registerAuditCounters } from '../../src/audit/audit-metrics.ts';
import { AUDIT_TYPES, listAuditEvents, recordAudit, safeDetail, type AuditDetail } from '../../src/audit/audit.ts';
import { forgetOldAuditEvents } from '../../src/audit/retention.ts';
import { DAY, manualClock } from '../../src/config/clock.ts';
import { parseSettings, SettingsError } from '../../src/config/settings.ts';
import { createLogger } from '../../src/web/logging.ts';
import { forEachDatabase, sqliteDatabase } from '../helpers/databases.ts';

function captureLog() {
  const lines: string[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString('utf8'));
      done();
    },
  });
  return { logger: createLogger('info', sink), lines };
}

test('detail keeps only whitelisted keys with values of their kind: a password, token, secret or e-mail address can never get in', () => {
  const detail = {
    fields: ['email', 'name'],
    reason: 'email_taken',
    revoked: 'user_client_tokens',
    revoked_access_tokens: 2,
    password: 'hunter2',
    refresh_token: 'abc=',
    client_secret: 's3cret',
    email: 'ada@example.com',
  } as AuditDetail;
  assert.deepEqual(safeDetail(detail), { fields: ['email', 'name'], reason: 'email_taken', revoked: 'user_client_tokens', revoked_access_tokens: 2 });
  assert.deepEqual(
    safeDetail({ fields: ['ada@example.com'], reason: 'Hunter2 was wrong', revoked_access_tokens: -1, scope: 'openid"; drop', key_id: 'ak_xyz' }),
    undefined,
    'a whitelisted key with a value that does not fit is dropped too',
  );
});

test('the audit types include every type the contract names', () => {
  for (const type of ['signin.succeeded', 'signin.failed', 'signin.locked', 'password.changed', 'password.reset', 'consent.granted', 'consent.withdrawn', 'token.replay_detected']) {
    assert.ok((AUDIT_TYPES as readonly string[]).includes(type), type);
  }
  assert.ok(AUDIT_TYPES.some((t) => t.startsWith('account.')) && AUDIT_TYPES.some((t) => t.startsWith('client.')));
});

test('Prometheus: signet_signins_total{outcome}, signet_tokens_issued_total{grant}, signet_refresh_replays_total', async () => {
  const registry = new Registry();
  registerAuditCounters(registry);
  registerAuditCounters(registry); // twice is harmless
  const value = async (name: string, labels: Record<string, string> = {}) => {
    const metric = (await registry.getMetricsAsJSON()).find((m) => m.name === name);
    const sample = metric?.values.find((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l));
    return sample?.value ?? 0;
  };
  const text = await registry.metrics();
  for (const name of ['signet_signins_total', 'signet_tokens_issued_total', 'signet_refresh_replays_total']) assert.match(text, new RegExp(`# TYPE ${name} counter`));

  const before = { failed: await value('signet_signins_total', { outcome: 'failed' }), replays: await value('signet_refresh_replays_total'), code: await value('signet_tokens_issued_total', { grant: 'authorization_code' }) };
  countTokensIssued('authorization_code');
  assert.equal(await value('signet_tokens_issued_total', { grant: 'authorization_code' }), before.code + 1);
  const db = await sqliteDatabase();
  const clock = manualClock();
  await recordAudit(db.db, clock, { type: 'signin.failed', sub: 's', ip: '::1', outcome: 'failure' });
  await recordAudit(db.db, clock, { type: 'token.replay_detected', sub: 's', clientId: 'c', outcome: 'refused', detail: { revoked: 'user_client_tokens' } });
  assert.equal(await value('signet_signins_total', { outcome: 'failed' }), before.failed + 1);
  assert.equal(await value('signet_refresh_replays_total'), before.replays + 1);
  await db.dispose();
});

test('settings: SIGNET_AUDIT_RETENTION_DAYS defaults to 90; SIGNET_ADMIN_ADDR to 127.0.0.1:9465, off disables, never the public port', () => {
  const defaults = parseSettings({}, '/srv/signet');
  assert.equal(defaults.auditRetentionDays, 90);
  assert.deepEqual(defaults.admin, { host: '127.0.0.1', port: 9465 });
  assert.equal(parseSettings({ SIGNET_ADMIN_ADDR: 'off' }).admin, 'off');
  assert.deepEqual(parseSettings({ SIGNET_ADMIN_ADDR: '[::1]:9999', SIGNET_AUDIT_RETENTION_DAYS: '7' }).admin, { host: '::1', port: 9999 });
  const wrong: Array<[Record<string, string>, string]> = [
    [{ SIGNET_AUDIT_RETENTION_DAYS: '0' }, 'SIGNET_AUDIT_RETENTION_DAYS'],
    [{ SIGNET_AUDIT_RETENTION_DAYS: 'forever' }, 'SIGNET_AUDIT_RETENTION_DAYS'],
    [{ SIGNET_ADMIN_ADDR: '9465' }, 'SIGNET_ADMIN_ADDR'],
    [{ SIGNET_ADMIN_ADDR: '127.0.0.1:70000' }, 'SIGNET_ADMIN_ADDR'],
    [{ SIGNET_ADMIN_ADDR: '0.0.0.0:8080' }, 'SIGNET_ADMIN_ADDR'],
    [{ SIGNET_PORT: '9000', SIGNET_ADMIN_ADDR: '127.0.0.1:9000' }, 'SIGNET_ADMIN_ADDR'],
  ];
  for (const [env, variable] of wrong) {
    assert.throws(() => parseSettings(env), (error: unknown) => error instanceof SettingsError && error.variable === variable, JSON.stringify(env));
  }
});

forEachDatabase('audit events', (open) => {
  test('recordAudit keeps time, account, application, client address, outcome and who acted; one log line with event "audit"', async () => {
    const { db } = await open();
    const clock = manualClock(Date.UTC(2026, 2, 1, 12));
    const { logger, lines } = captureLog();
    const stored = await recordAudit(db, clock, { type: 'consent.withdrawn', sub: 'sub-1', clientId: 'client-1', ip: '203.0.113.9', outcome: 'success', detail: { revoked: 'user_client_tokens' } }, logger);
    assert.deepEqual(
      { ...stored, id: typeof stored.id },
      { id: 'string', type: 'consent.withdrawn', at: '2026-03-01T12:00:00.000Z', sub: 'sub-1', client_id: 'client-1', ip: '203.0.113.9', outcome: 'success', actor: null, detail: { revoked: 'user_client_tokens' } },
    );
    const [line] = lines.map((l) => JSON.parse(l));
    assert.equal(line.event, 'audit');
    assert.deepEqual(line.audit, stored);
    await recordAudit(db, clock, { type: 'signin.failed', outcome: 'failure', detail: { password: 'hunter2' } as AuditDetail }, logger);
    assert.ok(!lines.join('').includes('hunter2'));
    assert.equal((await listAuditEvents(db, {})).events[0]?.detail, null);
  });

  test('listed newest first, filtered by sub, client_id, exact type or family (account.*), a page at a time', async () => {
    const { db } = await open();
    const clock = manualClock();
    const record = (type: Parameters<typeof recordAudit>[2]['type'], sub: string | null, clientId: string | null) => recordAudit(db, clock, { type, sub, clientId, outcome: 'success', actor: 'cli' });
    await record('account.created', 'a', null);
    await record('signin.succeeded', 'a', null);
    await record('consent.granted', 'a', 'c1');
    await record('account.updated', 'b', null);
    await record('client.updated', null, 'c1');
    await record('account.deleted', 'a', null);
    const types = async (filter: Parameters<typeof listAuditEvents>[1]) => (await listAuditEvents(db, filter)).events.map((e) => e.type);
    assert.deepEqual(await types({}), ['account.deleted', 'client.updated', 'account.updated', 'consent.granted', 'signin.succeeded', 'account.created']);
    assert.deepEqual(await types({ sub: 'a' }), ['account.deleted', 'consent.granted', 'signin.succeeded', 'account.created']);
    assert.deepEqual(await types({ clientId: 'c1' }), ['client.updated', 'consent.granted']);
    assert.deepEqual(await types({ type: 'account.*' }), ['account.deleted', 'account.updated', 'account.created']);
    assert.deepEqual(await types({ type: 'account.*', sub: 'a' }), ['account.deleted', 'account.created']);
    assert.deepEqual(await types({ type: 'signin.succeeded' }), ['signin.succeeded']);
    assert.deepEqual(await types({ type: 'acc%.*' }), [], 'a family is a plain prefix, no wildcards');

    const seen: string[] = [];
    let cursor: string | undefined;
    do {
      const page = await listAuditEvents(db, {}, { limit: 4, cursor });
      seen.push(...page.events.map((e) => e.type));
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
    assert.equal(seen.length, 6);
    assert.deepEqual(seen, await types({}));
    await assert.rejects(listAuditEvents(db, {}, { cursor: 'garbage' }), /cursor/);
  });

  test('retention: events older than SIGNET_AUDIT_RETENTION_DAYS are swept, younger ones stay', async () => {
    const { db } = await open();
    const clock = manualClock();
    await recordAudit(db, clock, { type: 'signin.failed', outcome: 'failure' });
    clock.advance(30 * DAY);
    await recordAudit(db, clock, { type: 'signin.succeeded', outcome: 'success' });
    clock.advance(61 * DAY);
    assert.equal(await forgetOldAuditEvents(db, clock, 90), 1);
    assert.deepEqual((await listAuditEvents(db, {})).events.map((e) => e.type), ['signin.succeeded']);
    assert.equal(await forgetOldAuditEvents(db, clock, 90), 0);
    // ids are never reused after a sweep: the cursor order stays true
    const next = await recordAudit(db, clock, { type: 'signin.failed', outcome: 'failure' });
    assert.ok(Number(next.id) > 2);
  });
});
