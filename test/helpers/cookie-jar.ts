// A cookie jar for the tests' HTTP browsers: what a response's Set-Cookie lines leave in it, and the
// Cookie header it sends.

/** Applies a response's Set-Cookie lines: a value is kept, an empty or expired one removes the cookie. */
export function rememberCookies(jar: Map<string, string>, response: Response): void {
  for (const line of response.headers.getSetCookie()) {
    const [pair, ...attributes] = line.split(';');
    const eq = pair!.indexOf('=');
    const name = pair!.slice(0, eq).trim();
    const value = pair!.slice(eq + 1).trim();
    const expired = attributes.some((a) => /^\s*max-age=0$/i.test(a) || (/^\s*expires=/i.test(a) && Date.parse(a.split('=')[1]!) < Date.now()));
    if (value === '' || expired) jar.delete(name);
    else jar.set(name, value);
  }
}

/** The Cookie header of a jar (none when it is empty). */
export function cookieHeader(jar: Map<string, string>): Record<string, string> {
  return jar.size ? { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } : {};
}
