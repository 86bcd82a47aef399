// The id_token signing keys (issue 28 item 3): one current key per algorithm (ES256, RS256), generated
// at first start and kept in the database so every node signs with the same keys. The private half is
// stored only sealed (AES-256-GCM under keys.signingKey, derived from SIGNET_SECRET). A rotation makes a
// new key sign at once; the old one stays in the JWKS until the longest id_token it signed has expired
// (ID_TOKEN_LIFETIME_SECONDS), then `signet keys retire` or the housekeeping sweep removes it.
import { createPrivateKey, createPublicKey, generateKeyPairSync, randomBytes, type JsonWebKey, type KeyObject } from 'node:crypto';
import { SECOND, type Clock } from '../../config/clock.ts';
import { seal, unseal } from '../../config/sealing.ts';
import type { Db } from '../../db/database.ts';
import * as store from './keys.store.ts';

export const SIGNING_ALGS = ['ES256', 'RS256'] as const;
export type SigningAlg = (typeof SIGNING_ALGS)[number];

export function isSigningAlg(value: unknown): value is SigningAlg {
  return value === 'ES256' || value === 'RS256';
}

/** How long an id_token is valid: the longest a key must stay in the JWKS after it stopped signing. */
export const ID_TOKEN_LIFETIME_SECONDS = 3600;
export const ID_TOKEN_LIFETIME_MS = ID_TOKEN_LIFETIME_SECONDS * SECOND;

export type PublicJwk = JsonWebKey & { kid: string; alg: SigningAlg; use: 'sig' };

/** A key as `signet keys list` shows it (never the private half). */
export type SigningKeyView = { kid: string; alg: string; created_at: string; signing: boolean; rotated_at: string | null; removable_after: string | null };

export class SigningKeyError extends Error {
  readonly code: 'not_found' | 'still_signing' | 'still_needed';
  constructor(code: SigningKeyError['code'], message: string) {
    super(message);
    this.code = code;
    this.name = 'SigningKeyError';
  }
}

/** The label a private key is sealed under: its kid, so a sealed key moved to another row does not open. */
const sealLabel = (kid: string) => `signing-key\n${kid}`;

/** A new key pair of `alg` as a row: the public JWK, and the PKCS#8 private key sealed under `sealKey`. */
export function newSigningKey(sealKey: Buffer, alg: SigningAlg, now: number): store.SigningKeyRow {
  const kid = randomBytes(16).toString('base64url');
  const { publicKey, privateKey } = alg === 'ES256' ? generateKeyPairSync('ec', { namedCurve: 'P-256' }) : generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk: PublicJwk = { ...publicKey.export({ format: 'jwk' }), kid, alg, use: 'sig' };
  const der = privateKey.export({ format: 'der', type: 'pkcs8' });
  return { kid, alg, public_jwk: JSON.stringify(jwk), private_key_enc: seal(sealKey, sealLabel(kid), der), created_at: now, rotated_at: null };
}

/** Decrypted private keys by kid (a key never changes under its kid). */
const privateKeys = new Map<string, KeyObject>();

function privateKeyOf(sealKey: Buffer, row: store.SigningKeyRow): KeyObject {
  let key = privateKeys.get(row.kid);
  if (!key) {
    key = createPrivateKey({ key: unseal(sealKey, sealLabel(row.kid), row.private_key_enc), format: 'der', type: 'pkcs8' });
    if (privateKeys.size > 100) privateKeys.clear();
    privateKeys.set(row.kid, key);
  }
  return key;
}

/** Whether a row's key is in the JWKS: every stored key is (retired keys are deleted). */
export function publicJwkOf(row: store.SigningKeyRow): PublicJwk {
  return JSON.parse(row.public_jwk) as PublicJwk;
}

/**
 * At start (and before the first signature): a current key of every algorithm, generated when there is
 * none. Two nodes starting at once may each make one; both are then in the JWKS and the newest signs.
 */
export async function ensureSigningKeys(db: Db, sealKey: Buffer, clock: Clock): Promise<string[]> {
  const made: string[] = [];
  for (const alg of SIGNING_ALGS) {
    if (await store.findCurrentKey(db, alg)) continue;
    const row = newSigningKey(sealKey, alg, clock());
    await store.insertKey(db, row);
    made.push(row.kid);
  }
  return made;
}

/** The key that signs for `alg` now, made if there is none yet (a database created before this start). */
export async function currentSigningKey(db: Db, sealKey: Buffer, clock: Clock, alg: SigningAlg): Promise<{ kid: string; alg: SigningAlg; key: KeyObject }> {
  let row = await store.findCurrentKey(db, alg);
  if (!row) {
    await ensureSigningKeys(db, sealKey, clock);
    row = await store.findCurrentKey(db, alg);
    if (!row) throw new Error(`no ${alg} signing key could be made`);
  }
  return { kid: row.kid, alg, key: privateKeyOf(sealKey, row) };
}

/** The public key of `kid` (to check an id_token_hint), or undefined when no such key is kept. */
export async function publicKeyOf(db: Db, kid: string): Promise<{ alg: SigningAlg; key: KeyObject } | undefined> {
  if (kid.length === 0 || kid.length > 100) return undefined;
  const row = await store.findKey(db, kid);
  if (!row || !isSigningAlg(row.alg)) return undefined;
  return { alg: row.alg, key: createPublicKey({ key: publicJwkOf(row), format: 'jwk' }) };
}

/** GET /oauth/jwks: every kept key's public half. */
export async function jwks(db: Db): Promise<{ keys: PublicJwk[] }> {
  return { keys: (await store.listKeys(db)).map(publicJwkOf) };
}

function view(row: store.SigningKeyRow): SigningKeyView {
  return {
    kid: row.kid,
    alg: row.alg,
    created_at: new Date(row.created_at).toISOString(),
    signing: row.rotated_at === null,
    rotated_at: row.rotated_at === null ? null : new Date(row.rotated_at).toISOString(),
    removable_after: row.rotated_at === null ? null : new Date(row.rotated_at + ID_TOKEN_LIFETIME_MS).toISOString(),
  };
}

export async function listSigningKeys(db: Db): Promise<SigningKeyView[]> {
  return (await store.listKeys(db)).map(view);
}

/**
 * `signet keys rotate`: a new key for each algorithm (or the one named) signs at once; the keys it
 * replaces stop signing and stay in the JWKS until what they signed has expired.
 */
export async function rotateSigningKeys(db: Db, sealKey: Buffer, clock: Clock, algs: readonly SigningAlg[] = SIGNING_ALGS): Promise<SigningKeyView[]> {
  const made: SigningKeyView[] = [];
  for (const alg of algs) {
    const row = newSigningKey(sealKey, alg, clock());
    await store.insertKey(db, row);
    await store.markRotated(db, alg, row.kid, clock());
    made.push(view(row));
  }
  return made;
}

/**
 * `signet keys retire KID`: removes a rotated-out key from the JWKS — refused while it signs, and
 * until the longest id_token it signed has expired (a relying party could still be checking one).
 */
export async function retireSigningKey(db: Db, clock: Clock, kid: string): Promise<void> {
  const row = await store.findKey(db, kid);
  if (!row) throw new SigningKeyError('not_found', `no signing key with kid ${kid} (see signet keys list)`);
  if (row.rotated_at === null) throw new SigningKeyError('still_signing', `key ${kid} still signs id_tokens: run signet keys rotate first`);
  const removableAt = row.rotated_at + ID_TOKEN_LIFETIME_MS;
  if (clock() < removableAt) {
    throw new SigningKeyError('still_needed', `key ${kid} may still verify id_tokens it signed until ${new Date(removableAt).toISOString()}; retire it after that (the housekeeping sweep also does)`);
  }
  if (!(await store.deleteRotatedKey(db, kid))) throw new SigningKeyError('not_found', `no rotated-out signing key with kid ${kid}`);
}

/** The sweep: removes every rotated-out key whose id_tokens have all expired. Returns their kids. */
export async function forgetRetiredSigningKeys(db: Db, clock: Clock): Promise<string[]> {
  return store.deleteKeysRotatedBefore(db, clock() - ID_TOKEN_LIFETIME_MS);
}
