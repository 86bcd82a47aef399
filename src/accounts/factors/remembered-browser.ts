// "Remember this browser for 30 days" at the second step (issue 19 item 4: "A device cookie does not skip
// the second step unless the person ticked Remember this browser for 30 days on it"). A cookie of its
// own, apart from the device cookie (which only eases password throttling): entries of a nonce and an
// expiry, MACed under keys.rememberedBrowser together with the account's sub and the ids of the factors
// it had then — so the entry is good for that account only, and removing or resetting the factors
// (an operator's reset, turning the app off) makes every remembered browser ask again.
import { randomBytes } from 'node:crypto';
import { DAY } from '../../config/clock.ts';
import { constantTimeEqual, keyedHash } from '../../oauth/secrets.ts';

export const REMEMBERED_BROWSER_COOKIE = 'signet_remembered';
export const REMEMBER_BROWSER_MS = 30 * DAY;
/** A shared browser remembers this many accounts at most; the least recent is dropped. */
const ENTRIES_PER_COOKIE = 5;
const ENTRY = /^([A-Za-z0-9_-]{22})\.([0-9a-z]{1,12})\.([A-Za-z0-9_-]{43})$/;

function mac(key: Buffer, sub: string, factorIds: readonly string[], nonce: string, expiresAt: number): string {
  return keyedHash(key, `remember\n${sub}\n${[...factorIds].sort().join(',')}\n${nonce}\n${expiresAt}`);
}

function entries(cookie: unknown): Array<{ nonce: string; expiresAt: number; mac: string; raw: string }> {
  if (typeof cookie !== 'string' || cookie.length > ENTRIES_PER_COOKIE * 100) return [];
  return cookie
    .split('~')
    .slice(0, ENTRIES_PER_COOKIE)
    .flatMap((raw) => {
      const match = ENTRY.exec(raw);
      return match ? [{ nonce: match[1]!, expiresAt: parseInt(match[2]!, 36), mac: match[3]!, raw }] : [];
    });
}

/** Whether this cookie remembers this browser for `sub` with these factors, unexpired. Every entry's MAC is computed. */
export function isRememberedBrowser(key: Buffer, sub: string, factorIds: readonly string[], cookie: unknown, now: number): boolean {
  let found = false;
  for (const entry of entries(cookie)) {
    if (constantTimeEqual(mac(key, sub, factorIds, entry.nonce, entry.expiresAt), entry.mac) && entry.expiresAt > now) found = true;
  }
  return found;
}

/** The cookie after the person ticked "Remember this browser": a fresh entry for `sub` first, other accounts' live entries kept. */
export function rememberBrowser(key: Buffer, sub: string, factorIds: readonly string[], previous: unknown, now: number): string {
  const nonce = randomBytes(16).toString('base64url');
  const expiresAt = now + REMEMBER_BROWSER_MS;
  const fresh = `${nonce}.${expiresAt.toString(36)}.${mac(key, sub, factorIds, nonce, expiresAt)}`;
  const others = entries(previous)
    .filter((e) => e.expiresAt > now && !constantTimeEqual(mac(key, sub, factorIds, e.nonce, e.expiresAt), e.mac))
    .map((e) => e.raw);
  return [fresh, ...others].slice(0, ENTRIES_PER_COOKIE).join('~');
}
