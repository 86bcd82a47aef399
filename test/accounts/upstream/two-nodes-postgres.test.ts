// Issue 33: "two nodes on PostgreSQL share providers and links" — two Signet processes' apps on one
// PostgreSQL database behind a round-robin proxy (a load balancer): the sign-in leaves for the upstream
// from one node and its callback is taken by the other; a provider added once is on both sign-in pages.
import assert from 'node:assert/strict';
import http from 'node:http';
import { after, before, describe, test } from 'node:test';
import { listLinks } from '../../../src/accounts/upstream/links.ts';
import { postgresDatabase } from '../../helpers/databases.ts';
import { testApp, type TestApp } from '../../helpers/app.ts';
import { freePort } from '../../helpers/live-server.ts';
import { postgresUnavailableReason, skipUnlessAvailable } from '../../helpers/services.ts';
import * as clients from '../../../src/clients/clients.ts';
import { accounts, addUpstream, HostBrowser, linkNamed, passNodeOidcPages, startNodeOidcUpstream, type NodeOidcUpstream } from './support.ts';

const skip = skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason());

describe('two nodes on PostgreSQL share providers and links (issue 33)', { skip }, () => {
  let database: Awaited<ReturnType<typeof postgresDatabase>>;
  let nodes: TestApp[] = [];
  let proxy: http.Server;
  let baseUrl: string;
  let up: NodeOidcUpstream;
  const served: string[] = [];

  before(async () => {
    database = await postgresDatabase();
    const port = await freePort();
    baseUrl = `http://127.0.0.1:${port}`;
    const ports = [await freePort(), await freePort()];
    nodes = [];
    for (const nodePort of ports) {
      const node = await testApp(database, { SIGNET_BASE_URL: baseUrl, SIGNET_SIGNUP: 'open', SIGNET_LOG_LEVEL: 'warn' });
      await node.app.listen({ host: '127.0.0.1', port: nodePort });
      nodes.push(node);
    }
    // Round robin, Host passed through, as a load balancer does.
    let turn = 0;
    proxy = http.createServer((req, res) => {
      const index = turn++ % ports.length;
      served.push(`${index}:${(req.url ?? '').split('?')[0]}`);
      const forward = http.request({ host: '127.0.0.1', port: ports[index], method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      });
      req.pipe(forward);
    });
    await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
    up = await startNodeOidcUpstream(`${baseUrl}/signin/idp/shared/callback`);
    // Added through the first node's database handle: the second node sees it at once.
    await addUpstream({ ...nodes[0]!, baseUrl, altBaseUrl: baseUrl, close: async () => {} }, { slug: 'shared', name: 'Shared OP', issuer: up.issuer, clientId: up.clientId, clientSecret: up.clientSecret });
    await clients.registerClient(database.db, nodes[0]!.clock, nodes[0]!.deps.keys.tokenHash, { name: 'App', redirectUris: ['http://127.0.0.1:9/cb'], scopes: ['openid', 'profile'] });
  });
  after(async () => {
    await up?.close();
    proxy?.closeAllConnections();
    proxy?.close();
    for (const node of nodes) await node.app.close();
    await database?.dispose();
  });

  test('the state stored by one node is taken by the other; the link is seen by both', async () => {
    up.people.set('lin', { email: 'lin@upstream.example', email_verified: true, name: 'Lin' });
    const browser = new HostBrowser();
    for (let i = 0; i < 2; i++) {
      const signin = await browser.follow(new URL('/signin', baseUrl));
      assert.match(signin.page!, />Sign in with Shared OP</, `node ${i} shows the provider`);
    }
    served.length = 0;
    const signin = await browser.follow(new URL('/signin', baseUrl));
    const atUpstream = await browser.follow(new URL(linkNamed(signin.page!, 'Sign in with Shared OP'), baseUrl));
    const back = await passNodeOidcPages(browser, atUpstream, 'lin', () => false);
    assert.equal(back.url.pathname, '/account', back.page?.slice(0, 300));
    const start = served.find((s) => s.endsWith(':/signin/idp/shared'))!;
    const callback = served.find((s) => s.endsWith(':/signin/idp/shared/callback'))!;
    assert.ok(start && callback, served.join(' '));
    assert.notEqual(start.split(':')[0], callback.split(':')[0], `the callback came to the other node: ${served.join(' ')}`);
    const account = (await accounts.findAccountByEmail(database.db, 'lin@upstream.example'))!;
    for (const node of nodes) assert.deepEqual((await listLinks(node.deps.db, account.sub)).map((l) => l.upstream_sub), ['lin']);
    // Whichever node answered which step, both were used over the sign-in.
    assert.deepEqual(new Set(served.map((s) => s.split(':')[0])), new Set(['0', '1']));
  });
});
