// Device cookies (OWASP, "Slow Down Online Guessing Attacks with Device Cookies"). After a successful
// sign-in the browser gets proof that it signed in to that account before: a random nonce and an
// expiry, MACed together with the account's sub under a key of its own (keys.deviceCookie). The sub
// is not in the cookie, so the value tells nobody but the server which account it is for; the server
// checks it only against the account being signed in to, and a changed or other-account entry fails
// the MAC. An attempt with a valid device cookie is exempt from the per-account ceiling (throttle.ts):
// the owner's known browsers get in while strangers from many addresses push the ceiling; its failures
// count against the device instead, so a stolen cookie locks itself out.
import { randomBytes } from 'node:crypto';
import { DAY } from '../config/clock.ts';
import { constantTimeEqual, keyedHash } from '../oauth/secrets.ts';

/** The cookie's base name (web/cookies.ts adds `__Host-` on https). */
export const DEVICE_COOKIE = 'signet_device';

/** How long a browser stays known after its last sign-in to an account (the cookie's Max-Age and the entry's expiry). */
export const DEVICE_COOKIE_LIFETIME_MS = 180 * DAY;

/** A shared browser (a family computer) stays known for this many accounts; the least recent is dropped. */
export const DEVICES_PER_COOKIE = 5;

/** One entry: nonce (16 bytes) "." expiry (ms, base 36) "." MAC (32 bytes); entries are joined by "~". */
const ENTRY = /^([A-Za-z0-9_-]{22})\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/;
const SEPARATOR = '~';

function mac(key: Buffer, sub: string, nonce: string, expiresAt: number): string {
  return keyedHash(key, `${sub}\n${nonce}\n${expiresAt}`);
}

function entries(cookie: unknown): Array<{ nonce: string; expiresAt: number; mac: string; raw: string }> {
  if (typeof cookie !== 'string' || cookie.length > DEVICES_PER_COOKIE * 100) return [];
  return cookie
    .split(SEPARATOR)
    .slice(0, DEVICES_PER_COOKIE)
    .flatMap((raw) => {
      const match = ENTRY.exec(raw);
      return match ? [{ nonce: match[1]!, expiresAt: parseInt(match[2]!, 36), mac: match[3]!, raw }] : [];
    });
}

/**
 * The device this cookie proves for account `sub`: an id standing for its entry (a keyed hash of the
 * nonce, safe to store), or undefined when no entry is a valid, unexpired one for this account.
 * Every entry's MAC is computed, so the time does not depend on which one (if any) matches.
 */
export function knownDevice(key: Buffer, sub: string, cookie: unknown, now: number): string | undefined {
  let found: string | undefined;
  for (const entry of entries(cookie)) {
    const valid = constantTimeEqual(mac(key, sub, entry.nonce, entry.expiresAt), entry.mac) && entry.expiresAt > now;
    if (valid && found === undefined) found = keyedHash(key, `device\n${entry.nonce}`);
  }
  return found;
}

/**
 * The cookie value after `sub` signed in from this browser: a fresh entry for `sub` first (a new nonce,
 * so the device's failure count starts over), then the other accounts' entries this browser still
 * holds (those still valid are kept as they are; they cannot be told apart from here, and that is fine).
 */
export function deviceCookieAfterSignIn(key: Buffer, sub: string, previous: unknown, now: number): string {
  const nonce = randomBytes(16).toString('base64url');
  const expiresAt = now + DEVICE_COOKIE_LIFETIME_MS;
  const fresh = `${nonce}.${expiresAt.toString(36)}.${mac(key, sub, nonce, expiresAt)}`;
  const others = entries(previous)
    .filter((e) => e.expiresAt > now && !constantTimeEqual(mac(key, sub, e.nonce, e.expiresAt), e.mac))
    .map((e) => e.raw);
  return [fresh, ...others].slice(0, DEVICES_PER_COOKIE).join(SEPARATOR);
}
