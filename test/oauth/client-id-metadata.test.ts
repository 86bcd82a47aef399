// Client ID Metadata Documents (issue 39; draft-ietf-oauth-client-id-metadata-document): an https URL as
// client_id names the client's metadata, fetched by Signet through the guarded outbound fetch from a real
// loopback HTTPS server (certificate made at test time). Over HTTP (app.inject) on SQLite and PostgreSQL,
// then the MCP TypeScript SDK's own client code (auth() with clientMetadataUrl) against a listening Signet.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { LightMyRequestResponse } from 'fastify';
import { createAccount } from '../../src/accounts/accounts.ts';
import { listAuditEvents } from '../../src/audit/audit.ts';
import { findClient, listClients, toView, updateClient } from '../../src/clients/clients.ts';
import { MINUTE } from '../../src/config/clock.ts';
import { s256Challenge } from '../../src/oauth/pkce.ts';
import { TEST_BASE_URL } from '../helpers/app.ts';
import { forEachDatabase, sqliteDatabase } from '../helpers/databases.ts';
import { json, startHttpsTestServer, type HttpsTestServer } from '../helpers/https-test-server.ts';
import { startSignet, type RunningSignet } from '../helpers/live-server.ts';
import { connectWithOAuth, MemoryOAuthProvider } from '../helpers/mcp-client.ts';
import { HttpBrowser } from '../interop/oidc/http-browser.ts';
import { flowSetup, TinyBrowser, type Flow } from './authorize-support.ts';

const MCP = `${TEST_BASE_URL}/mcp`;
const CALLBACK = 'http://127.0.0.1:33418/callback';
const VERIFIER = 'dBjftJeZ4CVP-mB92K27uhbUJU1p1r7wW1gFWFOEjXk';
const PKCE = { code_challenge: s256Challenge(VERIFIER), code_challenge_method: 'S256' };

/** A document as an MCP client publishes it. */
function agentDocument(clientId: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { client_id: clientId, client_name: 'Doc Agent', redirect_uris: [CALLBACK], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none', scope: 'documents', ...extra };
}

let https: HttpsTestServer;
let documents = 0;
before(async () => {
  https = await startHttpsTestServer();
});
after(() => https.close());

forEachDatabase('Client ID Metadata Documents (issue 39)', (open) => {
  let f: Flow;
  /** A fresh document URL per test (and per database), so tests share no cache entry, hit count or registry row. */
  const nextUrl = () => `${https.origin}/agents/${++documents}/client.json`;
  const pathOf = (url: string) => new URL(url).pathname;

  before(async () => {
    f = await flowSetup(await open(), https.signetEnv, ['openid', 'profile', 'documents']);
  });
  after(() => f.app.close());

  const authorize = (params: Record<string, string>, ip = '203.0.113.7') =>
    f.app.inject({ method: 'GET', url: `/oauth/authorize?${new URLSearchParams({ response_type: 'code', redirect_uri: CALLBACK, scope: 'documents', ...PKCE, ...params })}`, headers: { host: f.host }, remoteAddress: ip });
  const token = (form: Record<string, string>) =>
    f.app.inject({ method: 'POST', url: '/oauth/token', headers: { host: f.host, 'content-type': 'application/x-www-form-urlencoded' }, payload: new URLSearchParams(form).toString() });
  function assertRefused(res: LightMyRequestResponse, error: string, description: RegExp): void {
    assert.equal(res.statusCode, 400, res.body);
    assert.equal(res.headers.location, undefined, 'never a redirect: the redirect URI is not known to be the client\'s');
    const body = res.json<{ error: string; error_description: string }>();
    assert.equal(body.error, error, res.body);
    assert.match(body.error_description, description);
  }

  test('MCP authorization "Client ID Metadata Documents": the https client_id is fetched, the person sees its own name, the host of its metadata URL and the not-verified warning, and the flow ends in tokens for the resource; a refresh works; `client list` shows it dynamic; audit client.registered', async () => {
    const clientId = nextUrl();
    https.route(pathOf(clientId), json(agentDocument(clientId), { 'cache-control': 'max-age=300' }));
    const browser = new TinyBrowser(f);
    const id = await browser.authorize({ client_id: clientId, redirect_uri: CALLBACK, response_type: 'code', scope: 'documents', resource: MCP, ...PKCE });
    assert.equal((await browser.signIn(id)).statusCode, 303);
    const page = await browser.get(`/consent?request=${id}`);
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /“Doc Agent” \(registered itself\)/);
    assert.match(page.body, /has not verified this application/);
    assert.match(page.body, new RegExp(`It describes itself in a document published at <strong>127\\.0\\.0\\.1:${new URL(https.origin).port}</strong>`));
    assert.match(page.body, /you will be sent to <strong>127\.0\.0\.1:33418<\/strong>/);
    const allowed = await browser.consent(id, 'allow');
    const code = new URL(String(allowed.headers.location)).searchParams.get('code')!;
    assert.ok(code);

    const tokens = await token({ grant_type: 'authorization_code', code, redirect_uri: CALLBACK, client_id: clientId, code_verifier: VERIFIER });
    assert.equal(tokens.statusCode, 200, tokens.body);
    const pair = tokens.json<{ access_token: string; refresh_token: string; scope: string }>();
    assert.equal(pair.scope, 'documents');
    const refreshed = await token({ grant_type: 'refresh_token', refresh_token: pair.refresh_token, client_id: clientId });
    assert.equal(refreshed.statusCode, 200, refreshed.body);

    const view = toView((await listClients(f.deps.db)).find((c) => c.clientId === clientId)!);
    assert.equal(view.dynamic, true);
    assert.equal(view.name, 'Doc Agent');
    assert.deepEqual(view.redirect_uris, [CALLBACK]);
    const { events } = await listAuditEvents(f.deps.db, { clientId });
    assert.ok(events.some((e) => e.type === 'client.registered'), JSON.stringify(events));
    assert.equal(https.hits(pathOf(clientId)), 1, 'fetched once: Cache-Control max-age honoured');
  });

  test('draft §8.1: "redirect URIs must match the document" — a redirect_uri not in the document is refused; the document changed (cache expired, the injected clock) → the application follows it', async () => {
    const clientId = nextUrl();
    https.route(pathOf(clientId), json(agentDocument(clientId), { 'cache-control': 'max-age=60' }));
    assertRefused(await authorize({ client_id: clientId, redirect_uri: 'https://attacker.example/cb' }), 'invalid_request', /redirect_uri is not registered/);
    https.route(pathOf(clientId), json(agentDocument(clientId, { client_name: 'Doc Agent 2', redirect_uris: ['https://agent.example/cb'] })));
    f.clock.advance(2 * MINUTE);
    assert.equal((await authorize({ client_id: clientId, redirect_uri: 'https://agent.example/cb' })).statusCode, 302);
    const client = (await findClient(f.deps.db, clientId))!;
    assert.equal(client.name, 'Doc Agent 2');
    assert.deepEqual(client.redirectUris, ['https://agent.example/cb']);
    assertRefused(await authorize({ client_id: clientId }), 'invalid_request', /redirect_uri is not registered/);
  });

  test('draft §4: refused documents — client_id not the URL, a client_secret, token_endpoint_auth_method client_secret_post or private_key_jwt (not supported), bad redirect URIs, not JSON, wrong Content-Type, a redirect (never followed), too large, 404', async () => {
    const cases: Array<[string, (url: string) => Parameters<HttpsTestServer['route']>[1], RegExp]> = [
      ['client_id mismatch', (url) => json(agentDocument(`${url}x`)), /client_id must be exactly the URL/],
      ['secret', (url) => json(agentDocument(url, { client_secret: 's3cret' })), /must not contain client_secret/],
      ['client_secret_post', (url) => json(agentDocument(url, { token_endpoint_auth_method: 'client_secret_post' })), /token_endpoint_auth_method "client_secret_post" is not supported/],
      ['private_key_jwt', (url) => json(agentDocument(url, { token_endpoint_auth_method: 'private_key_jwt' })), /"private_key_jwt" is not supported/],
      ['http redirect URI', (url) => json(agentDocument(url, { redirect_uris: ['http://agent.example/cb'] })), /not acceptable: .*http:/],
      ['not JSON', () => (_req, res) => res.writeHead(200, { 'content-type': 'application/json' }).end('{nope'), /not valid JSON/],
      ['Content-Type', () => (_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('{}'), /Content-Type is text\/html/],
      ['redirect', () => (_req, res) => res.writeHead(302, { location: '/elsewhere.json' }).end(), /redirects are not followed/],
      ['too large', (url) => json(agentDocument(url, { client_uri: `https://agent.example/${'x'.repeat(6000)}` })), /larger than 5120 bytes/],
      ['404', () => json({}, {}, 404), /answered 404/],
    ];
    for (const [why, handler, description] of cases) {
      const clientId = nextUrl();
      https.route(pathOf(clientId), handler(clientId));
      assertRefused(await authorize({ client_id: clientId }), 'invalid_client', description);
      assert.equal(await findClient(f.deps.db, clientId), undefined, `${why}: nothing stored`);
    }
  });

  test('draft §3 and the outbound guards: a client_id URL with a query, without a path, with a fragment, or at a private address is refused without a fetch', async () => {
    for (const [clientId, description] of [
      [`${https.origin}/client.json?v=1`, /query string/],
      [`${https.origin}/client.json#me`, /fragment/],
      [`${https.origin}/`, /has no path/],
      [`${https.origin}/a/../client.json`, /normal form/],
      ['https://10.0.0.8/client.json', /not a public internet address/],
      ['https://169.254.169.254/latest/meta-data/client.json', /not a public internet address/],
      ['https://[fd00::1]/client.json', /not a public internet address/],
    ] as const) {
      assertRefused(await authorize({ client_id: clientId }), 'invalid_client', description);
    }
  });

  test('an operator can disable a document client: it stays disabled when its document is fetched again', async () => {
    const clientId = nextUrl();
    https.route(pathOf(clientId), json(agentDocument(clientId)));
    assert.equal((await authorize({ client_id: clientId })).statusCode, 302);
    await updateClient(f.deps.db, f.clock, clientId, { enabled: false });
    assertRefused(await authorize({ client_id: clientId }), 'invalid_client', /No enabled application/);
  });

  test('RFC 8414 metadata: client_id_metadata_document_supported true while registration is open; with SIGNET_CLIENT_REGISTRATION=closed false, and a URL client_id is an unknown application (nothing fetched)', async () => {
    const doc = (await f.app.inject({ url: '/.well-known/oauth-authorization-server', headers: { host: f.host } })).json<Record<string, unknown>>();
    assert.equal(doc.client_id_metadata_document_supported, true);
    const closed = await flowSetup(await open(), { ...https.signetEnv, SIGNET_CLIENT_REGISTRATION: 'closed' });
    try {
      const meta = (await closed.app.inject({ url: '/.well-known/oauth-authorization-server', headers: { host: closed.host } })).json<Record<string, unknown>>();
      assert.equal(meta.client_id_metadata_document_supported, false);
      const clientId = nextUrl();
      https.route(pathOf(clientId), json(agentDocument(clientId)));
      const res = await closed.app.inject({ method: 'GET', url: `/oauth/authorize?${new URLSearchParams({ client_id: clientId, redirect_uri: CALLBACK, ...PKCE })}`, headers: { host: closed.host } });
      assert.equal(res.statusCode, 400);
      assert.equal(https.hits(pathOf(clientId)), 0);
    } finally {
      await closed.app.close();
    }
  });
});

/** The MCP SDK's OAuthClientProvider (test/helpers/mcp-client.ts) with a Client ID Metadata Document URL: the SDK then uses it as client_id instead of registering. */
class MetadataDocumentProvider extends MemoryOAuthProvider {
  readonly clientMetadataUrl: string;
  constructor(clientMetadataUrl: string) {
    super(CALLBACK, 'SDK Agent');
    this.clientMetadataUrl = clientMetadataUrl;
  }
}

describe('the MCP TypeScript SDK client with a Client ID Metadata Document', () => {
  let database: Awaited<ReturnType<typeof sqliteDatabase>>;
  let server: RunningSignet;
  const person = { login: 'ada@example.com', password: 'analytical-engine-1843' };

  before(async () => {
    database = await sqliteDatabase();
    server = await startSignet(database, https.signetEnv);
    await createAccount(server.deps.db, server.deps.clock, { email: person.login, name: 'Ada', emailVerified: true, password: person.password });
  });
  after(async () => {
    await server?.close();
    await database?.dispose();
  });

  test('issue 39 "Done when": Client + StreamableHTTPClientTransport against /mcp with a Client ID Metadata Document served from a local HTTPS test server — the SDK sees client_id_metadata_document_supported, uses its clientMetadataUrl as client_id (no registration), the person allows it, the token is for {base}/mcp and the client lists the tools', async () => {
    const clientId = `${https.origin}/sdk/client.json`;
    const provider = new MetadataDocumentProvider(clientId);
    https.route('/sdk/client.json', json({ client_id: clientId, ...provider.clientMetadata, scope: 'documents' }));
    const mcpUrl = `${server.baseUrl}/mcp`;
    const client = await connectWithOAuth(mcpUrl, provider, async (url) => {
      assert.equal(url.searchParams.get('client_id'), clientId, 'the SDK chose the URL client_id');
      assert.equal(url.searchParams.get('resource'), mcpUrl);
      const landed = await new HttpBrowser().authorize(url, person);
      assert.equal(`${landed.origin}${landed.pathname}`, CALLBACK);
      return landed.searchParams.get('code')!;
    });
    try {
      assert.equal(provider.information?.client_id, clientId);
      const tools = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(tools.includes('parse_pdf') && tools.includes('list_tasks'), tools.join(', '));
      assert.ok(provider.saved?.refresh_token);
      assert.ok(https.hits('/sdk/client.json') >= 1, 'Signet fetched the document');
      const stored = (await findClient(server.deps.db, clientId))!;
      assert.equal(stored.dynamic, true);
      assert.equal(stored.name, 'SDK Agent');
      assert.deepEqual((await listClients(server.deps.db)).filter((c) => c.dynamic).map((c) => c.clientId), [clientId], 'no RFC 7591 registration besides');
    } finally {
      await client.close();
    }
  });
});
