// spec "Limits — refresh concurrency" across several server processes sharing one PostgreSQL: two real
// `signet serve` processes, 20 concurrent refreshes of one token split between them → exactly one 200,
// and afterwards every token of that person for that application is revoked.
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
import { issueAuthorizationCode } from '../../src/oauth/codes.ts';
import { createPostgresDatabase, postgresUnavailableReason, skipUnlessAvailable } from '../helpers/services.ts';
import { startServeAtOwnOrigin, stop, type ServeAtOwnOrigin as Server } from './scale-out-support.ts';

const SECRET = 'multi-process-shared-secret-0123456789abcdef';
const REDIRECT_URI = 'https://app.example/callback';
const CONCURRENT = 20;

function postForm(url: string, form: Record<string, string>): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form).toString() });
}

const pgSkip = skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason());

describe('refresh race across two server processes on one PostgreSQL', { skip: pgSkip }, () => {
  let created: { url: string; drop(): Promise<void> };
  let database: DatabaseHandle;
  let dataDir: string;
  const servers: Server[] = [];
  let sub: string;
  let client: { clientId: string; secret: string };

  before(async () => {
    created = await createPostgresDatabase();
    dataDir = mkdtempSync(path.join(tmpdir(), 'signet-multi-'));
    database = openDatabase({ kind: 'postgres', url: created.url, poolSize: 4 });
    await migrate(database.db);
    const keys = deriveKeys(SECRET);
    sub = (await createAccount(database.db, systemClock, { email: 'ada@example.com', name: 'Ada', password: 'analytical-engine' })).sub;
    const registered = await registerClient(database.db, systemClock, keys.tokenHash, { name: 'Race App', redirectUris: [REDIRECT_URI], scopes: ['openid', 'profile'] });
    client = { clientId: registered.client.clientId, secret: registered.clientSecret! };
    for (const name of ['a', 'b']) servers.push(await startServeAtOwnOrigin(name, { databaseUrl: created.url, secret: SECRET, dataDir: path.join(dataDir, name) }));
  });

  after(async () => {
    await Promise.all(servers.map((server) => stop(server)));
    await database?.close();
    await created?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
  });

  test(`Limits | refresh concurrency: ${CONCURRENT} concurrent refreshes of one token split across two processes → exactly one 200; every token of that person for that application is revoked`, async () => {
    const keys = deriveKeys(SECRET);
    const code = await issueAuthorizationCode(database.db, keys.tokenHash, systemClock, {
      clientId: client.clientId,
      sub,
      redirectUri: REDIRECT_URI,
      scope: 'openid profile',
      codeChallenge: null,
      codeChallengeMethod: null,
    });
    const exchanged = await postForm(`${servers[0]!.baseUrl}/oauth/token`, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: REDIRECT_URI,
      client_id: client.clientId,
      client_secret: client.secret,
    });
    assert.equal(exchanged.status, 200, await exchanged.clone().text());
    const tokens = (await exchanged.json()) as { refresh_token: string; access_token: string };

    const answers = await Promise.all(
      Array.from({ length: CONCURRENT }, (_, i) =>
        postForm(`${servers[i % 2]!.baseUrl}/oauth/token`, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: client.clientId, client_secret: client.secret }),
      ),
    );
    const statuses = answers.map((r) => r.status);
    const bodies = (await Promise.all(answers.map((r) => r.json()))) as Array<{ error?: string; access_token?: string }>;
    assert.equal(statuses.filter((s) => s === 200).length, 1, statuses.join(' '));
    assert.ok(bodies.every((b, i) => statuses[i] === 200 || b.error === 'invalid_grant'), JSON.stringify(bodies));

    // One row per chain: the first pair is generation 1, the winner's pair generation 2.
    const chains = await database.db.selectFrom('token_chains').select(['generation', 'revoked_at']).where('sub', '=', sub).where('client_id', '=', client.clientId).execute();
    assert.deepEqual(chains.map((c) => c.generation), [2], 'rotated once');
    assert.ok(chains.every((r) => r.revoked_at !== null), 'every token is revoked, the winner\'s new pair included');

    const winner = bodies[statuses.indexOf(200)]!;
    for (const server of servers) {
      const res = await fetch(`${server.baseUrl}/oauth/userinfo`, { headers: { authorization: `Bearer ${winner.access_token}` } });
      assert.equal(res.status, 401);
    }
  });
});
