// A person's browser over real HTTP, without Chromium (a "direct session"): a cookie jar, redirects
// followed by hand, forms posted with the page's CSRF token — against a listening Signet, so relying-party
// libraries talk to the same server over the network.
import assert from 'node:assert/strict';
import { cookieHeader, rememberCookies } from '../../helpers/cookie-jar.ts';

export class HttpBrowser {
  readonly cookies = new Map<string, string>();

  private remember(response: Response): void {
    rememberCookies(this.cookies, response);
  }

  private cookieHeader(): Record<string, string> {
    return cookieHeader(this.cookies);
  }

  async get(url: string | URL): Promise<Response> {
    const response = await fetch(url, { redirect: 'manual', headers: this.cookieHeader() });
    this.remember(response);
    return response;
  }

  async post(url: string | URL, form: Record<string, string | string[]>): Promise<Response> {
    const body = new URLSearchParams();
    for (const [k, v] of Object.entries(form)) for (const one of [v].flat()) body.append(k, one);
    const response = await fetch(url, { method: 'POST', redirect: 'manual', headers: { 'content-type': 'application/x-www-form-urlencoded', origin: new URL(url).origin, ...this.cookieHeader() }, body });
    this.remember(response);
    return response;
  }

  /**
   * Follows redirects on Signet's origin until the browser is sent elsewhere (the application's callback)
   * or a page is shown. Returns the final URL and, for a page, its HTML.
   */
  async follow(start: string | URL, origin: string): Promise<{ url: URL; page?: string; status: number }> {
    let url = new URL(start);
    for (let hops = 0; hops < 10; hops += 1) {
      if (url.origin !== origin) return { url, status: 302 };
      const response = await this.get(url);
      if (response.status >= 300 && response.status < 400) {
        url = new URL(response.headers.get('location')!, url);
        continue;
      }
      return { url, page: await response.text(), status: response.status };
    }
    throw new Error('too many redirects');
  }

  /**
   * The interactive flow of an authorization URL: signs in when the sign-in page is shown, allows when
   * the consent page is shown; returns the callback URL the browser is sent to.
   */
  async authorize(authorizationUrl: URL, person: { login: string; password: string }, options: { expectSignIn?: boolean } = {}): Promise<URL> {
    const origin = authorizationUrl.origin;
    let at = await this.follow(authorizationUrl, origin);
    for (let step = 0; step < 4 && at.page !== undefined; step += 1) {
      assert.equal(at.status, 200, `a page is shown at ${at.url.pathname}: ${at.page.slice(0, 300)}`);
      const csrf = /name="_csrf" value="([^"]+)"/.exec(at.page)?.[1];
      assert.ok(csrf, `the page at ${at.url.pathname} has a form`);
      const request = at.url.searchParams.get('request') ?? '';
      let response: Response;
      if (at.url.pathname === '/signin') {
        if (options.expectSignIn === false) assert.fail('the sign-in page was shown although a session exists');
        response = await this.post(new URL('/signin', origin), { _csrf: csrf, request, identifier: person.login, password: person.password });
      } else if (at.url.pathname === '/consent') {
        assert.notEqual(options.expectSignIn, true, 'the consent page came before a sign-in');
        const ticked = [...at.page.matchAll(/name="scope" value="([a-z]+)" checked/g)].map((m) => m[1]!);
        response = await this.post(new URL('/consent', origin), { _csrf: csrf, request, decision: 'allow', scope: ticked });
      } else {
        throw new Error(`unexpected page ${at.url.pathname}`);
      }
      if (at.url.pathname === '/signin') options = { ...options, expectSignIn: undefined };
      assert.equal(response.status, 303, `the form at ${at.url.pathname} was accepted`);
      at = await this.follow(new URL(response.headers.get('location')!, origin), origin);
    }
    assert.equal(at.page, undefined, 'the browser left Signet for the callback');
    return at.url;
  }
}
