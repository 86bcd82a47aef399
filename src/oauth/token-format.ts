// Access and refresh tokens that name their refresh chain (issue 20, "one row per refresh chain").
//
// A token is 32 bytes handed out as 44 characters (URL-safe base64 with its `=`, as every other
// opaque value here; spec "Access token — Form: opaque string, 44 characters"):
//
//   code           chain id (10) · MAC (22)  — the chain's first state (spec: 44 characters, ending in `=`)
//   refresh token  chain id (10) · generation (4) · MAC (18)
//   access token   chain id (10) · generation (4) · issued, ms after the chain began (4) · scope bits (1) · MAC (13)
//
// The MAC is HMAC-SHA-256 under a key derived from the token-hash key, over a kind label and the
// fields, cut to its length: nobody without the server's key can make a token, or change a field of
// one, so the fields can be trusted once the MAC checks — and looking a token up is a primary-key
// read of its chain. The chain row holds the current generation: a refresh token of that generation
// is the live one, one of an older generation was rotated (the spec's replay). Each issuance (the
// code's, every rotation) has its own generation, so (chain, generation) names one access token —
// the key of the small deny list that revoking a single access token writes to.
//
// The fields are hidden as well as signed (a synthetic-IV construction): they are XORed with a key
// stream made from the MAC under a second derived key, so tokens look uniformly random — the access
// and refresh tokens of one chain share nothing visible, and no issue time can be read off them.
//
// Nothing stored reveals a usable token: the chain row has no MAC, and the key never leaves the
// process. Tokens from before this format (random values stored as keyed hashes) fail the MAC check
// and are looked up as before, until their chains end.
import { createHmac, createSecretKey, hash, hkdfSync, randomBytes, timingSafeEqual, type KeyObject } from 'node:crypto';
import { KNOWN_SCOPES, scopeList } from './scopes.ts';

const CHAIN_ID_BYTES = 10;
const TOKEN_BYTES = 32;
const CODE_MAC_BYTES = TOKEN_BYTES - CHAIN_ID_BYTES;
const REFRESH_MAC_BYTES = TOKEN_BYTES - CHAIN_ID_BYTES - 4;
const ACCESS_MAC_BYTES = TOKEN_BYTES - CHAIN_ID_BYTES - 4 - 4 - 1;
/** Generations are unsigned 32-bit: a chain rotated every second for its 30 days uses 2.6 million. */
export const MAX_GENERATION = 0xffff_ffff;

export type RefreshTokenFields = { chainId: string; generation: number };
/** `issuedOffset`: milliseconds from the chain's `created_at` to the token's issue (a chain lives 30 days, 32 bits hold 49). */
export type AccessTokenFields = { chainId: string; generation: number; issuedOffset: number; scope: string };

/** A new chain id: 10 random bytes as URL-safe base64 (14 characters). */
export function newChainId(): string {
  return randomBytes(CHAIN_ID_BYTES).toString('base64url');
}

/** Whether a stored chain id is of this format (chains started before it carry a UUID). */
export function isChainId(value: string): boolean {
  return value.length === 14 && Buffer.from(value, 'base64url').toString('base64url') === value;
}

// The keys are derived once per token-hash key (the Buffer from config/keys.ts, never written to).
const derivedKeys = new WeakMap<Buffer, { mac: KeyObject; mask: KeyObject }>();
function keysOf(hashKey: Buffer): { mac: KeyObject; mask: KeyObject } {
  let keys = derivedKeys.get(hashKey);
  if (keys === undefined) {
    const derive = (purpose: string) => createSecretKey(Buffer.from(hkdfSync('sha256', hashKey, 'signet', purpose, 32)));
    keys = { mac: derive('token chain MAC v1'), mask: derive('token chain mask v1') };
    derivedKeys.set(hashKey, keys);
  }
  return keys;
}

const LABEL = { code: Buffer.from('signet authorization code v1\0'), access: Buffer.from('signet access token v1\0'), refresh: Buffer.from('signet refresh token v1\0') };
type Kind = keyof typeof LABEL;

function mac(hashKey: Buffer, kind: Kind, fields: Buffer, length: number): Buffer {
  return createHmac('sha256', keysOf(hashKey).mac).update(LABEL[kind]).update(fields).digest().subarray(0, length);
}

/** XORs `body` in place with the key stream of this MAC (the same call hides and reveals). */
function mask(hashKey: Buffer, tag: Buffer, body: Buffer): Buffer {
  const stream = createHmac('sha256', keysOf(hashKey).mask).update(tag).digest();
  for (let i = 0; i < body.length; i++) body[i]! ^= stream[i]!;
  return body;
}

function encode(bytes: Buffer): string {
  return bytes.toString('base64url') + '=';
}

/** The 32 bytes of a presented value, if it has this format's shape (44 characters, canonical, ending in `=`). */
function decode(presented: string): Buffer | undefined {
  if (presented.length !== 44 || presented.charCodeAt(43) !== 0x3d) return undefined;
  const body = presented.slice(0, 43);
  const bytes = Buffer.from(body, 'base64url');
  if (bytes.length !== TOKEN_BYTES || bytes.toString('base64url') !== body) return undefined;
  return bytes;
}

function chainIdBytes(chainId: string): Buffer {
  const bytes = Buffer.from(chainId, 'base64url');
  if (bytes.length !== CHAIN_ID_BYTES) throw new Error('not a chain id of this format');
  return bytes;
}

function checkGeneration(generation: number): void {
  if (!Number.isInteger(generation) || generation < 1 || generation > MAX_GENERATION) throw new RangeError('generation out of range');
}

/** The scopes as bits, in the spec's order (four known scopes, one byte). */
function scopeBits(scope: string): number {
  let bits = 0;
  for (const s of scopeList(scope)) bits |= 1 << KNOWN_SCOPES.indexOf(s);
  return bits;
}

function scopeFromBits(bits: number): string | undefined {
  if (bits >> KNOWN_SCOPES.length !== 0) return undefined;
  return KNOWN_SCOPES.filter((_, i) => (bits & (1 << i)) !== 0).join(' ');
}

/** An authorization code naming its chain (the chain row holds what redeeming it checks). */
export function encodeCode(hashKey: Buffer, chainId: string): string {
  const body = Buffer.from(chainIdBytes(chainId));
  const tag = mac(hashKey, 'code', body, CODE_MAC_BYTES);
  return encode(Buffer.concat([mask(hashKey, tag, body), tag]));
}

/** The chain id of a code of this format whose MAC checks; undefined for anything else (a code from before migration 0010 among them). */
export function decodeCode(hashKey: Buffer, presented: string): string | undefined {
  const bytes = decode(presented);
  const body = bytes && verified(hashKey, 'code', bytes, CODE_MAC_BYTES);
  return body?.toString('base64url');
}

export function encodeRefreshToken(hashKey: Buffer, fields: RefreshTokenFields): string {
  checkGeneration(fields.generation);
  const body = Buffer.alloc(CHAIN_ID_BYTES + 4);
  chainIdBytes(fields.chainId).copy(body, 0);
  body.writeUInt32BE(fields.generation, CHAIN_ID_BYTES);
  const tag = mac(hashKey, 'refresh', body, REFRESH_MAC_BYTES);
  return encode(Buffer.concat([mask(hashKey, tag, body), tag]));
}

export function encodeAccessToken(hashKey: Buffer, fields: AccessTokenFields): string {
  checkGeneration(fields.generation);
  const body = Buffer.alloc(CHAIN_ID_BYTES + 9);
  chainIdBytes(fields.chainId).copy(body, 0);
  body.writeUInt32BE(fields.generation, CHAIN_ID_BYTES);
  if (!Number.isInteger(fields.issuedOffset) || fields.issuedOffset < 0 || fields.issuedOffset > 0xffff_ffff) throw new RangeError('issue time out of the chain\'s range');
  body.writeUInt32BE(fields.issuedOffset, CHAIN_ID_BYTES + 4);
  body.writeUInt8(scopeBits(fields.scope), CHAIN_ID_BYTES + 8);
  const tag = mac(hashKey, 'access', body, ACCESS_MAC_BYTES);
  return encode(Buffer.concat([mask(hashKey, tag, body), tag]));
}

/** The revealed fields of a token whose MAC checks (compared in constant time); undefined otherwise. */
function verified(hashKey: Buffer, kind: Kind, bytes: Buffer, macLength: number): Buffer | undefined {
  const tag = bytes.subarray(TOKEN_BYTES - macLength);
  const body = mask(hashKey, tag, bytes.subarray(0, TOKEN_BYTES - macLength));
  return timingSafeEqual(mac(hashKey, kind, body, macLength), tag) ? body : undefined;
}

/** The fields of a refresh token of this format whose MAC checks; undefined for anything else. */
export function decodeRefreshToken(hashKey: Buffer, presented: string): RefreshTokenFields | undefined {
  const bytes = decode(presented);
  const body = bytes && verified(hashKey, 'refresh', bytes, REFRESH_MAC_BYTES);
  if (!body) return undefined;
  const generation = body.readUInt32BE(CHAIN_ID_BYTES);
  if (generation < 1) return undefined;
  return { chainId: body.subarray(0, CHAIN_ID_BYTES).toString('base64url'), generation };
}

/** The fields of an access token of this format whose MAC checks; undefined for anything else. */
export function decodeAccessToken(hashKey: Buffer, presented: string): AccessTokenFields | undefined {
  const bytes = decode(presented);
  const body = bytes && verified(hashKey, 'access', bytes, ACCESS_MAC_BYTES);
  if (!body) return undefined;
  const generation = body.readUInt32BE(CHAIN_ID_BYTES);
  const scope = scopeFromBits(body.readUInt8(CHAIN_ID_BYTES + 8));
  if (generation < 1 || scope === undefined) return undefined;
  return { chainId: body.subarray(0, CHAIN_ID_BYTES).toString('base64url'), generation, issuedOffset: body.readUInt32BE(CHAIN_ID_BYTES + 4), scope };
}

/**
 * Access tokens whose MAC has checked, so a token presented again (userinfo, /mcp and the document APIs
 * see the same bearer value on every call) costs one SHA-256 instead of the two HMACs of its MAC and
 * mask: about 0.4 µs instead of 8–13. What a token says never changes once its MAC checks (its fields
 * are signed, the key lives as long as the process), so nothing here can go stale; whether the token
 * is still *live* is the database's to say on every request (verifyAccessToken). Keyed by the SHA-256
 * of the presented value, not the value: no bearer token is kept in memory. A value whose MAC fails is
 * not remembered (random values cannot push the real ones out), and the map holds at most
 * VERIFIED_ACCESS_TOKENS_MAX entries, the oldest going first (~0.6 MB full).
 */
const VERIFIED_ACCESS_TOKENS_MAX = 4096;
const verifiedAccessTokens = new WeakMap<Buffer, Map<string, VerifiedAccessTokenFields>>();

/** An access token's fields with its deny-list key (accessTokenId), made once with them. */
export type VerifiedAccessTokenFields = Readonly<AccessTokenFields & { id: string }>;

/** decodeAccessToken, remembered per token-hash key (see VERIFIED_ACCESS_TOKENS_MAX). */
export function decodeAccessTokenOnce(hashKey: Buffer, presented: string): VerifiedAccessTokenFields | undefined {
  if (presented.length !== 44) return undefined;
  let verified = verifiedAccessTokens.get(hashKey);
  if (verified === undefined) verifiedAccessTokens.set(hashKey, (verified = new Map()));
  const key = hash('sha256', presented, 'base64');
  const known = verified.get(key);
  if (known !== undefined) return known;
  const fields = decodeAccessToken(hashKey, presented);
  if (fields === undefined) return undefined;
  if (verified.size >= VERIFIED_ACCESS_TOKENS_MAX) verified.delete(verified.keys().next().value!);
  const frozen = Object.freeze({ ...fields, id: accessTokenId(fields) });
  verified.set(key, frozen);
  return frozen;
}

/** The deny-list key of one access token: its chain and generation (no bearer value; useless without the MAC). */
export function accessTokenId(fields: Pick<AccessTokenFields, 'chainId' | 'generation'>): string {
  return `${fields.chainId}.${fields.generation}`;
}
