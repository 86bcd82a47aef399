// Issue 33 with node-oidc-provider as the upstream, through its discovery document, over HTTP: the first
// sign-in makes an account, the original /oauth/authorize request goes on to consent and the callback, the
// id_token Signet issues says `fed`; the callback's checks refuse a tampered state, a replayed callback,
// and id_tokens for another audience, signed by another key, or with another nonce.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listAuditEvents } from '../../../src/audit/audit.ts';
import { listLinks } from '../../../src/accounts/upstream/links.ts';
import { auditCounters } from '../../../src/audit/audit-metrics.ts';
import { beginTotpSetup, confirmTotpSetup, totpCode } from '../../../src/accounts/factors/totp.ts';
import { sqliteDatabase } from '../../helpers/databases.ts';
import {
  accounts,
  addUpstream,
  authorizeUrl,
  HostBrowser,
  idTokenParts,
  isAppCallback,
  linkNamed,
  passNodeOidcPages,
  redeem,
  startDownstream,
  startNodeOidcUpstream,
  type Downstream,
  type NodeOidcUpstream,
} from './support.ts';

describe('node-oidc-provider as the upstream (issue 33)', () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let down: Downstream;
  let up: NodeOidcUpstream;

  before(async () => {
    database = await sqliteDatabase();
    down = await startDownstream(database);
    up = await startNodeOidcUpstream(`${down.baseUrl}/signin/idp/reference/callback`);
    await addUpstream(down, { slug: 'reference', name: 'Reference OP', issuer: up.issuer, clientId: up.clientId, clientSecret: up.clientSecret });
  });
  after(async () => {
    await up.close();
    await down.close();
    await database.dispose();
  });

  /** From the application's authorization request to the upstream's first page (its login form). */
  async function toUpstream(browser: HostBrowser) {
    const { url, verifier } = authorizeUrl(down);
    const signin = await browser.follow(url);
    assert.equal(signin.url.pathname, '/signin');
    const start = await browser.get(new URL(linkNamed(signin.page!, 'Sign in with Reference OP'), down.baseUrl));
    assert.equal(start.status, 303);
    const authorize = new URL(start.headers.get('location')!);
    const atUpstream = await browser.follow(authorize);
    assert.equal(atUpstream.url.origin, up.issuer, 'the browser is at the upstream');
    return { atUpstream, verifier, authorize };
  }

  test('"A first sign-in with an unknown identity creates an account" — then consent, the callback, and an id_token with amr fed', async () => {
    up.people.set('ada', { email: 'ada@upstream.example', email_verified: true, name: 'Ada Upstream' });
    const browser = new HostBrowser();
    const before = (await auditCounters.idpSignins.get()).values.find((v) => v.labels.provider === 'reference' && v.labels.outcome === 'succeeded')?.value ?? 0;
    const { atUpstream, verifier, authorize } = await toUpstream(browser);
    const back = await passNodeOidcPages(browser, atUpstream, 'ada', isAppCallback(down));
    // The original request goes on as after a password: Signet's own consent page for the application.
    assert.equal(back.url.pathname, '/consent', back.page?.slice(0, 300));
    const done = await browser.submit(back, /\/consent/, { decision: 'allow', scope: ['openid', 'profile', 'email'] }, isAppCallback(down));
    assert.ok(isAppCallback(down)(done.url), `the application got its callback: ${done.url.href}`);
    assert.equal(done.url.searchParams.get('state'), 'app-state');
    const claims = await redeem(down, done.url, verifier);
    assert.deepEqual(claims['amr'], ['fed']);
    const account = await accounts.findAccountByEmail(database.db, 'ada@upstream.example');
    assert.ok(account, 'an account was made');
    assert.equal(account.email_verified, true, 'the upstream said email_verified: true');
    assert.equal(account.name, 'Ada Upstream');
    assert.equal(claims['sub'], account.sub);
    assert.deepEqual((await listLinks(database.db, account.sub)).map((l) => [l.provider, l.upstream_sub]), [['reference', 'ada']]);
    const types = (await listAuditEvents(database.db, { sub: account.sub })).events.map((e) => e.type);
    for (const type of ['idp.created', 'idp.linked', 'idp.signin.succeeded']) assert.ok(types.includes(type), `${type} in ${types.join(', ')}`);
    const afterCount = (await auditCounters.idpSignins.get()).values.find((v) => v.labels.provider === 'reference' && v.labels.outcome === 'succeeded')?.value ?? 0;
    assert.equal(afterCount, before + 1, 'sign-ins by provider are counted for /metrics');
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256', 'PKCE S256 was sent upstream');
    assert.ok(authorize.searchParams.get('nonce') && authorize.searchParams.get('state'), 'a nonce and a state were sent upstream');
  });

  test('"then continues the original /oauth/authorize request exactly as a password sign-in would": prompt=login and max_age go upstream, the second step comes when the account has a factor, amr says fed, otp, mfa', async () => {
    const account = (await accounts.findAccountByEmail(database.db, 'ada@upstream.example'))!;
    const setup = await beginTotpSetup(database.db, down.deps.keys.factorSecret, down.clock, { sub: account.sub, issuer: 'Signet', label: 'ada' });
    assert.equal(await confirmTotpSetup(database.db, down.deps.keys.factorSecret, down.clock, account.sub, totpCode(setup.secretBase32, down.clock())), 'enabled');
    const browser = new HostBrowser();
    const { url, verifier } = authorizeUrl(down, { prompt: 'login', max_age: '600' });
    const signin = await browser.follow(url);
    const start = await browser.get(new URL(linkNamed(signin.page!, 'Sign in with Reference OP'), down.baseUrl));
    const authorize = new URL(start.headers.get('location')!);
    assert.equal(authorize.searchParams.get('prompt'), 'login');
    assert.equal(authorize.searchParams.get('max_age'), '600');
    const atUpstream = await browser.follow(authorize);
    const step = await passNodeOidcPages(browser, atUpstream, 'ada', isAppCallback(down));
    assert.equal(step.url.pathname, '/signin/two-step', 'the account has an authenticator app: the second step first');
    assert.equal(browser.jars.get('127.0.0.1')?.has('signet_session') ?? false, false, 'no session before the second step');
    down.clock.advance(30_000);
    const done = await browser.submit(step, /\/signin\/two-step$/, { code: totpCode(setup.secretBase32, down.clock()) }, isAppCallback(down));
    assert.ok(isAppCallback(down)(done.url), `the application was allowed before: straight to its callback (${done.url.href})`);
    const claims = await redeem(down, done.url, verifier);
    assert.deepEqual(claims['amr'], ['fed', 'otp', 'mfa'], 'no password is claimed: the first step was the upstream');
    assert.equal(claims['sub'], account.sub);
  });

  test('"a callback replayed" is refused: the state works once', async () => {
    up.people.set('bob', { email: 'bob@upstream.example', email_verified: true, name: 'Bob' });
    const browser = new HostBrowser();
    const { atUpstream } = await toUpstream(browser);
    const callback = await passNodeOidcPages(browser, atUpstream, 'bob', (url) => url.pathname.endsWith('/callback') && url.origin === down.baseUrl);
    const first = await browser.get(callback.url);
    assert.equal(first.status, 303);
    const again = await browser.get(callback.url);
    assert.equal(again.status, 400);
    assert.match(await again.text(), /used already, has expired, or was started in another browser/);
  });

  test('"a tampered state" is refused, and audited', async () => {
    up.people.set('cy', { email: 'cy@upstream.example', email_verified: true, name: 'Cy' });
    const browser = new HostBrowser();
    const { atUpstream } = await toUpstream(browser);
    const callback = await passNodeOidcPages(browser, atUpstream, 'cy', (url) => url.pathname.endsWith('/callback') && url.origin === down.baseUrl);
    const tampered = new URL(callback.url);
    tampered.searchParams.set('state', callback.url.searchParams.get('state')!.slice(0, -2) + 'xx');
    const response = await browser.get(tampered);
    assert.equal(response.status, 400);
    assert.equal(await accounts.findAccountByEmail(database.db, 'cy@upstream.example'), undefined, 'nobody was signed up');
    const failed = (await listAuditEvents(database.db, { type: 'idp.signin.failed' })).events;
    assert.ok(failed.some((e) => e.detail?.['reason'] === 'bad_state'));
    // The callback in another browser (no idp cookie) is refused too: login CSRF.
    const other = await new HostBrowser().get(callback.url);
    assert.equal(other.status, 400);
  });

  test('"the person cancelling at the upstream (access_denied)" is a page with a way on', async () => {
    const browser = new HostBrowser();
    const { atUpstream } = await toUpstream(browser);
    const abort = /href="([^"]*\/abort)"/.exec(atUpstream.page!)?.[1];
    assert.ok(abort, 'the upstream offers to cancel');
    const page = await browser.follow(new URL(abort, atUpstream.url));
    assert.equal(page.status, 403);
    assert.match(page.page!, /was cancelled/);
    assert.match(page.page!, />Try again</);
  });

  for (const [name, change] of [
    ['for another audience', async (token: string) => up.signAsUpstream({ ...idTokenParts(token).claims, aud: 'someone-else' })],
    ['signed by another key', async (token: string) => up.signWithOtherKey(idTokenParts(token).claims)],
    ['with another nonce', async (token: string) => up.signAsUpstream({ ...idTokenParts(token).claims, nonce: 'not-the-nonce-sent' })],
  ] as const) {
    test(`"an id_token ${name}" is refused: nobody signed in, nothing made`, async () => {
      const login = `t-${name.replaceAll(' ', '-')}`;
      up.people.set(login, { email: `${login}@upstream.example`, email_verified: true, name: login });
      const browser = new HostBrowser();
      const { atUpstream } = await toUpstream(browser);
      up.tamper = change;
      try {
        const page = await passNodeOidcPages(browser, atUpstream, login, isAppCallback(down));
        assert.equal(page.status, 502, page.page?.slice(0, 500));
        assert.match(page.page!, /could not be verified/);
      } finally {
        up.tamper = undefined;
      }
      assert.equal(await accounts.findAccountByEmail(database.db, `${login}@upstream.example`), undefined);
      assert.equal(browser.jars.get('127.0.0.1')?.has('signet_session') ?? false, false, 'no session');
      const failed = (await listAuditEvents(database.db, { type: 'idp.signin.failed' })).events;
      assert.ok(failed.some((e) => e.detail?.['reason'] === 'id_token_invalid'), JSON.stringify(failed.map((e) => e.detail)));
    });
  }
});
