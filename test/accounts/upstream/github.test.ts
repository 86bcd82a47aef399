// Issue 33: the GitHub preset against a local server that answers as GitHub documents it (see
// startGithubLike in support.ts for the pages followed: "Authorizing OAuth apps", "REST API endpoints for
// users", "REST API endpoints for emails"), under a GitHub Enterprise Server's layout — github.com itself
// cannot be reached from here.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { listLinks } from '../../../src/accounts/upstream/links.ts';
import { githubEndpoints } from '../../../src/accounts/upstream/upstream-client.ts';
import { sqliteDatabase } from '../../helpers/databases.ts';
import { accounts, addUpstream, authorizeUrl, HostBrowser, isAppCallback, linkNamed, redeem, startDownstream, startGithubLike, type Downstream, type GithubLike } from './support.ts';

describe('the GitHub preset (issue 33)', () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let down: Downstream;
  let gh: GithubLike;

  before(async () => {
    database = await sqliteDatabase();
    down = await startDownstream(database);
    gh = await startGithubLike();
    await addUpstream(down, { slug: 'github', preset: 'github', issuer: gh.url, clientId: gh.clientId, clientSecret: gh.clientSecret });
  });
  after(async () => {
    await gh.close();
    await down.close();
    await database.dispose();
  });

  test('GitHub\'s documented endpoints: github.com keeps its API on api.github.com, a GitHub Enterprise Server under /api/v3', () => {
    assert.deepEqual(githubEndpoints('https://github.com'), { authorize: 'https://github.com/login/oauth/authorize', token: 'https://github.com/login/oauth/access_token', api: 'https://api.github.com' });
    assert.equal(githubEndpoints('https://ghe.example').api, 'https://ghe.example/api/v3');
  });

  test('"Sign in with GitHub": the numeric user id is the identity, the verified primary e-mail is verified', async () => {
    const browser = new HostBrowser();
    const { url, verifier } = authorizeUrl(down);
    const signin = await browser.follow(url);
    const start = await browser.get(new URL(linkNamed(signin.page!, 'Sign in with GitHub'), down.baseUrl));
    const authorize = new URL(start.headers.get('location')!);
    assert.equal(authorize.origin + authorize.pathname, `${gh.url}/login/oauth/authorize`);
    assert.equal(authorize.searchParams.get('scope'), 'read:user user:email');
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    const consent = await browser.follow(authorize, isAppCallback(down));
    assert.equal(consent.url.pathname, '/consent', consent.page?.slice(0, 400));
    const done = await browser.submit(consent, /\/consent/, { decision: 'allow', scope: ['openid', 'profile', 'email'] }, isAppCallback(down));
    const claims = await redeem(down, done.url, verifier);
    const account = (await accounts.findAccountByEmail(database.db, 'octocat@github.example'))!;
    assert.equal(claims['sub'], account.sub);
    assert.equal(account.email_verified, true);
    assert.equal(account.name, 'The Octocat');
    assert.deepEqual((await listLinks(database.db, account.sub)).map((l) => [l.provider, l.upstream_sub]), [['github', '583231']]);
  });

  test('an unverified GitHub e-mail naming an existing account links nothing without that account\'s password', async () => {
    const owner = await accounts.createAccount(database.db, down.clock, { email: 'victim@example.org', password: 'victims-password' });
    gh.user = { id: 999001, login: 'mallory', name: 'Mallory', email: 'victim@example.org' };
    gh.emails = [{ email: 'victim@example.org', primary: true, verified: false, visibility: 'public' }];
    const browser = new HostBrowser();
    const { url } = authorizeUrl(down);
    const signin = await browser.follow(url);
    const at = await browser.follow(new URL(linkNamed(signin.page!, 'Sign in with GitHub'), down.baseUrl), isAppCallback(down));
    assert.equal(at.url.pathname, '/signin/idp/link');
    assert.deepEqual(await listLinks(database.db, owner.sub), []);
    assert.equal(browser.jars.get('127.0.0.1')?.has('signet_session') ?? false, false);
  });
});
