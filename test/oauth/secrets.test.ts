// Keyed hashes at rest: HMAC-SHA-256 under the server's key, the same value whether the key object is
// made anew or taken from the per-key cache.
import assert from 'node:assert/strict';
import { createHmac, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { keyedHash, matchesKeyedHash, newOpaqueToken } from '../../src/oauth/secrets.ts';

test('keyedHash is HMAC-SHA-256 of the value under the key, base64url — on the first call with a key and on every later one', () => {
  const keys = [randomBytes(32), randomBytes(32)];
  const value = newOpaqueToken();
  for (let round = 0; round < 3; round++) {
    for (const key of keys) assert.equal(keyedHash(key, value), createHmac('sha256', key).update(value, 'utf8').digest('base64url'));
  }
  assert.notEqual(keyedHash(keys[0]!, value), keyedHash(keys[1]!, value), 'each key its own hash');
  assert.equal(keyedHash(Buffer.from(keys[0]!), value), keyedHash(keys[0]!, value), 'an equal key in another Buffer gives the same hash');
  assert.ok(matchesKeyedHash(keys[0]!, value, keyedHash(keys[0]!, value)));
  assert.ok(!matchesKeyedHash(keys[1]!, value, keyedHash(keys[0]!, value)));
});
