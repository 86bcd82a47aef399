// Signing in through the real authorize flow (authorize → sign-in page → consent → callback), for the
// portability tests: the callback's code, or the sign-in page's status when it refused.
import assert from 'node:assert/strict';
import { TinyBrowser, type Flow } from '../oauth/authorize-support.ts';

export /** The whole interactive flow with this person's identifier and password: the callback's code, or the sign-in page's answer. */
async function signInThroughAuthorize(f: Flow, email: string, password: string): Promise<{ status: number; code: string | null }> {
  // A failed attempt makes the next one wait (sign-in throttling): the tests move the clock past it.
  f.clock.advance(15 * 60_000);
  const browser = new TinyBrowser(f);
  const request = await browser.authorize({ scope: 'openid email' });
  const signedIn = await browser.signIn(request, email, password);
  if (signedIn.statusCode !== 303) return { status: signedIn.statusCode, code: null };
  assert.match(String(signedIn.headers.location), /^\/consent\?/, 'a successful sign-in goes on to consent');
  // A person who allowed the application before goes straight back to it.
  const page = await browser.get(`/consent?request=${request}`);
  const answer = page.statusCode === 302 ? page : await browser.consent(request, 'allow');
  assert.ok(answer.statusCode === 302 || answer.statusCode === 303, answer.body);
  return { status: 303, code: new URL(String(answer.headers.location)).searchParams.get('code') };
}
