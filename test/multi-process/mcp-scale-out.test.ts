// Issue 39, "Done when": "The whole MCP flow on two nodes over PostgreSQL (registration and tokens
// shared)". Two `signet serve` processes and one `signet worker` on one PostgreSQL database and one
// storage folder, behind a round-robin proxy (no sticky sessions): the official SDK client discovers,
// registers, is authorized, refreshes and calls the tools, each request landing on whichever node is
// next. The person's sign-in and consent alternate between the nodes too.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { createAccount } from '../../src/accounts/accounts.ts';
import { systemClock } from '../../src/config/clock.ts';
import { migrate, openDatabase, type DatabaseHandle } from '../../src/db/database.ts';
import { startCallbackServer, type CallbackServer } from '../helpers/callback-server.ts';
import { connectWithOAuth, MemoryOAuthProvider } from '../helpers/mcp-client.ts';
import { createPostgresDatabase, postgresUnavailableReason, skipUnlessAvailable } from '../helpers/services.ts';
import { Browser, csrfOf, startRoundRobinProxy, startServe, startWorker, stop, type RoundRobinProxy, type ServeProcess, type SignetProcess } from './scale-out-support.ts';

const SECRET = 'mcp-scale-out-shared-secret-0123456789abcdef';
const PASSWORD = 'correct horse battery staple';
const PDF = path.resolve(import.meta.dirname, '../fixtures/public/libtasn1-contents-p3.pdf');

const pgSkip = skipUnlessAvailable('PostgreSQL', await postgresUnavailableReason());

describe('MCP on two nodes over PostgreSQL behind a round-robin proxy', { skip: pgSkip }, () => {
  let created: { url: string; drop(): Promise<void> };
  let database: DatabaseHandle;
  let proxy: RoundRobinProxy;
  let callback: CallbackServer;
  let dataDir: string;
  let a: ServeProcess;
  let b: ServeProcess;
  let worker: SignetProcess;
  let client: Client | undefined;

  before(async () => {
    created = await createPostgresDatabase();
    database = openDatabase({ kind: 'postgres', url: created.url, poolSize: 2 });
    await migrate(database.db);
    await createAccount(database.db, systemClock, { email: 'ada@example.com', name: 'Ada', password: PASSWORD });
    proxy = await startRoundRobinProxy();
    callback = await startCallbackServer();
    dataDir = mkdtempSync(path.join(tmpdir(), 'signet-mcp-scale-out-'));
    const shared = {
      SIGNET_DATABASE_URL: created.url,
      SIGNET_DATABASE_POOL_SIZE: '3',
      SIGNET_SECRET: SECRET,
      SIGNET_BASE_URL: proxy.origin,
      // One storage for every node, as S3 would be: a worker writes the results a server reads.
      SIGNET_STORAGE_URL: `file:${path.join(dataDir, 'objects')}`,
      SIGNET_TRUST_PROXY: '127.0.0.1',
      SIGNET_ADMIN_ADDR: 'off',
      SIGNET_METRICS_ADDR: 'off',
      SIGNET_LOG_LEVEL: 'warn',
    };
    const dir = (name: string) => path.join(dataDir, name);
    worker = startWorker('w', { ...shared, SIGNET_DATA_DIR: dir('w') });
    [a, b] = await Promise.all([startServe('A', { ...shared, SIGNET_DATA_DIR: dir('a') }), startServe('B', { ...shared, SIGNET_DATA_DIR: dir('b') })]);
    proxy.upstreams = [a.port, b.port];
  });

  after(async () => {
    await client?.close();
    const exits = await Promise.all([a, b, worker].map((p) => stop(p)));
    await proxy?.close();
    await callback?.close();
    await database?.close();
    await created?.drop();
    if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    assert.ok(exits.every((code) => code === 0 || code === null), `exit codes ${exits.join(' ')}`);
  });

  /** The person in a browser: each page from one node, each form posted to the other. */
  async function signInAndAllow(url: URL): Promise<string> {
    const browser = new Browser(proxy.origin);
    const nodes = [a, b];
    let turn = 0;
    const nextNode = () => nodes[turn++ % 2]!;
    let answer = await browser.get(nextNode(), url.pathname + url.search);
    for (let step = 0; step < 6; step++) {
      assert.ok(answer.status === 302 || answer.status === 303, `${answer.status}: ${answer.body.slice(0, 300)}`);
      const next = new URL(String(answer.headers.location), proxy.origin);
      if (next.href.startsWith(callback.url)) return next.searchParams.get('code')!;
      const page = await browser.get(nextNode(), next.pathname + next.search);
      if (page.status === 302) {
        answer = page;
        continue;
      }
      assert.equal(page.status, 200, `${next.pathname}: ${page.body.slice(0, 300)}`);
      const request = next.searchParams.get('request')!;
      answer =
        next.pathname === '/signin'
          ? await browser.post(nextNode(), '/signin', { _csrf: csrfOf(page.body), request, identifier: 'ada@example.com', password: PASSWORD })
          : await browser.post(nextNode(), '/consent', { _csrf: csrfOf(page.body), request, decision: 'allow', scope: [...page.body.matchAll(/name="scope" value="([a-z]+)" checked(?! disabled)/g)].map((m) => m[1]!) });
    }
    throw new Error('no code after six steps');
  }

  test('"registration and tokens shared": discovery, registration, authorization, tool calls and a refresh spread over both nodes; a parse runs on the worker and is read back through either node', async () => {
    const provider = new MemoryOAuthProvider(callback.url, 'Scale Agent');
    client = await connectWithOAuth(`${proxy.origin}/mcp`, provider, signInAndAllow);
    const registered = await database.db.selectFrom('clients').select(['client_id', 'name']).where('client_id', '=', provider.information!.client_id).executeTakeFirst();
    assert.equal(registered?.name, 'Scale Agent', 'the registration is in the shared database');

    const { tools } = await client.listTools();
    assert.equal(tools.length, 4);
    const parsed = (await client.callTool({ name: 'parse_pdf', arguments: { data: readFileSync(PDF).toString('base64'), filename: 'contents.pdf' } }, undefined, { timeout: 120_000 })) as CallToolResult;
    assert.equal(parsed.isError, undefined, JSON.stringify(parsed.content[0]));
    const { task_id, markdown } = parsed.structuredContent as { task_id: string; markdown: string };
    assert.ok(markdown.length > 100);

    // The access token refused (as an expired one is): the SDK refreshes on whichever node is next.
    const before = provider.saved!.refresh_token;
    provider.saved = { ...provider.saved!, access_token: 'expired-or-unknown' };
    for (let i = 0; i < 4; i++) {
      const task = (await client.callTool({ name: 'get_task', arguments: { task_id } })) as CallToolResult;
      assert.equal((task.structuredContent as { status: string }).status, 'finished', `call ${i}`);
      const md = (await client.readResource({ uri: `signet://tasks/${task_id}/files/document.md` })).contents[0] as { text: string };
      assert.equal(md.text, markdown);
    }
    assert.notEqual(provider.saved!.refresh_token, before, 'refreshed (the refresh token rotated)');
    for (const node of [a, b]) assert.ok((proxy.stats.served.get(node.port) ?? 0) >= 5, `node ${node.name} served its share: ${[...proxy.stats.served.values()].join(', ')}`);
    assert.deepEqual(proxy.stats.failed, []);
  });
});
