// Codes, tokens, client secrets, session ids: 32 bytes from the CSPRNG, handed out encoded,
// stored only as a keyed hash (HMAC-SHA-256), so every lookup is one index probe and a leaked
// database holds nothing usable.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

/**
 * 32 random bytes in the URL-safe base64 alphabet with padding: 44 characters ending in `=`.
 * spec: "Authorization code — Length: 44 characters, ending in `=`"; access tokens are 44 characters too.
 */
export function newOpaqueToken(): string {
  return randomBytes(32).toString('base64url') + '=';
}

/** The keyed hash stored in place of a secret value. */
export function keyedHash(key: Buffer, value: string): string {
  return createHmac('sha256', key).update(value, 'utf8').digest('base64url');
}

/** Constant-time comparison of two strings (lengths are not secret: both sides are fixed-size hashes or encodings). */
export function constantTimeEqual(a: string, b: string): boolean {
  const left = Buffer.from(a, 'utf8');
  const right = Buffer.from(b, 'utf8');
  if (left.length !== right.length) {
    // Compare anyway so the time does not depend on where the strings differ.
    timingSafeEqual(left, left);
    return false;
  }
  return timingSafeEqual(left, right);
}

/** Checks a presented secret against a stored keyed hash, in constant time. */
export function matchesKeyedHash(key: Buffer, presented: string, storedHash: string): boolean {
  return constantTimeEqual(keyedHash(key, presented), storedHash);
}
