// Issue 33: "the person proves they own that account (its password, or a passkey)" — the link page's
// passkey path over HTTP, answered by a software authenticator: node-oidc-provider's identity carries an
// existing account's e-mail; one of that account's passkeys (user verified) links it, a passkey of
// another account does not.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { finishPasskeyRegistration, relyingPartyFor, startPasskeyRegistration, type PasskeyContext } from '../../../src/accounts/factors/passkeys.ts';
import { listLinks } from '../../../src/accounts/upstream/links.ts';
import { sqliteDatabase } from '../../helpers/databases.ts';
import { SoftwareAuthenticator } from '../../helpers/software-authenticator.ts';
import { accounts, addUpstream, HostBrowser, linkNamed, passNodeOidcPages, startDownstream, startNodeOidcUpstream, type Downstream, type NodeOidcUpstream } from './support.ts';

describe('the link page\'s passkey (issue 33)', () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let down: Downstream;
  let up: NodeOidcUpstream;
  // Passkeys need a host name: the downstream is used under its second address, localhost.
  let origin: string;

  before(async () => {
    database = await sqliteDatabase();
    down = await startDownstream(database);
    origin = down.altBaseUrl;
    up = await startNodeOidcUpstream(`${origin}/signin/idp/ref/callback`);
    await addUpstream(down, { slug: 'ref', name: 'Reference OP', issuer: up.issuer, clientId: up.clientId, clientSecret: up.clientSecret });
  });
  after(async () => {
    await up.close();
    await down.close();
    await database.dispose();
  });

  async function toLinkPage(login: string, email: string) {
    up.people.set(login, { email, email_verified: true, name: login });
    const browser = new HostBrowser();
    const signin = await browser.follow(new URL('/signin', origin));
    const atUpstream = await browser.follow(new URL(linkNamed(signin.page!, 'Sign in with Reference OP'), origin));
    const page = await passNodeOidcPages(browser, atUpstream, login, () => false);
    assert.equal(page.url.pathname, '/signin/idp/link');
    assert.match(page.page!, />Use a passkey</, 'the account has a passkey here: the page offers it');
    const csrf = /data-csrf="([^"]+)"/.exec(page.page!)![1]!;
    const json = async (path: string, body: unknown) => {
      const url = new URL(path, origin);
      const cookie = [...(browser.jars.get('localhost') ?? new Map())].map(([k, v]) => `${k}=${v}`).join('; ');
      const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf, origin, cookie }, body: JSON.stringify(body) });
      return { status: response.status, body: (await response.json()) as Record<string, unknown>, response };
    };
    return { browser, json };
  }

  async function withPasskey(email: string) {
    const account = await accounts.createAccount(database.db, down.clock, { email, password: 'local-password-1' });
    const rp = relyingPartyFor(new URL(origin), 'Signet')!;
    const ctx: PasskeyContext = { db: database.db, dialect: database.dialect, clock: down.clock, hashKey: down.deps.keys.tokenHash };
    const authenticator = new SoftwareAuthenticator();
    const options = await startPasskeyRegistration(ctx, rp, { sub: account.sub, userName: email, displayName: email });
    await finishPasskeyRegistration(ctx, rp, account.sub, { name: 'Laptop', response: authenticator.register(options, rp.origin), locale: 'en' });
    return { account, authenticator, rp };
  }

  test('"(or a passkey)": one of the account\'s own passkeys links the identity and signs in', async () => {
    const { account, authenticator, rp } = await withPasskey('pk-owner@example.org');
    const { json } = await toLinkPage('pk-owner', 'pk-owner@example.org');
    const options = await json('/signin/idp/link/passkey/options', {});
    assert.equal(options.status, 200, JSON.stringify(options.body));
    const done = await json('/signin/idp/link/passkey', { response: authenticator.assert(options.body as never, rp.origin) });
    assert.equal(done.status, 200, JSON.stringify(done.body));
    assert.equal(done.body['redirect'], '/account');
    assert.ok(done.response.headers.getSetCookie().some((c) => c.startsWith('signet_session=')), 'signed in');
    assert.deepEqual((await listLinks(database.db, account.sub)).map((l) => l.upstream_sub), ['pk-owner']);
  });

  test('a passkey of another account links nothing', async () => {
    const { account } = await withPasskey('pk-victim@example.org');
    const other = await withPasskey('pk-other@example.org');
    const { json } = await toLinkPage('pk-attacker', 'pk-victim@example.org');
    const options = await json('/signin/idp/link/passkey/options', {});
    const done = await json('/signin/idp/link/passkey', { response: other.authenticator.assert(options.body as never, other.rp.origin) });
    assert.notEqual(done.status, 200);
    assert.deepEqual(await listLinks(database.db, account.sub), []);
    assert.deepEqual(await listLinks(database.db, other.account.sub), []);
  });
});
