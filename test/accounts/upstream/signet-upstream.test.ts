// Issue 33 with a second Signet (an `--oidc` application) as the upstream, through its discovery document,
// over HTTP: the linking rules. "An upstream identity with the e-mail of an existing account and
// email_verified false or true is never linked without the password"; Unlink is "refused when it would
// leave the account with no way to sign in"; sign-up closed is a clear page; an upstream that does not
// answer in time is a page with Try again.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { listAuditEvents } from '../../../src/audit/audit.ts';
import { listLinks, unlinkIdentity } from '../../../src/accounts/upstream/links.ts';
import { updateAccount } from '../../../src/accounts/accounts.ts';
import { sqliteDatabase } from '../../helpers/databases.ts';
import { freePort } from '../../helpers/live-server.ts';
import { accounts, addUpstream, authorizeUrl, HostBrowser, isAppCallback, linkNamed, redeem, startDownstream, startSignetUpstream, type Downstream, type SignetUpstream } from './support.ts';

const PERSON = { email: 'grace@example.org', password: 'upstream-password-1', name: 'Grace Upstream' };

describe('a second Signet as the upstream (issue 33)', () => {
  const dbs: Array<Awaited<ReturnType<typeof sqliteDatabase>>> = [];
  let down: Downstream;
  let up: SignetUpstream;

  before(async () => {
    const [downDb, upDb] = [await sqliteDatabase(), await sqliteDatabase()];
    dbs.push(downDb, upDb);
    down = await startDownstream(downDb);
    up = await startSignetUpstream(upDb, `${down.baseUrl}/signin/idp/corp/callback`, PERSON);
    await addUpstream(down, { slug: 'corp', name: 'Corp Signet', issuer: up.issuer, clientId: up.clientId, clientSecret: up.clientSecret });
  });
  after(async () => {
    await up.close();
    await down.close();
    for (const d of dbs) await d.dispose();
  });

  const atCallback = (url: URL) => url.origin === down.baseUrl && url.pathname === '/signin/idp/corp/callback';

  /** Application → downstream sign-in page → "Sign in with Corp Signet" → upstream sign-in and consent → back at the downstream. */
  async function signInUpstream(browser: HostBrowser, stopAt: (url: URL) => boolean = isAppCallback(down)) {
    const { url, verifier } = authorizeUrl(down);
    const signin = await browser.follow(url);
    let at = await browser.follow(new URL(linkNamed(signin.page!, 'Sign in with Corp Signet'), down.baseUrl), stopAt);
    if (at.url.origin === up.baseUrl && at.url.pathname === '/signin') at = await browser.submit(at, /^\/signin$/, { identifier: PERSON.email, password: PERSON.password }, stopAt);
    if (at.url.origin === up.baseUrl && at.url.pathname === '/consent') at = await browser.submit(at, /^\/consent$/, { decision: 'allow', scope: ['openid', 'profile', 'email'] }, stopAt);
    return { at, verifier };
  }

  for (const verified of [false, true]) {
    test(`"an upstream identity with the e-mail of an existing account and email_verified ${verified} is never linked without the password"`, async () => {
      const local = await accounts.createAccount(down.deps.db, down.clock, { email: PERSON.email, password: 'the-local-password', name: 'Local Grace' });
      try {
        await updateAccount(up.deps.db, up.clock, (await accounts.findAccountByEmail(up.deps.db, PERSON.email))!.sub, { emailVerified: verified });
        const browser = new HostBrowser();
        const { at } = await signInUpstream(browser);
        assert.equal(at.url.pathname, '/signin/idp/link', `the person is asked for the password: ${at.url.href}`);
        assert.match(at.page!, /An account with the e-mail grace@example.org already exists here/);
        assert.match(at.page!, />Link and continue</);
        assert.deepEqual(await listLinks(down.deps.db, local.sub), [], 'nothing is linked yet');
        assert.equal(browser.jars.get('127.0.0.1')?.has('signet_session') ?? false, false, 'and nobody is signed in');
        // The upstream's password is not this account's: refused.
        const wrong = await browser.submit(at, /\/signin\/idp\/link/, { password: PERSON.password });
        assert.equal(wrong.status, 401);
        assert.deepEqual(await listLinks(down.deps.db, local.sub), []);
        // Leaving the page and coming back to the sign-in does not link anything either.
        assert.equal((await listAuditEvents(down.deps.db, { sub: local.sub, type: 'idp.linked' })).events.length, 0);
        // The account's own password links it, and the sign-in goes on to consent and the application.
        const page = await browser.follow(new URL('/signin/idp/link', down.baseUrl));
        const consent = await browser.submit(page, /\/signin\/idp\/link/, { password: 'the-local-password' }, isAppCallback(down));
        assert.equal(consent.url.pathname, '/consent');
        const done = await browser.submit(consent, /\/consent/, { decision: 'allow', scope: ['openid', 'profile', 'email'] }, isAppCallback(down));
        assert.ok(isAppCallback(down)(done.url));
        assert.deepEqual((await listLinks(down.deps.db, local.sub)).map((l) => l.provider), ['corp']);
        assert.equal((await listAuditEvents(down.deps.db, { sub: local.sub, type: 'idp.linked' })).events.length, 1);
        // Next time, the linked identity signs in at once.
        const again = new HostBrowser();
        const second = await signInUpstream(again);
        // The application was allowed a moment ago: no consent page this time.
        assert.ok(isAppCallback(down)(second.at.url), second.at.url.href);
        const claims = await redeem(down, second.at.url, second.verifier);
        assert.equal(claims['sub'], local.sub);
        assert.ok((claims['amr'] as string[]).includes('fed'));
      } finally {
        await accounts.deleteAccount(down.deps.db, local.sub);
      }
    });
  }

  test('"Unlink" is "refused when it would leave the account with no way to sign in"', async () => {
    const browser = new HostBrowser();
    const { at } = await signInUpstream(browser);
    assert.equal(at.url.pathname, '/consent', 'a first sign-in made the account');
    const account = (await accounts.findAccountByEmail(down.deps.db, PERSON.email))!;
    assert.equal(await accounts.hasPassword(down.deps.db, account.sub), false, 'made without a password');
    const page = await browser.follow(new URL('/account', down.baseUrl));
    assert.match(page.page!, /<h2 id="providers-heading">Sign-in providers<\/h2>/);
    assert.match(page.page!, />Corp Signet</);
    const refused = await browser.submit(page, /\/account\/idp\/unlink/, {});
    assert.equal(refused.status, 409);
    assert.match(refused.page!, /only way you can sign in/);
    assert.equal((await listLinks(down.deps.db, account.sub)).length, 1);
    // With a password set, the same Unlink is allowed.
    await accounts.setPassword(down.deps.db, down.clock, account.sub, 'now-a-password');
    await unlinkIdentity(down.deps.db, account.sub, 'corp');
    assert.deepEqual(await listLinks(down.deps.db, account.sub), []);
    await accounts.deleteAccount(down.deps.db, account.sub);
  });
});

describe('sign-up closed, and an upstream that does not answer (issue 33)', () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let upDb: Awaited<ReturnType<typeof sqliteDatabase>>;
  let down: Downstream;
  let up: SignetUpstream;
  let silent: http.Server;

  before(async () => {
    database = await sqliteDatabase();
    upDb = await sqliteDatabase();
    down = await startDownstream(database, { SIGNET_SIGNUP: 'closed', SIGNET_IDP_TIMEOUT_MS: '300' });
    up = await startSignetUpstream(upDb, `${down.baseUrl}/signin/idp/corp/callback`, PERSON);
    await addUpstream(down, { slug: 'corp', name: 'Corp Signet', issuer: up.issuer, clientId: up.clientId, clientSecret: up.clientSecret });
    // Accepts connections and never answers.
    const port = await freePort();
    silent = http.createServer(() => {});
    await new Promise<void>((resolve) => silent.listen(port, '127.0.0.1', resolve));
    await addUpstream(down, { slug: 'slow', name: 'Slow OP', issuer: `http://localhost:${port}`, clientId: 'x', clientSecret: 'y' });
  });
  after(async () => {
    silent.closeAllConnections();
    silent.close();
    await up.close();
    await down.close();
    await database.dispose();
    await upDb.dispose();
  });

  test('"unless sign-up is closed": then a clear page, and no account', async () => {
    const browser = new HostBrowser();
    const { url } = authorizeUrl(down);
    const signin = await browser.follow(url);
    let at = await browser.follow(new URL(linkNamed(signin.page!, 'Sign in with Corp Signet'), down.baseUrl));
    at = await browser.submit(at, /^\/signin$/, { identifier: PERSON.email, password: PERSON.password });
    if (at.url.pathname === '/consent') at = await browser.submit(at, /^\/consent$/, { decision: 'allow', scope: ['openid', 'profile', 'email'] });
    assert.equal(at.status, 403);
    assert.match(at.page!, /new accounts cannot be made here/);
    assert.equal(await accounts.findAccountByEmail(down.deps.db, PERSON.email), undefined);
    const failed = (await listAuditEvents(down.deps.db, { type: 'idp.signin.failed' })).events;
    assert.ok(failed.some((e) => e.detail?.['reason'] === 'signup_closed'));
  });

  test('"upstream down or slow (timeout, a clear page, the original request can be retried)"', async () => {
    const browser = new HostBrowser();
    const { url } = authorizeUrl(down);
    const signin = await browser.follow(url);
    const startedAt = Date.now();
    const page = await browser.follow(new URL(linkNamed(signin.page!, 'Sign in with Slow OP'), down.baseUrl));
    assert.ok(Date.now() - startedAt < 5000, 'the deadline held');
    assert.equal(page.status, 504);
    assert.match(page.page!, /Slow OP did not answer in time/);
    const retry = linkNamed(page.page!, 'Try again');
    assert.match(retry, /^\/signin\/idp\/slow\?request=/, 'Try again continues the same authorization request');
    const failed = (await listAuditEvents(down.deps.db, { type: 'idp.signin.failed' })).events;
    assert.ok(failed.some((e) => e.detail?.['provider'] === 'slow' && e.detail?.['reason'] === 'discovery_unavailable'));
  });
});
