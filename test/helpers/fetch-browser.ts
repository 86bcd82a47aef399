// A browser of one host over fetch, for tests that talk to real listening servers: cookies kept,
// redirects not followed, forms posted with the page's CSRF token.
import assert from 'node:assert/strict';
import { cookieHeader, rememberCookies } from './cookie-jar.ts';

function formBody(form: Record<string, string | string[]>): string {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(form)) for (const one of [value].flat()) body.append(name, one);
  return body.toString();
}

export function fetchBrowser(baseUrl: string) {
  const jar = new Map<string, string>();
  const csrf = (html: string) => /name="_csrf" value="([^"]+)"/.exec(html)![1]!;
  return {
    async get(pathAndQuery: string) {
      const res = await fetch(`${baseUrl}${pathAndQuery}`, { redirect: 'manual', headers: cookieHeader(jar) });
      rememberCookies(jar, res);
      return { res, body: await res.text() };
    },
    async submit(pagePath: string, action: string, form: Record<string, string | string[]>) {
      const page = await this.get(pagePath);
      assert.equal(page.res.status, 200, `GET ${pagePath}: ${page.body.slice(0, 200)}`);
      const res = await fetch(`${baseUrl}${action}`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded', ...cookieHeader(jar) },
        body: formBody({ _csrf: csrf(page.body), ...form }),
      });
      rememberCookies(jar, res);
      return { res, body: await res.text(), page: page.body };
    },
  };
}

/** The person at `{baseUrl}/device`: the code, the sign-in (which comes back), then Allow or Deny. Returns the last page. */
export async function approveDevice(baseUrl: string, userCode: string, person: { email: string; password: string }, decision: 'allow' | 'deny' = 'allow'): Promise<string> {
  const browser = fetchBrowser(baseUrl);
  const entered = await browser.submit('/device', '/device', { user_code: userCode });
  assert.equal(entered.res.status, 303, entered.body.slice(0, 300));
  const confirm = entered.res.headers.get('location')!;
  const toSignIn = await browser.get(confirm);
  assert.equal(toSignIn.res.status, 302);
  const signedIn = await browser.submit(toSignIn.res.headers.get('location')!, '/signin', { identifier: person.email, password: person.password, return: confirm });
  assert.equal(signedIn.res.headers.get('location'), confirm);
  const consent = await browser.get(confirm);
  assert.equal(consent.res.status, 200);
  const request = /name="request" value="([^"]+)"/.exec(consent.body)![1]!;
  const scopes = [...consent.body.matchAll(/name="scope" value="([a-z]+)" checked(?! disabled)/g)].map((m) => m[1]!);
  const done = await browser.submit(confirm, '/device/confirm', { request, decision, scope: scopes });
  assert.equal(done.res.status, 200);
  return done.body;
}
