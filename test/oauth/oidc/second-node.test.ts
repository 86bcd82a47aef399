// issue 28: "private keys … in the database (so every node signs with the same keys)" — two nodes on one
// PostgreSQL database, each with its own connection pool and app: the second verifies what the first
// signed with its own JWKS, signs with the same key, and a rotation made on one is used by the other at once.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { openDatabase } from '../../../src/db/database.ts';
import { rotateSigningKeys } from '../../../src/oauth/oidc/keys.ts';
import { testApp, type TestApp } from '../../helpers/app.ts';
import { postgresDatabase } from '../../helpers/databases.ts';
import { postgresUnavailableReason, skipUnlessAvailable } from '../../helpers/services.ts';
import { TinyBrowser, type Flow } from '../authorize-support.ts';
import { completeFlow, decode, exchange, oidcFlowSetup, signatureVerifies } from './support.ts';

describe('a second node verifies and signs like the first (PostgreSQL)', { skip: skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason()) }, () => {
  let database: Awaited<ReturnType<typeof postgresDatabase>>;
  let secondHandle: ReturnType<typeof openDatabase>;
  let first: Flow;
  let second: TestApp;

  before(async () => {
    database = await postgresDatabase();
    first = await oidcFlowSetup(database);
    secondHandle = openDatabase(database.settings);
    second = await testApp({ ...secondHandle, settings: database.settings });
  });
  after(async () => {
    await first?.app.close();
    await second?.app.close();
    await secondHandle?.close();
    await database?.dispose();
  });

  const secondNode = () => ({ ...first, app: second.app, deps: second.deps, clock: second.clock }) as Flow;

  test('an id_token signed by the first node verifies with the second node\'s JWKS, and the second signs with the same key', async () => {
    const fromFirst = (await exchange(first, await completeFlow(new TinyBrowser(first), { nonce: 'one' }))).id_token!;
    assert.equal(await signatureVerifies(secondNode(), fromFirst), true);
    const fromSecond = (await exchange(secondNode(), await completeFlow(new TinyBrowser(secondNode()), { nonce: 'two' }))).id_token!;
    assert.equal(decode(fromSecond).header.kid, decode(fromFirst).header.kid, 'one key for every node');
    assert.equal(await signatureVerifies(first, fromSecond), true);
  });

  test('a rotation made through the second node: the first signs with the new key at once; its earlier id_token still verifies on both', async () => {
    const earlier = (await exchange(first, await completeFlow(new TinyBrowser(first), { nonce: 'e' }))).id_token!;
    const [made] = await rotateSigningKeys(secondHandle.db, second.deps.keys.signingKey, second.clock, ['ES256']);
    const later = (await exchange(first, await completeFlow(new TinyBrowser(first), { nonce: 'l' }))).id_token!;
    assert.equal(decode(later).header.kid, made!.kid);
    for (const node of [first, secondNode()]) {
      assert.equal(await signatureVerifies(node, earlier), true);
      assert.equal(await signatureVerifies(node, later), true);
    }
  });
});
