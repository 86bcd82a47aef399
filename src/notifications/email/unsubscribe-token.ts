// One-click unsubscribe tokens (RFC 8058): `base64url(payload).base64url(HMAC-SHA-256(key, payload))`
// with payload {sub, category, purpose: 'unsubscribe'}. The key is its own HKDF subkey (keys.ts), and
// the payload names its purpose, so no other signed value of Signet can pass for one. A token stays
// good as long as the key: an unsubscribe link in an old e-mail should still work.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { isCategory, type Category } from '../categories.ts';

export type UnsubscribeClaim = { sub: string; category: Category };

const PURPOSE = 'unsubscribe';
/** Far above a real token (a UUID sub and a category make about 130 characters); anything longer is refused unread. */
const MAX_TOKEN_LENGTH = 512;
const BASE64URL = /^[A-Za-z0-9_-]+$/;

function mac(key: Buffer, encodedPayload: string): Buffer {
  return createHmac('sha256', key).update(encodedPayload, 'utf8').digest();
}

export function createUnsubscribeToken(key: Buffer, claim: UnsubscribeClaim): string {
  const payload = Buffer.from(JSON.stringify({ sub: claim.sub, category: claim.category, purpose: PURPOSE }), 'utf8').toString('base64url');
  return `${payload}.${mac(key, payload).toString('base64url')}`;
}

/** The claim of a genuine token; undefined for anything forged, altered, truncated or of another purpose. */
export function verifyUnsubscribeToken(key: Buffer, token: string): UnsubscribeClaim | undefined {
  if (token.length > MAX_TOKEN_LENGTH) return undefined;
  const [payload, signature, extra] = token.split('.');
  if (payload === undefined || signature === undefined || extra !== undefined) return undefined;
  if (!BASE64URL.test(payload) || !BASE64URL.test(signature)) return undefined;
  // Compared as text, not as decoded bytes: base64url has several spellings of the same last byte, and
  // an altered character must never pass. Lengths are public (an HMAC-SHA-256 is always 43 characters);
  // equal lengths are compared in constant time.
  const expected = Buffer.from(mac(key, payload).toString('base64url'), 'utf8');
  const presented = Buffer.from(signature, 'utf8');
  if (presented.length !== expected.length || !timingSafeEqual(presented, expected)) return undefined;
  // Only a payload we signed gets this far, but it is read as untrusted input all the same.
  let claim: unknown;
  try {
    claim = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8'));
  } catch {
    return undefined;
  }
  if (typeof claim !== 'object' || claim === null) return undefined;
  const { sub, category, purpose } = claim as Record<string, unknown>;
  if (purpose !== PURPOSE || typeof sub !== 'string' || sub === '' || !isCategory(category)) return undefined;
  return { sub, category };
}
