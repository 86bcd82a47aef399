import assert from 'node:assert/strict';
import { test } from 'node:test';
import { systemClock } from '../../src/config/clock.ts';
import { deriveKeys } from '../../src/config/keys.ts';
import * as clients from '../../src/clients/clients.ts';
import { forEachDatabase } from '../helpers/databases.ts';

const key = deriveKeys('clients-test-secret-clients-test-secret').tokenHash;

test('"new client ids never begin with - or _": 10,000 generated ids are 32 lower-case hex characters (128 bits)', () => {
  const seen = new Set<string>();
  for (let i = 0; i < 10_000; i++) {
    const id = clients.newClientId();
    assert.match(id, /^[0-9a-f]{32}$/);
    seen.add(id);
  }
  assert.equal(seen.size, 10_000);
});

forEachDatabase('application registry', (open) => {
  test('client_secret is "shown once, stored only as a hash": the stored value is not the plaintext', async () => {
    const { db } = await open();
    const { client, clientSecret } = await clients.registerClient(db, systemClock, key, { name: 'App', redirectUris: ['https://app.example/cb'] });
    assert.ok(clientSecret);
    assert.equal(clientSecret.length, 44);
    const row = await db.selectFrom('clients').selectAll().where('client_id', '=', client.clientId).executeTakeFirstOrThrow();
    assert.notEqual(row.secret_hash, clientSecret);
    assert.ok(!JSON.stringify(row).includes(clientSecret));
    const stored = await clients.getClient(db, client.clientId);
    assert.equal(clients.clientSecretMatches(key, stored, clientSecret), true);
    assert.equal(clients.clientSecretMatches(key, stored, clientSecret.slice(0, -2) + 'x='), false);
  });

  test('registered record round-trips: redirect URIs byte for byte, scopes, origins, public flag', async () => {
    const { db } = await open();
    const uris = ['https://app.example/cb?x=1', 'com.example.app:/oauth'];
    const { client, clientSecret } = await clients.registerClient(db, systemClock, key, {
      name: ' Public App ',
      redirectUris: uris,
      scopes: ['email', 'openid', 'phone'],
      isPublic: true,
      allowedOrigins: ['https://app.example'],
    });
    assert.equal(clientSecret, undefined);
    const shown = clients.toView(await clients.getClient(db, client.clientId));
    assert.deepEqual(shown.redirect_uris, uris);
    assert.deepEqual(shown.scopes, ['openid', 'email', 'phone']);
    assert.equal(shown.public, true);
    assert.equal(shown.name, 'Public App');
    assert.deepEqual(shown.allowed_origins, ['https://app.example']);
    assert.equal(clients.clientSecretMatches(key, await clients.getClient(db, client.clientId), 'anything'), false, 'a public client cannot authenticate with a secret');
  });

  test('registration refuses bad input with a message and writes nothing', async () => {
    const { db } = await open();
    const cases: Array<[clients.ClientInput, string]> = [
      [{ name: '', redirectUris: ['https://a.example/cb'] }, 'invalid_name'],
      [{ name: 'A', redirectUris: [] }, 'invalid_redirect_uri'],
      [{ name: 'A', redirectUris: ['/relative'] }, 'invalid_redirect_uri'],
      [{ name: 'A', redirectUris: ['https://a.example/cb#frag'] }, 'invalid_redirect_uri'],
      [{ name: 'A', redirectUris: ['javascript:alert(1)'] }, 'invalid_redirect_uri'],
      [{ name: 'A', redirectUris: ['https://a.example/cb'], scopes: ['openid', 'admin'] }, 'invalid_scope'],
      [{ name: 'A', redirectUris: ['https://a.example/cb'], allowedOrigins: ['https://a.example/'] }, 'invalid_origin'],
    ];
    for (const [input, code] of cases) {
      await assert.rejects(clients.registerClient(db, systemClock, key, input), (e: unknown) => e instanceof clients.ClientError && e.code === code);
    }
    // Nothing but the built-in application of `signet login` (migration 0018).
    assert.deepEqual((await clients.listClients(db)).map((c) => c.clientId), ['signet-cli']);
  });

  test('rotate-secret: the old secret stops working at once', async () => {
    const { db } = await open();
    const { client, clientSecret } = await clients.registerClient(db, systemClock, key, { name: 'App', redirectUris: ['https://app.example/cb'] });
    const rotated = await clients.rotateClientSecret(db, systemClock, key, client.clientId);
    assert.equal(clients.clientSecretMatches(key, rotated.client, clientSecret!), false);
    assert.equal(clients.clientSecretMatches(key, rotated.client, rotated.clientSecret), true);
  });

  test('disable, enable, update and delete', async () => {
    const { db } = await open();
    const { client } = await clients.registerClient(db, systemClock, key, { name: 'App', redirectUris: ['https://app.example/cb'] });
    assert.equal((await clients.updateClient(db, systemClock, client.clientId, { enabled: false })).enabled, false);
    assert.equal((await clients.updateClient(db, systemClock, client.clientId, { enabled: true })).enabled, true);
    const updated = await clients.updateClient(db, systemClock, client.clientId, { name: 'Renamed', redirectUris: ['https://b.example/cb'] });
    assert.equal(updated.name, 'Renamed');
    assert.deepEqual(updated.redirectUris, ['https://b.example/cb']);
    await clients.deleteClient(db, client.clientId);
    await assert.rejects(clients.getClient(db, client.clientId), (e: unknown) => e instanceof clients.ClientError && e.code === 'not_found');
  });

  test('every lookup reads the row: a change another process wrote straight to the database (disabled, new lists) shows at the next lookup; the lists handed out are copies', async () => {
    const { db } = await open();
    const { client } = await clients.registerClient(db, systemClock, key, { name: 'App', redirectUris: ['https://app.example/cb'], scopes: ['openid', 'profile'], allowedOrigins: ['https://app.example'] });
    const first = await clients.getClient(db, client.clientId);
    first.redirectUris.push('https://evil.example/cb');
    first.scopes.length = 0;
    const again = await clients.getClient(db, client.clientId);
    assert.deepEqual([again.redirectUris, again.scopes, again.allowedOrigins], [['https://app.example/cb'], ['openid', 'profile'], ['https://app.example']], 'what a caller did to its copy changes nothing');
    // As `signet client disable` / `update` in another process would leave it:
    await db
      .updateTable('clients')
      .set({ enabled: 0, redirect_uris: JSON.stringify(['https://b.example/cb']), scopes: JSON.stringify(['openid']), allowed_origins: '[]' })
      .where('client_id', '=', client.clientId)
      .execute();
    const changed = await clients.getClient(db, client.clientId);
    assert.equal(changed.enabled, false);
    assert.deepEqual([changed.redirectUris, changed.scopes, changed.allowedOrigins], [['https://b.example/cb'], ['openid'], []]);
  });
});
