// /mcp end to end (issue 39, "Done when"): the official SDK's Client + StreamableHTTPClientTransport
// with an OAuthClientProvider against a real listening Signet — it discovers (RFC 9728, RFC 8414),
// registers itself (RFC 7591), the person signs in and allows it in headless Chromium (axe clean),
// and it lists the tools, parses a real PDF, translates one and reads a translated file through
// resources/read; a refresh keeps working; an ordinary application's token is refused; another
// person's task is not found. A real in-process worker runs the tasks; Debian's Apertium translates.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import type { Browser, BrowserContext } from 'playwright-core';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import * as accounts from '../../src/accounts/accounts.ts';
import * as clients from '../../src/clients/clients.ts';
import { createTranslator } from '../../src/documents/translate/create.ts';
import { insertChain } from '../../src/oauth/tokens.store.ts';
import { issueTokenPair, newChainRow, REFRESH_CHAIN_LIFETIME_MS, tokensFor } from '../../src/oauth/token/issue-tokens.ts';
import { listTasks } from '../../src/tasks/tasks.ts';
import { startTaskRunner } from '../../src/worker/task-runner.ts';
import { accessibilityViolations, chromiumSkip, launchChromium } from '../helpers/browser.ts';
import { startCallbackServer, type CallbackServer } from '../helpers/callback-server.ts';
import { sqliteDatabase } from '../helpers/databases.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';
import { connectWithOAuth, MemoryOAuthProvider } from '../helpers/mcp-client.ts';
import { apertiumMissing, skipUnlessAvailable } from '../helpers/services.ts';

const ALICE = { email: 'alice@example.com', password: 'a long password for alice' };
const BOB = { email: 'bob@example.com', password: 'a long password for bob' };
const FIXTURES = path.resolve(import.meta.dirname, '../fixtures/public');
const CORPUS = path.resolve(import.meta.dirname, '../../bench/translate-pdf/corpus');
const SCREENSHOT = '/tmp/mcp-consent.png';

const apertiumSkip = skipUnlessAvailable('Apertium (eng-spa)', apertiumMissing());

const text = (result: CallToolResult, index = 0) => (result.content[index] as { type: string; text: string }).text;

describe('/mcp with the official SDK client, signed in through Signet\'s OAuth', { skip: chromiumSkip() }, () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let signet: RunningSignet;
  let callback: CallbackServer;
  let browser: Browser;
  let runner: { stop(): Promise<void> };
  let alice: Client;
  let aliceProvider: MemoryOAuthProvider;
  let aliceSub: string;
  const contexts: BrowserContext[] = [];

  /** Plays the person: signs in, looks at the consent page, allows; returns the code from the callback. */
  async function signInAndAllow(url: URL, person: typeof ALICE, check?: (page: import('playwright-core').Page) => Promise<void>): Promise<string> {
    const context = await browser.newContext({ locale: 'en-US' });
    contexts.push(context);
    const page = await context.newPage();
    await page.goto(url.href);
    await page.getByLabel('Email or phone').fill(person.email);
    await page.getByLabel('Password').fill(person.password);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.getByRole('button', { name: 'Allow' }).waitFor();
    await check?.(page);
    const landed = callback.next();
    await page.getByRole('button', { name: 'Allow' }).click();
    const code = (await landed).searchParams.get('code');
    assert.ok(code, 'the callback carries a code');
    return code;
  }

  const mcpUrl = () => `${signet.baseUrl}/mcp`;

  before(async () => {
    database = await sqliteDatabase();
    const translator = apertiumSkip ? undefined : createTranslator({ engine: 'apertium', url: undefined, model: undefined, apiKey: undefined });
    // A 2 MB upload limit: the oversized-PDF test sends 2 MB and a bit, not the default 50.
    signet = await startSignet(database, { SIGNET_UPLOAD_MAX_MB: '2' }, translator ? { translator } : {});
    callback = await startCallbackServer();
    aliceSub = (await accounts.createAccount(database.db, signet.clock, { email: ALICE.email, name: 'Alice', password: ALICE.password })).sub;
    await accounts.createAccount(database.db, signet.clock, { email: BOB.email, name: 'Bob', password: BOB.password });
    const { db, dialect, objects, logger } = signet.deps;
    runner = startTaskRunner({ db, dialect, clock: () => Date.now(), objects, translator, logger }, { pollMs: 100, heartbeatMs: 200 });
    browser = await launchChromium();
  });

  after(async () => {
    await alice?.close();
    await runner?.stop();
    for (const context of contexts) await context.close().catch(() => {});
    await browser?.close();
    await callback?.close();
    await signet?.close();
    await database?.dispose();
  });

  test('"401 from /mcp with WWW-Authenticate: Bearer resource_metadata=…/.well-known/oauth-protected-resource/mcp" when no token is sent', async () => {
    const response = await fetch(mcpUrl(), { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' }, body: '{}' });
    assert.equal(response.status, 401);
    assert.equal(response.headers.get('www-authenticate'), `Bearer resource_metadata="${signet.baseUrl}/.well-known/oauth-protected-resource/mcp"`);
    assert.equal(response.headers.get('x-frame-options'), 'DENY', 'the security headers of every answer');
    assert.equal(response.headers.get('access-control-allow-origin'), null, 'no CORS');
  });

  test('the SDK client "discovers, registers itself, the person signs in and allows it (headless Chromium, axe clean)", then lists the tools', async () => {
    aliceProvider = new MemoryOAuthProvider(callback.url, 'Test Agent');
    alice = await connectWithOAuth(mcpUrl(), aliceProvider, (url) =>
      signInAndAllow(url, ALICE, async (page) => {
        assert.ok(await page.getByText('Test Agent').first().isVisible(), 'the consent page names the agent as it calls itself');
        assert.deepEqual(await accessibilityViolations(page), [], 'the consent page');
        await page.screenshot({ path: SCREENSHOT, fullPage: true });
      }),
    );
    const authorize = aliceProvider.authorizationUrls[0]!;
    assert.equal(authorize.searchParams.get('resource'), `${signet.baseUrl}/mcp`, 'RFC 8707: the token is asked for /mcp');
    assert.match(authorize.searchParams.get('scope') ?? '', /\bdocuments\b/);
    assert.equal(authorize.searchParams.get('code_challenge_method'), 'S256');
    assert.ok(aliceProvider.information?.client_id, 'registered itself');
    const { tools } = await alice.listTools();
    assert.deepEqual(tools.map((t) => t.name), ['parse_pdf', 'translate_pdf', 'list_tasks', 'get_task']);
    assert.ok(!('path' in (tools[0]!.inputSchema.properties ?? {})), 'no local paths over HTTP');
  });

  let parsedTaskId = '';

  test('parse_pdf: "runs a parse task for the person (it appears in their task list) and returns the Markdown as its first text content, with structuredContent {task_id, pages, markdown}; progress notifications while it runs"', async () => {
    const data = readFileSync(path.join(FIXTURES, 'normal_4pages.pdf')).toString('base64');
    const progress: Array<{ progress: number; message?: string }> = [];
    const result = (await alice.callTool({ name: 'parse_pdf', arguments: { data, filename: 'report.pdf' } }, undefined, { onprogress: (p) => progress.push(p), resetTimeoutOnProgress: true })) as CallToolResult;
    assert.equal(result.isError, undefined, text(result));
    const structured = result.structuredContent as { task_id: string; pages: number; markdown: string };
    assert.equal(structured.pages, 4);
    assert.equal(structured.markdown, text(result));
    assert.match(structured.markdown, /코로나-19/);
    assert.ok(progress.length > 0, 'at least one progress notification');
    const json = result.content.find((c) => c.type === 'resource_link' && c.name === 'document.json') as { uri: string } | undefined;
    assert.equal(json?.uri, `signet://tasks/${structured.task_id}/files/document.json`);
    const { tasks } = await listTasks(signet.deps as never, aliceSub, 'docparse', {});
    assert.deepEqual(tasks.map((t) => [t.id, t.source.name, t.status]), [[structured.task_id, 'report.pdf', 'finished']], 'in the person\'s task list, under its name');
    const read = (await alice.readResource({ uri: json!.uri })).contents[0] as { text: string };
    assert.equal((JSON.parse(read.text) as { schema_name: string }).schema_name, 'DoclingDocument');
    parsedTaskId = structured.task_id;
  });

  test('"A broken or oversized PDF is a tool error with the reason, never a 500"', async () => {
    const broken = (await alice.callTool({ name: 'parse_pdf', arguments: { data: readFileSync(path.join(FIXTURES, 'normal_4pages.pdf')).subarray(0, 3000).toString('base64'), filename: 'cut.pdf' } })) as CallToolResult;
    assert.equal(broken.isError, true);
    assert.match(text(broken), /damaged|cannot be opened|could not be read/i);
    const notPdf = (await alice.callTool({ name: 'parse_pdf', arguments: { data: Buffer.from('just text').toString('base64'), filename: 'a.pdf' } })) as CallToolResult;
    assert.equal(notPdf.isError, true);
    assert.match(text(notPdf), /not a PDF/);
    // "Size limits as the upload API's" (SIGNET_UPLOAD_MAX_MB, 2 here): a byte's worth of base64 over it is refused before decoding.
    const huge = (await alice.callTool({ name: 'parse_pdf', arguments: { data: 'A'.repeat(Math.ceil((2 * 1048576 + 3) / 3) * 4), filename: 'big.pdf' } })) as CallToolResult;
    assert.equal(huge.isError, true);
    assert.match(text(huge), /larger than 2 MB/);
    const { tasks } = await listTasks(signet.deps as never, aliceSub, 'docparse', {});
    assert.equal(tasks.length, 1, 'a refused PDF leaves no task behind');
  });

  test('translate_pdf, source_lang left out (told from the text by the worker): "returns the task and its files (translated.pdf, bilingual.pdf, translated.md) as resource links readable through resources/read (binary as blob)"', { skip: apertiumSkip }, async () => {
    const data = readFileSync(path.join(CORPUS, 'amt-handbook.pdf')).toString('base64');
    const result = (await alice.callTool({ name: 'translate_pdf', arguments: { data, filename: 'handbook.pdf', target_lang: 'es' } }, undefined, { timeout: 240_000 })) as CallToolResult;
    assert.equal(result.isError, undefined, text(result));
    const structured = result.structuredContent as { task_id: string; status: string; files: Array<{ name: string; uri: string }> };
    assert.equal(structured.status, 'finished');
    for (const name of ['translated.pdf', 'bilingual.pdf', 'translated.md']) assert.ok(structured.files.some((f) => f.name === name), name);
    const pdf = (await alice.readResource({ uri: structured.files.find((f) => f.name === 'translated.pdf')!.uri })).contents[0] as { blob: string; mimeType: string };
    assert.equal(pdf.mimeType, 'application/pdf');
    assert.equal(Buffer.from(pdf.blob, 'base64').subarray(0, 5).toString(), '%PDF-');
    const task = (await alice.callTool({ name: 'get_task', arguments: { task_id: structured.task_id } })) as CallToolResult;
    assert.deepEqual((task.structuredContent as { options: object }).options, { source_lang: 'en', target_lang: 'es' }, 'the language told from the text is recorded on the task');
  });

  test('translate_pdf refuses a language pair the engine does not offer, with the pairs it does, before any task is made', { skip: apertiumSkip }, async () => {
    const data = readFileSync(path.join(FIXTURES, 'libtasn1-contents-p3.pdf')).toString('base64');
    const result = (await alice.callTool({ name: 'translate_pdf', arguments: { data, filename: 'x.pdf', source_lang: 'en', target_lang: 'ja' } })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.match(text(result), /cannot translate en to ja\. It offers: .*en→es/);
  });

  test('"list_tasks, get_task — the person\'s own tasks only": another person\'s task is "not found", and so is its file', async () => {
    const bobProvider = new MemoryOAuthProvider(callback.url, 'Bob Agent');
    const bob = await connectWithOAuth(mcpUrl(), bobProvider, (url) => signInAndAllow(url, BOB));
    try {
      const listed = (await bob.callTool({ name: 'list_tasks', arguments: {} })) as CallToolResult;
      assert.deepEqual((listed.structuredContent as { tasks: unknown[] }).tasks, []);
      const other = (await bob.callTool({ name: 'get_task', arguments: { task_id: parsedTaskId } })) as CallToolResult;
      assert.equal(other.isError, true);
      assert.match(text(other), /No such task/);
      const reparse = (await bob.callTool({ name: 'parse_pdf', arguments: { task_id: parsedTaskId } })) as CallToolResult;
      assert.match(text(reparse), /No such task/);
      await assert.rejects(bob.readResource({ uri: `signet://tasks/${parsedTaskId}/files/document.md` }), (error: Error & { code?: number }) => error.code === -32002);
    } finally {
      await bob.close();
    }
    const own = (await alice.callTool({ name: 'get_task', arguments: { task_id: parsedTaskId } })) as CallToolResult;
    assert.equal((own.structuredContent as { status: string }).status, 'finished');
    assert.ok(own.content.some((c) => c.type === 'resource_link' && c.name === 'document.md'), 'its files as resource links');
  });

  test('"a refresh keeps working": two hours later the access token has expired; the SDK refreshes it and the next call succeeds', async () => {
    const before = aliceProvider.saved!.access_token;
    signet.clock.advance(2 * 60 * 60 * 1000 + 1000);
    const result = (await alice.callTool({ name: 'list_tasks', arguments: { kind: 'docparse' } })) as CallToolResult;
    assert.equal(result.isError, undefined);
    assert.notEqual(aliceProvider.saved!.access_token, before, 'a new access token');
    assert.equal((result.structuredContent as { tasks: unknown[] }).tasks.length, 1);
  });

  test('"a token for an ordinary application is refused at /mcp": no resource → 401 invalid_token; for /mcp without scope documents → 403 insufficient_scope', async () => {
    const { client } = await clients.registerClient(database.db, signet.clock, signet.deps.keys.tokenHash, { name: 'Ordinary App', redirectUris: [callback.url], scopes: ['openid', 'profile', 'documents'] });
    const now = signet.clock();
    const ordinary = await issueTokenPair(database.db, signet.deps.keys.tokenHash, now, { clientId: client.clientId, sub: aliceSub, scope: 'openid documents', expiresAt: now + REFRESH_CHAIN_LIFETIME_MS });
    const initialize = (token: string) =>
      fetch(mcpUrl(), {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: LATEST_PROTOCOL_VERSION, capabilities: {}, clientInfo: { name: 'x', version: '1' } } }),
      });
    const refused = await initialize(ordinary.access_token);
    assert.equal(refused.status, 401);
    assert.match(refused.headers.get('www-authenticate') ?? '', /^Bearer resource_metadata="[^"]+\/\.well-known\/oauth-protected-resource\/mcp", error="invalid_token"/);

    const chain = { ...newChainRow(now, { clientId: client.clientId, sub: aliceSub, scope: 'openid', expiresAt: now + REFRESH_CHAIN_LIFETIME_MS }), resource: `${signet.baseUrl}/mcp` };
    await insertChain(database.db, chain);
    const noScope = await initialize(tokensFor(signet.deps.keys.tokenHash, chain, 1, now, 'openid').access_token);
    assert.equal(noScope.status, 403);
    assert.match(noScope.headers.get('www-authenticate') ?? '', /error="insufficient_scope"/);
    assert.match(noScope.headers.get('www-authenticate') ?? '', /scope="documents"/);

    const garbage = await initialize('not-a-token');
    assert.equal(garbage.status, 401);
    assert.match(garbage.headers.get('www-authenticate') ?? '', /error="invalid_token"/);
  });

  test('stateless Streamable HTTP: initialize in the current revision and the one before it; no session id; GET and DELETE are 405', async () => {
    const token = aliceProvider.saved!.access_token;
    const headers = { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
    for (const version of [LATEST_PROTOCOL_VERSION, SUPPORTED_PROTOCOL_VERSIONS[1]!]) {
      const response = await fetch(mcpUrl(), { method: 'POST', headers, body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: version, capabilities: {}, clientInfo: { name: 'x', version: '1' } } }) });
      assert.equal(response.status, 200);
      assert.equal(response.headers.get('mcp-session-id'), null);
      const body = await response.text();
      assert.ok(body.includes(`"protocolVersion":"${version}"`), `${version}: ${body.slice(0, 200)}`);
    }
    for (const method of ['GET', 'DELETE']) {
      const response = await fetch(mcpUrl(), { method, headers: { authorization: `Bearer ${token}`, accept: 'text/event-stream' } });
      assert.equal(response.status, 405, method);
      assert.equal(response.headers.get('allow'), 'POST');
    }
  });
});
