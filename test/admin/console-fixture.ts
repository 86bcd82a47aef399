// The admin console through app.inject: a browser-like cookie jar per "browser", the CSRF token read
// from each page's form, and an operator (password, authenticator app, the operator role).
import type { LightMyRequestResponse } from 'fastify';
import { addRole } from '../../src/accounts/roles.ts';
import { createAccount } from '../../src/accounts/accounts.ts';
import { beginTotpSetup, confirmTotpSetup, totpCode } from '../../src/accounts/factors/totp.ts';
import type { AdminFixture } from './admin-fixture.ts';

export const OPERATOR_PASSWORD = 'operator password long enough';

export type ConsoleBrowser = {
  cookies: Map<string, string>;
  get(url: string): Promise<LightMyRequestResponse>;
  /** a form POST carrying the CSRF token of the last page (unless `csrf: false`) */
  post(url: string, form: Record<string, string>, options?: { csrf?: boolean }): Promise<LightMyRequestResponse>;
};

export function csrfOf(html: string): string | undefined {
  return /name="_csrf" value="([^"]+)"/.exec(html)?.[1];
}

export function consoleBrowser(f: AdminFixture): ConsoleBrowser {
  const cookies = new Map<string, string>();
  let csrf: string | undefined;
  const header = () => [...cookies].map(([k, v]) => `${k}=${v}`).join('; ');
  function remember(res: LightMyRequestResponse) {
    for (const c of res.cookies) {
      if (c.value === '' || (c.expires !== undefined && c.expires.getTime() <= Date.now())) cookies.delete(c.name);
      else cookies.set(c.name, c.value);
    }
    const token = csrfOf(res.body);
    if (token) csrf = token;
    return res;
  }
  return {
    cookies,
    async get(url) {
      return remember(await f.adminApp.inject({ method: 'GET', url, headers: { cookie: header(), accept: 'text/html' } }));
    },
    async post(url, form, options = {}) {
      const body = new URLSearchParams({ ...(options.csrf === false || csrf === undefined ? {} : { _csrf: csrf }), ...form }).toString();
      return remember(await f.adminApp.inject({ method: 'POST', url, payload: body, headers: { cookie: header(), 'content-type': 'application/x-www-form-urlencoded' } }));
    },
  };
}

/** An account with the operator role and an authenticator app; returns its sub and TOTP key. */
export async function createOperator(f: AdminFixture, email = 'operator@example.com', options: { role?: boolean; totp?: boolean } = {}): Promise<{ sub: string; secret: string | undefined }> {
  const { db, keys } = f.deps;
  const { sub } = await createAccount(db, f.clock, { email, password: OPERATOR_PASSWORD, emailVerified: true });
  if (options.role !== false) await addRole(db, f.clock, sub, 'operator');
  if (options.totp === false) return { sub, secret: undefined };
  const setup = await beginTotpSetup(db, keys.factorSecret, f.clock, { sub, issuer: 'Signet', label: email });
  await confirmTotpSetup(db, keys.factorSecret, f.clock, sub, totpCode(setup.secretBase32, f.clock()));
  return { sub, secret: setup.secretBase32 };
}

/** Signs the browser in: password, then (when the operator has one) a fresh TOTP code. */
export async function signInToConsole(f: AdminFixture, browser: ConsoleBrowser, email: string, secret: string | undefined): Promise<LightMyRequestResponse> {
  await browser.get('/admin/signin');
  const afterPassword = await browser.post('/admin/signin', { identifier: email, password: OPERATOR_PASSWORD });
  if (secret === undefined) return afterPassword;
  await browser.get('/admin/signin/two-step');
  // A code is taken once per 30-second step: the next step's code.
  f.clock.advance(30_000);
  return browser.post('/admin/signin/two-step', { code: totpCode(secret, f.clock()) });
}
