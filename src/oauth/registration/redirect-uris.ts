// Redirect URIs of applications that register themselves (RFC 7591, issue 39): which kinds they may
// register (RFC 8252 §7 for native apps, https for the rest) and how a loopback one matches.

/** RFC 8252 §7.3: the loopback hosts; `localhost` is accepted too, as the MCP clients in use send it (RFC 8252 §8.3 only advises against it). */
const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost']);

export type RedirectUriKind = 'https' | 'loopback' | 'private-use';

/**
 * The kind of a redirect URI a dynamic client may register, or a reason it may not:
 * - `https:` (RFC 8252 §7.2, any web application);
 * - `http:` on a loopback host (RFC 8252 §7.3: 127.0.0.1, [::1]; localhost);
 * - a private-use scheme in reverse-domain form with a dot (RFC 8252 §7.1, e.g. `com.example.app:/cb`).
 * Never a fragment, user info, `http:` to any other host, or `javascript:`, `data:`, `file:` … .
 */
export function redirectUriKind(uri: string): { kind: RedirectUriKind } | { refused: string } {
  if (uri.length > 2000 || /[\s\u0000-\u001f\u007f]/.test(uri)) return { refused: 'must be at most 2000 characters with no white space or control characters' };
  if (uri.includes('#')) return { refused: 'must not contain a fragment (#) (RFC 6749 §3.1.2)' };
  let url: URL;
  try {
    url = new URL(uri);
  } catch {
    return { refused: 'is not an absolute URI' };
  }
  if (url.username !== '' || url.password !== '') return { refused: 'must not contain user information' };
  const scheme = url.protocol.slice(0, -1).toLowerCase();
  if (scheme === 'https') return url.hostname === '' ? { refused: 'has no host' } : { kind: 'https' };
  if (scheme === 'http') {
    return LOOPBACK_HOSTS.has(url.hostname) ? { kind: 'loopback' } : { refused: 'uses http: to a host other than the loopback interface (127.0.0.1, [::1], localhost); use https:' };
  }
  // RFC 8252 §7.1: "a URI scheme based on a domain name under their control, expressed in reverse order"
  if (/^[a-z][a-z0-9+-]*(\.[a-z0-9+-]+)+$/.test(scheme)) return { kind: 'private-use' };
  return { refused: `uses the scheme ${scheme}:, which is neither https:, loopback http: nor a private-use scheme in reverse-domain form (e.g. com.example.app:)` };
}

/**
 * RFC 8252 §7.3: "The authorization server MUST allow any port to be specified at the time of the
 * request for loopback IP redirect URIs, to accommodate clients that obtain an available ephemeral port
 * from the operating system at the time of the request." Whether `sent` is a registered loopback URI
 * with another port (scheme, host, path and query the same). Only for dynamic clients: every other
 * application's redirect URIs are compared byte for byte (spec "The redirect URI is registered").
 */
export function redirectUriMatchesDynamic(registered: readonly string[], sent: string): boolean {
  if (registered.includes(sent)) return true;
  if ('refused' in redirectUriKind(sent)) return false;
  let url: URL;
  try {
    url = new URL(sent);
  } catch {
    return false;
  }
  if (url.protocol !== 'http:' || !LOOPBACK_HOSTS.has(url.hostname)) return false;
  const withoutPort = (u: URL) => `${u.protocol}//${u.hostname}${u.pathname}${u.search}`;
  return registered.some((r) => {
    if (!URL.canParse(r)) return false;
    const known = new URL(r);
    return known.protocol === 'http:' && LOOPBACK_HOSTS.has(known.hostname) && withoutPort(known) === withoutPort(url);
  });
}
