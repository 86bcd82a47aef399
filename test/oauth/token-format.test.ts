// Issue 20: tokens that name their chain and generation under a MAC (src/oauth/token-format.ts).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { newOpaqueToken } from '../../src/oauth/secrets.ts';
import { decodeAccessToken, decodeCode, decodeRefreshToken, encodeAccessToken, encodeCode, encodeRefreshToken, isChainId, newChainId } from '../../src/oauth/token-format.ts';

const KEY = randomBytes(32);
const OTHER_KEY = randomBytes(32);

test('spec "Authorization code — Length: 44 characters, ending in `=`" and "Access token — Form: opaque string, 44 characters": every kind, as it is decoded again', () => {
  for (let i = 0; i < 200; i++) {
    const chainId = newChainId();
    assert.ok(isChainId(chainId));
    const code = encodeCode(KEY, chainId);
    const access = encodeAccessToken(KEY, { chainId, generation: i + 1, issuedOffset: i * 1000, scope: 'openid profile email' });
    const refresh = encodeRefreshToken(KEY, { chainId, generation: i + 1 });
    for (const value of [code, access, refresh]) assert.match(value, /^[A-Za-z0-9_-]{43}=$/);
    assert.equal(decodeCode(KEY, code), chainId);
    assert.deepEqual(decodeAccessToken(KEY, access), { chainId, generation: i + 1, issuedOffset: i * 1000, scope: 'openid profile email' });
    assert.deepEqual(decodeRefreshToken(KEY, refresh), { chainId, generation: i + 1 });
  }
});

test('"nobody without the server\'s key can make a token, or change a field of one": every flipped bit, another key, a random value, another kind → not a token', () => {
  const chainId = newChainId();
  const refresh = encodeRefreshToken(KEY, { chainId, generation: 7 });
  const bytes = Buffer.from(refresh.slice(0, 43), 'base64url');
  for (let bit = 0; bit < bytes.length * 8; bit++) {
    const changed = Buffer.from(bytes);
    changed[bit >> 3]! ^= 1 << (bit & 7);
    assert.equal(decodeRefreshToken(KEY, changed.toString('base64url') + '='), undefined, `bit ${bit}`);
  }
  assert.equal(decodeRefreshToken(OTHER_KEY, refresh), undefined, 'another key');
  for (let i = 0; i < 1000; i++) assert.equal(decodeRefreshToken(KEY, newOpaqueToken()), undefined, 'a random value (a token of the earlier format)');
  const access = encodeAccessToken(KEY, { chainId, generation: 7, issuedOffset: 0, scope: 'openid' });
  const code = encodeCode(KEY, chainId);
  assert.equal(decodeRefreshToken(KEY, access), undefined, 'an access token is no refresh token');
  assert.equal(decodeAccessToken(KEY, refresh), undefined, 'a refresh token is no access token');
  assert.equal(decodeRefreshToken(KEY, code), undefined, 'a code is no refresh token');
  assert.equal(decodeCode(KEY, refresh), undefined, 'a refresh token is no code');
  for (const bad of ['', refresh.slice(0, 43), `${refresh.slice(0, 43)}A`, `${refresh}=`, refresh.replace(/.$/, '-')]) assert.equal(decodeRefreshToken(KEY, bad), undefined, JSON.stringify(bad));
});

test('the fields are hidden as well as signed: the tokens of one chain share nothing visible, and no issue time can be read off them', () => {
  const chainId = newChainId();
  const values = [
    encodeCode(KEY, chainId),
    ...[1, 2, 3].flatMap((generation) => [encodeAccessToken(KEY, { chainId, generation, issuedOffset: 0, scope: 'openid' }), encodeRefreshToken(KEY, { chainId, generation })]),
  ];
  assert.equal(new Set(values.map((v) => v.slice(0, 4))).size, values.length, 'no common prefix');
  for (const value of values) assert.ok(!value.includes(chainId.slice(0, 8)), 'the chain id does not show');
});
