// HTTP-level helpers for the authorization-flow tests: a person, an application, and a tiny browser
// (a cookie jar per host, forms posted with their CSRF token) driving app.inject.
import assert from 'node:assert/strict';
import type { LightMyRequestResponse } from 'fastify';
import * as accounts from '../../src/accounts/accounts.ts';
import * as clients from '../../src/clients/clients.ts';
import { testApp, TEST_BASE_URL, type TestApp } from '../helpers/app.ts';
import type { TestDatabase } from '../helpers/databases.ts';

export const REDIRECT_URI = 'https://app.example/callback';
export const PASSWORD = 'correct horse battery';
export const EMAIL = 'person@example.com';

export type Flow = TestApp & {
  clientId: string;
  clientSecret: string;
  sub: string;
  host: string;
  authorizePath(params?: Record<string, string>): string;
};

export async function flowSetup(database: TestDatabase, env: Record<string, string> = {}, scopes = ['openid', 'profile', 'email', 'phone']): Promise<Flow> {
  const t = await testApp(database, env);
  const person = await accounts.createAccount(database.db, t.clock, { email: EMAIL, phone: '+4915112345678', name: 'Pat', password: PASSWORD });
  const { client, clientSecret } = await clients.registerClient(database.db, t.clock, t.deps.keys.tokenHash, { name: 'Demo App', redirectUris: [REDIRECT_URI], scopes });
  const host = new URL(env.SIGNET_BASE_URL ?? TEST_BASE_URL).host;
  return {
    ...t,
    clientId: client.clientId,
    clientSecret: clientSecret!,
    sub: person.sub,
    host,
    authorizePath(params = {}) {
      return `/oauth/authorize?${new URLSearchParams({ client_id: client.clientId, redirect_uri: REDIRECT_URI, ...params }).toString()}`;
    },
  };
}

export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  assert.ok(match, 'the page carries a CSRF token');
  return match[1]!;
}

/** A minimal browser for one host: keeps cookies, follows nothing by itself. */
export class TinyBrowser {
  readonly cookies = new Map<string, string>();
  readonly flow: Flow;
  readonly host: string;
  readonly headers: Record<string, string>;
  constructor(flow: Flow, host = flow.host, headers: Record<string, string> = {}) {
    this.flow = flow;
    this.host = host;
    this.headers = headers;
  }

  private remember(res: LightMyRequestResponse): void {
    for (const c of res.cookies) {
      if (c.value === '' || (c.expires && c.expires.getTime() < Date.now())) this.cookies.delete(c.name);
      else this.cookies.set(c.name, c.value);
    }
  }

  private cookieHeader(): Record<string, string> {
    return this.cookies.size ? { cookie: [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
  }

  async get(path: string): Promise<LightMyRequestResponse> {
    const res = await this.flow.app.inject({ method: 'GET', url: path, headers: { host: this.host, ...this.headers, ...this.cookieHeader() } });
    this.remember(res);
    return res;
  }

  async post(path: string, form: Record<string, string | string[]>): Promise<LightMyRequestResponse> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const one of [v].flat()) body.append(k, one);
    const res = await this.flow.app.inject({
      method: 'POST',
      url: path,
      headers: { host: this.host, 'content-type': 'application/x-www-form-urlencoded', ...this.headers, ...this.cookieHeader() },
      payload: body.toString(),
    });
    this.remember(res);
    return res;
  }

  /** Loads a page with a form and posts it with the page's CSRF token. */
  async submit(pagePath: string, action: string, form: Record<string, string | string[]>): Promise<LightMyRequestResponse> {
    const page = await this.get(pagePath);
    assert.equal(page.statusCode, 200, `GET ${pagePath} shows a page (got ${page.statusCode})`);
    return this.post(action, { _csrf: csrfOf(page.body), ...form });
  }

  /** GET /oauth/authorize and return the pending request id from the 302 to our page. */
  async authorize(params: Record<string, string> = {}): Promise<string> {
    const res = await this.get(this.flow.authorizePath(params));
    assert.equal(res.statusCode, 302, res.body);
    const location = new URL(String(res.headers.location));
    assert.equal(location.pathname, '/signin');
    return location.searchParams.get('request')!;
  }

  async signIn(requestId?: string, identifier = EMAIL, password = PASSWORD): Promise<LightMyRequestResponse> {
    const page = requestId ? `/signin?request=${requestId}` : '/signin';
    return this.submit(page, '/signin', { identifier, password, ...(requestId ? { request: requestId } : {}) });
  }

  /** Signs in (when needed) and answers the consent page. Returns the final redirect. */
  async consent(requestId: string, decision: 'allow' | 'deny', scopes?: string[]): Promise<LightMyRequestResponse> {
    const page = await this.get(`/consent?request=${requestId}`);
    assert.equal(page.statusCode, 200, `the consent page is shown (got ${page.statusCode})`);
    // As a browser does: every ticked, enabled checkbox is sent.
    const ticked = [...page.body.matchAll(/name="scope" value="([a-z]+)" checked(?! disabled)/g)].map((m) => m[1]!);
    return this.post('/consent', { _csrf: csrfOf(page.body), request: requestId, decision, scope: scopes ?? ticked });
  }

  /** The whole interactive flow: authorize, sign in, allow. Returns the callback URL. */
  async fullFlow(params: Record<string, string> = {}, scopes?: string[]): Promise<URL> {
    const id = await this.authorize(params);
    const signedIn = await this.signIn(id);
    assert.equal(signedIn.statusCode, 303, signedIn.body);
    const allowed = await this.consent(id, 'allow', scopes);
    assert.equal(allowed.statusCode, 303, allowed.body);
    return new URL(String(allowed.headers.location));
  }
}

export function assertFrameHeaders(headers: Record<string, unknown>): void {
  assert.equal(headers['x-frame-options'], 'DENY');
  assert.match(String(headers['content-security-policy']), /frame-ancestors 'none'/);
}
