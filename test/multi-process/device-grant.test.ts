// issue 43, "works on several nodes": two real `signet serve` processes on one PostgreSQL — a device
// code started on one is entered and approved on the other, and redeemed on the first; the polling
// interval is shared state too (a poll on one node makes an immediate poll on the other too soon).
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { createAccount } from '../../src/accounts/accounts.ts';
import { registerClient } from '../../src/clients/clients.ts';
import { systemClock } from '../../src/config/clock.ts';
import { deriveKeys } from '../../src/config/keys.ts';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { DEVICE_CODE_GRANT_TYPE } from '../../src/oauth/device/device-authorizations.ts';
import { fetchBrowser } from '../helpers/fetch-browser.ts';
import { createPostgresDatabase, postgresUnavailableReason, skipUnlessAvailable } from '../helpers/services.ts';
import { startServeAtOwnOrigin, stop, type ServeAtOwnOrigin as Server } from './scale-out-support.ts';

const SECRET = 'multi-process-shared-secret-0123456789abcdef';
const PERSON = { email: 'ada@example.com', password: 'analytical-engine' };

const postForm = (url: string, form: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body: new URLSearchParams(form).toString() });

const pgSkip = skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason());

describe('issue 43: the device grant across two server processes on one PostgreSQL', { skip: pgSkip }, () => {
  let created: { url: string; drop(): Promise<void> };
  let database: DatabaseHandle;
  let dataDir: string;
  const servers: Server[] = [];
  let clientId: string;

  before(async () => {
    created = await createPostgresDatabase();
    dataDir = mkdtempSync(path.join(tmpdir(), 'signet-devices-'));
    database = openDatabase({ kind: 'postgres', url: created.url, poolSize: 2 });
    await migrate(database.db);
    await createAccount(database.db, systemClock, { email: PERSON.email, name: 'Ada', password: PERSON.password });
    clientId = (await registerClient(database.db, systemClock, deriveKeys(SECRET).tokenHash, { name: 'TV', redirectUris: [], scopes: ['openid', 'profile'], isPublic: true, grants: ['device_code'] })).client.clientId;
    for (const name of ['a', 'b']) servers.push(await startServeAtOwnOrigin(name, { databaseUrl: created.url, secret: SECRET, dataDir: path.join(dataDir, name) }));
  });

  after(async () => {
    await Promise.all(servers.map((server) => stop(server)));
    await database?.close();
    await created?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  const start = async (server: Server) => {
    const res = await postForm(`${server.baseUrl}/oauth/device_authorization`, { client_id: clientId });
    assert.equal(res.status, 200);
    return (await res.json()) as { device_code: string; user_code: string };
  };
  const poll = async (server: Server, deviceCode: string) => {
    const res = await postForm(`${server.baseUrl}/oauth/token`, { grant_type: DEVICE_CODE_GRANT_TYPE, device_code: deviceCode, client_id: clientId });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  test('"a device code started on one node and approved on the other", redeemed on the first', async () => {
    const [a, b] = servers as [Server, Server];
    const device = await start(a);
    // The person, at node b: the code, sign-in (which comes back), Allow.
    const person = fetchBrowser(b.baseUrl);
    const entered = await person.submit('/device', '/device', { user_code: device.user_code });
    assert.equal(entered.res.status, 303, entered.body.slice(0, 300));
    const confirm = entered.res.headers.get('location')!;
    const toSignIn = await person.get(confirm);
    assert.equal(toSignIn.res.status, 302);
    const signin = toSignIn.res.headers.get('location')!;
    const signedIn = await person.submit(signin, '/signin', { identifier: PERSON.email, password: PERSON.password, return: confirm });
    assert.equal(signedIn.res.headers.get('location'), confirm);
    const consent = await person.get(confirm);
    assert.equal(consent.res.status, 200);
    const request = /name="request" value="([^"]+)"/.exec(consent.body)![1]!;
    const allowed = await person.submit(confirm, '/device/confirm', { request, decision: 'allow', scope: 'profile' });
    assert.equal(allowed.res.status, 200);
    assert.match(allowed.body, /You can return to your device/);
    // The device, at node a.
    const tokens = await poll(a, device.device_code);
    assert.equal(tokens.status, 200, JSON.stringify(tokens.body));
    assert.equal(tokens.body.scope, 'openid profile');
    const me = await fetch(`${b.baseUrl}/oauth/userinfo`, { headers: { authorization: `Bearer ${String(tokens.body.access_token)}` } });
    assert.equal(me.status, 200);
    // Single use on every node.
    assert.equal((await poll(b, device.device_code)).body.error, 'invalid_grant');
  });

  test('RFC 8628 §3.5 slow_down across nodes: a poll on one node makes an immediate poll on the other too soon', async () => {
    const [a, b] = servers as [Server, Server];
    const device = await start(b);
    assert.equal((await poll(a, device.device_code)).body.error, 'authorization_pending');
    assert.equal((await poll(b, device.device_code)).body.error, 'slow_down');
  });
});
