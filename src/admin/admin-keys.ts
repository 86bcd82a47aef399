// Operator keys for the admin API. A key is "<id>.<secret>": the id ("ak_" + 16 hex characters, safe
// on a command line) names it in lists and in the audit trail; the secret (32 random bytes) is shown
// once, at creation, and stored only as a keyed hash, compared in constant time.
import { randomBytes } from 'node:crypto';
import { MINUTE, type Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { keyedHash, matchesKeyedHash } from '../oauth/secrets.ts';
import * as store from './admin-keys.store.ts';

export class AdminKeyError extends Error {
  readonly code: 'invalid_name' | 'not_found';
  constructor(code: AdminKeyError['code'], message: string) {
    super(message);
    this.code = code;
    this.name = 'AdminKeyError';
  }
}

export type AdminKeyView = { id: string; name: string; created_at: string; last_used_at: string | null; revoked_at: string | null };

const ID_PATTERN = /^ak_[0-9a-f]{16}$/;
/** the secret half: 32 bytes, URL-safe base64 without padding */
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** last_used_at is written at most this often per key (not on every request) */
const TOUCH_EVERY_MS = MINUTE;

function toView(row: store.AdminKeyRow): AdminKeyView {
  const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
  return { id: row.id, name: row.name, created_at: new Date(Number(row.created_at)).toISOString(), last_used_at: iso(row.last_used_at), revoked_at: iso(row.revoked_at) };
}

/** Creates a key; the returned `key` is the only time it is shown. */
export async function createAdminKey(db: Db, clock: Clock, hashKey: Buffer, name: string): Promise<{ id: string; key: string }> {
  const trimmed = name.trim();
  if (trimmed.length === 0 || trimmed.length > 100) throw new AdminKeyError('invalid_name', 'the key name must have 1 to 100 characters (say who or what uses it)');
  const id = `ak_${randomBytes(8).toString('hex')}`;
  const secret = randomBytes(32).toString('base64url');
  await store.insertKey(db, { id, name: trimmed, key_hash: keyedHash(hashKey, secret), created_at: clock(), last_used_at: null, revoked_at: null });
  return { id, key: `${id}.${secret}` };
}

export async function listAdminKeys(db: Db): Promise<AdminKeyView[]> {
  return (await store.listKeys(db)).map(toView);
}

/** Revokes a key at once (revoking it again changes nothing). The key stays listed, with revoked_at. */
export async function revokeAdminKey(db: Db, clock: Clock, id: string): Promise<AdminKeyView> {
  if (!(await store.revokeKey(db, id, clock()))) throw new AdminKeyError('not_found', `no admin key with id ${id}; \`signet admin-key list\` shows them`);
  return toView((await store.findKey(db, id))!);
}

/**
 * The id of the live key a presented value is, or undefined. The secret is compared in constant
 * time, and as much HMAC work is done for an unknown or revoked id as for a real one.
 */
export async function verifyAdminKey(db: Db, clock: Clock, hashKey: Buffer, presented: string): Promise<string | undefined> {
  const dot = presented.indexOf('.');
  const id = presented.slice(0, dot);
  const secret = presented.slice(dot + 1);
  const wellFormed = dot > 0 && ID_PATTERN.test(id) && SECRET_PATTERN.test(secret);
  const row = wellFormed ? await store.findKey(db, id) : undefined;
  const storedHash = row?.key_hash ?? keyedHash(hashKey, 'no-such-admin-key');
  const matches = matchesKeyedHash(hashKey, wellFormed ? secret : presented, storedHash);
  if (!row || !matches || row.revoked_at !== null) return undefined;
  const now = clock();
  if (row.last_used_at === null || now - Number(row.last_used_at) >= TOUCH_EVERY_MS) await store.touchKey(db, id, now);
  return id;
}
