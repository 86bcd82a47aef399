// issue 35: "Import of an export into a fresh instance with the same SIGNET_SECRET: same people, same
// passwords, same application ids and secrets" — and an export without --include-secrets holds no
// hash, and no export ever holds tokens, sessions or second-factor secrets.
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { after, test } from 'node:test';
import { addRole, rolesOf } from '../../src/accounts/roles.ts';
import { beginTotpSetup } from '../../src/accounts/factors/totp.ts';
import { exportAsOperator, importAsOperator, type OperatorContext } from '../../src/admin/operator-changes.ts';
import { exportLines } from '../../src/portability/export.ts';
import { linkIdentity, listLinks } from '../../src/accounts/upstream/links.ts';
import { addProvider, enabledProviderWithSecret } from '../../src/accounts/upstream/providers.ts';
import { findClient, registerClient } from '../../src/clients/clients.ts';
import { testApp, TEST_BASE_URL } from '../helpers/app.ts';
import { forEachDatabase } from '../helpers/databases.ts';
import { EMAIL, flowSetup, PASSWORD, REDIRECT_URI, type Flow } from '../oauth/authorize-support.ts';
import { bcryptOf } from './foreign-files.ts';
import { signInThroughAuthorize } from './sign-in.ts';

function operator(f: Pick<Flow, 'deps' | 'clock'>): OperatorContext {
  return { db: f.deps.db, clock: f.clock, hashKey: f.deps.keys.tokenHash, objects: f.deps.objects, actor: 'cli', ip: null };
}

async function collect(lines: AsyncIterable<string>): Promise<string> {
  let text = '';
  for await (const line of lines) text += line;
  return text;
}

forEachDatabase('export, then import into a fresh instance', (open) => {
  const apps: Array<{ close(): Promise<unknown> }> = [];
  after(async () => Promise.all(apps.map((a) => a.close())));

  test('"export → import into a fresh instance → the same people sign in and the same application exchanges a code with its old secret"', async () => {
    const source = await flowSetup(await open());
    apps.push(source.app);
    await addRole(source.deps.db, source.clock, source.sub, 'operator');
    // someone imported from elsewhere who has not signed in yet: their foreign hash moves along
    const csv = `email,name,email_verified,password_hash\nwaiting@example.com,Wai,true,${await bcryptOf('still bcrypt here')}\n`;
    await importAsOperator(operator(source), Readable.from([csv]), { dryRun: false });

    // an upstream identity provider and the person's link to it (issue 33)
    await addProvider(source.deps.db, source.clock, source.deps.keys.upstreamSecret, { slug: 'corp', issuer: 'https://login.corp.example', clientId: 'signet-at-corp', clientSecret: 'corp client secret' });
    await linkIdentity(source.deps.db, source.clock, { slug: 'corp' }, { sub: 'corp-user-42', email: EMAIL }, source.sub);

    const exported = await collect(await exportAsOperator(operator(source), { includeSecrets: true }));
    const records = exported.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.equal(records[0]!['type'], 'signet-export');
    assert.deepEqual(records.slice(1).map((r) => r['type']), ['account', 'account', 'client', 'provider', 'link'], 'accounts, applications, then providers and links');

    // a fresh instance with the same SIGNET_SECRET (testApp derives the same keys)
    const target = await testApp(await open());
    apps.push(target.app);
    const dry = await importAsOperator(operator(target), Readable.from([exported]), { dryRun: true });
    assert.deepEqual(dry.summary, { created: 5, updated: 0, skipped: 0, errors: [] }, 'a dry run into the fresh instance counts everything, the link included');
    const { summary, format } = await importAsOperator(operator(target), Readable.from(exported.match(/[^\n]*\n/g)!), { dryRun: false });
    assert.equal(format, 'signet');
    assert.deepEqual(summary, { created: 5, updated: 0, skipped: 0, errors: [] });
    const provider = await enabledProviderWithSecret(target.deps.db, target.deps.keys.upstreamSecret, 'corp');
    assert.equal(provider?.clientSecret, 'corp client secret', 'the provider comes along with its client secret (sealed, same SIGNET_SECRET)');
    assert.deepEqual((await listLinks(target.deps.db, source.sub)).map((l) => [l.provider, l.upstream_sub]), [['corp', 'corp-user-42']], 'and the person\'s link to it');

    const moved: Flow = {
      ...target,
      clientId: source.clientId,
      clientSecret: source.clientSecret,
      sub: source.sub,
      host: new URL(TEST_BASE_URL).host,
      authorizePath: (params = {}) => `/oauth/authorize?${new URLSearchParams({ client_id: source.clientId, redirect_uri: REDIRECT_URI, ...params }).toString()}`,
    };
    assert.deepEqual(await rolesOf(target.deps.db, source.sub), ['operator'], 'with the same sub and roles');
    assert.equal((await signInThroughAuthorize(moved, 'waiting@example.com', 'still bcrypt here')).status, 303, 'an imported foreign hash still waiting moves along and signs in');
    assert.equal((await signInThroughAuthorize(moved, EMAIL, 'wrong password')).status, 401);
    const native = await signInThroughAuthorize(moved, EMAIL, PASSWORD);
    assert.equal(native.status, 303, 'a person signs in with the same password');

    const exchange = (secret: string) =>
      target.app.inject({
        method: 'POST',
        url: '/oauth/token',
        headers: { host: moved.host, 'content-type': 'application/x-www-form-urlencoded' },
        payload: new URLSearchParams({ grant_type: 'authorization_code', code: native.code!, redirect_uri: REDIRECT_URI, client_id: source.clientId, client_secret: secret }).toString(),
      });
    const refused = await exchange('not-the-secret');
    assert.equal(refused.statusCode, 401, refused.body);
    assert.equal(refused.json<{ error: string }>().error, 'invalid_client', `a wrong secret is refused: ${refused.body}`);
    const tokens = await exchange(source.clientSecret);
    assert.equal(tokens.statusCode, 200, `the same application exchanges the code with its old secret: ${tokens.body}`);
    assert.ok(tokens.json<{ access_token: string }>().access_token);

    const again = await importAsOperator(operator(target), Readable.from([exported]), { dryRun: false });
    assert.deepEqual(again.summary, { created: 0, updated: 5, skipped: 0, errors: [] }, 'importing it again updates, never duplicates');
  });

  test('without --include-secrets no password or secret hash is written; never tokens, sessions or second-factor secrets', async () => {
    const f = await flowSetup(await open());
    apps.push(f.app);
    await signInThroughAuthorize(f, EMAIL, PASSWORD);
    await beginTotpSetup(f.deps.db, f.deps.keys.factorSecret, f.clock, { sub: f.sub, issuer: 'Signet', label: EMAIL });
    const plain = await collect(exportLines(f.deps.db, f.clock, { includeSecrets: false }));
    assert.doesNotMatch(plain, /password_hash|secret_hash|\$argon2/, 'no hash without --include-secrets');
    const full = await collect(exportLines(f.deps.db, f.clock, { includeSecrets: true }));
    const records = full.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    const account = records.find((r) => r['type'] === 'account')!;
    assert.deepEqual(Object.keys(account).sort(), ['created_at', 'disabled', 'email', 'email_verified', 'name', 'password_hash', 'phone_number', 'phone_number_verified', 'picture', 'roles', 'sub', 'type']);
    const client = records.find((r) => r['type'] === 'client')!;
    assert.ok(typeof client['secret_hash'] === 'string' && client['secret_hash'] !== f.clientSecret, 'the keyed hash, never the secret');
    assert.deepEqual([...new Set(records.map((r) => r['type']))], ['signet-export', 'account', 'client'], 'only accounts and applications');
    assert.doesNotMatch(full, /access_token|refresh_token|session|totp|otpauth|recovery|factor/i, 'nothing of tokens, sessions or second factors');
  });

  test('issue 39: "an imported self-registered application stays one" — dynamic and its registration metadata (RFC 7591, or a Client ID Metadata Document with its URL as client_id) go through export and import; a malformed registration is refused on its line', async () => {
    const source = await testApp(await open());
    apps.push(source.app);
    const registered = await source.app.inject({
      method: 'POST',
      url: '/oauth/register',
      headers: { host: new URL(TEST_BASE_URL).host, 'content-type': 'application/json' },
      payload: JSON.stringify({ client_name: 'Agent', redirect_uris: ['http://127.0.0.1:33418/cb'], token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], client_uri: 'https://agent.example', software_id: 'agent-cli' }),
    });
    assert.equal(registered.statusCode, 201, registered.body);
    const dynamicId = registered.json<{ client_id: string }>().client_id;
    const documentId = 'https://agent.example/oauth/client.json';
    await registerClient(source.deps.db, source.clock, source.deps.keys.tokenHash, {
      clientId: documentId,
      name: 'Doc Agent',
      redirectUris: ['https://agent.example/cb'],
      scopes: ['documents'],
      isPublic: true,
      dynamic: { token_endpoint_auth_method: 'none', grant_types: ['authorization_code'], response_types: ['code'], metadata_document: true },
    });
    const exported = await collect(exportLines(source.deps.db, source.clock, { includeSecrets: false }));
    const clients = exported.trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>).filter((r) => r['type'] === 'client');
    assert.deepEqual(clients.map((c) => [c['client_id'], c['dynamic']]), [[dynamicId, true], [documentId, true]]);

    const target = await testApp(await open());
    apps.push(target.app);
    const { summary } = await importAsOperator(operator(target), Readable.from([exported]), { dryRun: false });
    assert.deepEqual(summary, { created: 2, updated: 0, skipped: 0, errors: [] });
    for (const id of [dynamicId, documentId]) {
      const before = (await findClient(source.deps.db, id))!;
      const after = (await findClient(target.deps.db, id))!;
      assert.equal(after.dynamic, true, id);
      assert.deepEqual(after.registration, before.registration, id);
      assert.equal(after.isPublic, true);
    }

    const bad = exported.replace('"token_endpoint_auth_method":"none"', '"token_endpoint_auth_method":"private_key_jwt"');
    const third = await testApp(await open());
    apps.push(third.app);
    const refused = await importAsOperator(operator(third), Readable.from([bad]), { dryRun: false });
    assert.equal(refused.summary.errors.length, 1, JSON.stringify(refused.summary));
    assert.match(JSON.stringify(refused.summary.errors[0]), /token_endpoint_auth_method must be none or client_secret_post/);
  });
});
