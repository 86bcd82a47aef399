// A person's API keys for the document APIs (issue 40): what docling-serve clients send as `X-Api-Key`,
// and what scripts use where a browser session is wrong. A key is "<id>.<secret>": the id ("sgk_" + 16
// hex characters, a recognisable prefix for secret scanners and for people) names it in lists and in
// the audit trail; the secret (32 random bytes) is shown once, at creation, and stored only as a keyed
// hash, compared in constant time. Keys are accepted only where the document APIs ask for them (the
// request hook in web/plugins/document-caller.ts): never at sign-in, /account, /oauth/* or the admin API.
import { randomBytes } from 'node:crypto';
import { DAY, MINUTE, type Clock } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import { keyedHash, matchesKeyedHash } from '../../oauth/secrets.ts';
import { countAndCheck, type RequestLimit } from '../request-limits.ts';
import * as store from './api-keys.store.ts';

export class ApiKeyError extends Error {
  readonly code: 'invalid_name' | 'invalid_expiry' | 'not_found' | 'too_many_keys';
  constructor(code: ApiKeyError['code'], message: string) {
    super(message);
    this.code = code;
    this.name = 'ApiKeyError';
  }
}

export type ApiKeyView = { id: string; name: string; created_at: string; expires_at: string | null; last_used_at: string | null; revoked_at: string | null };

export const API_KEY_PREFIX = 'sgk_';
const ID_PATTERN = /^sgk_[0-9a-f]{16}$/;
/** the secret half: 32 bytes, URL-safe base64 without padding */
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;
/** last_used_at is written at most this often per key (not on every request) */
const TOUCH_EVERY_MS = MINUTE;
/** the longest expiry a key may be given, in days (about ten years) */
export const MAX_EXPIRY_DAYS = 3650;
/** live keys a person may hold at once */
const MAX_LIVE_KEYS = 50;
/**
 * Requests one key may make: 600 a minute. A conversion client polling `/v1/status/poll` every second
 * for several documents at once stays well inside it; a runaway script does not.
 */
export const API_KEY_REQUESTS: RequestLimit = { max: 600, windowMs: MINUTE };

function toView(row: store.ApiKeyRow): ApiKeyView {
  const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());
  return { id: row.id, name: row.name, created_at: new Date(Number(row.created_at)).toISOString(), expires_at: iso(row.expires_at), last_used_at: iso(row.last_used_at), revoked_at: iso(row.revoked_at) };
}

/** Whether a key works now: not revoked and not expired (by the injected clock). */
export const isLive = (row: Pick<store.ApiKeyRow, 'revoked_at' | 'expires_at'>, now: number) => row.revoked_at === null && (row.expires_at === null || Number(row.expires_at) > now);

/** Creates a key for a person; the returned `key` is the only time it is shown. */
export async function createApiKey(
  db: Db,
  clock: Clock,
  hashKey: Buffer,
  input: { sub: string; name: string; expiresInDays?: number | undefined },
): Promise<{ id: string; key: string; name: string; expires_at: string | null }> {
  const name = input.name.trim();
  if (name.length === 0 || name.length > 100) throw new ApiKeyError('invalid_name', 'The key name must have 1 to 100 characters (say what uses it, e.g. "Open WebUI").');
  const days = input.expiresInDays;
  if (days !== undefined && (!Number.isInteger(days) || days < 1 || days > MAX_EXPIRY_DAYS)) {
    throw new ApiKeyError('invalid_expiry', `The expiry is a whole number of days from 1 to ${MAX_EXPIRY_DAYS}; leave it out for a key that does not expire.`);
  }
  const now = clock();
  const live = (await store.listKeysOf(db, input.sub)).filter((row) => isLive(row, now));
  if (live.length >= MAX_LIVE_KEYS) throw new ApiKeyError('too_many_keys', `You have ${MAX_LIVE_KEYS} API keys already. Revoke one you no longer use, then create the new one.`);
  const id = `${API_KEY_PREFIX}${randomBytes(8).toString('hex')}`;
  const secret = randomBytes(32).toString('base64url');
  const expiresAt = days === undefined ? null : now + days * DAY;
  await store.insertKey(db, { id, sub: input.sub, name, key_hash: keyedHash(hashKey, secret), created_at: now, expires_at: expiresAt, last_used_at: null, revoked_at: null });
  return { id, key: `${id}.${secret}`, name, expires_at: expiresAt === null ? null : new Date(expiresAt).toISOString() };
}

/** A person's keys, newest first (never the key itself). */
export async function listApiKeys(db: Db, sub: string): Promise<ApiKeyView[]> {
  return (await store.listKeysOf(db, sub)).map(toView);
}

/** One key by id, with its owner (for operators and audit). */
export async function findApiKey(db: Db, id: string): Promise<(ApiKeyView & { sub: string }) | undefined> {
  const row = ID_PATTERN.test(id) ? await store.findKey(db, id) : undefined;
  return row ? { ...toView(row), sub: row.sub } : undefined;
}

/**
 * Revokes a key at once (revoking it again changes nothing); it stays listed with revoked_at. With
 * `sub`, only that person's key: another person's key is "not found", as if it did not exist.
 */
export async function revokeApiKey(db: Db, clock: Clock, id: string, sub?: string): Promise<ApiKeyView & { sub: string }> {
  if (!ID_PATTERN.test(id) || !(await store.revokeKey(db, id, clock(), sub))) throw new ApiKeyError('not_found', `No API key with id ${id.slice(0, 40)}.`);
  const row = (await store.findKey(db, id))!;
  return { ...toView(row), sub: row.sub };
}

export type ApiKeyCheck = { ok: true; id: string; sub: string } | { ok: false; reason: 'invalid' } | { ok: false; reason: 'rate_limited'; retryAt: number };

/**
 * What a presented key is worth: its id and person when it is live (known, not revoked, not expired,
 * its person not disabled) and within its request limit. The secret is compared in constant time, and
 * as much HMAC work is done for an unknown id as for a real one.
 */
export async function verifyApiKey(db: Db, clock: Clock, hashKey: Buffer, presented: string): Promise<ApiKeyCheck> {
  const dot = presented.indexOf('.');
  const id = presented.slice(0, dot);
  const secret = presented.slice(dot + 1);
  const wellFormed = dot > 0 && ID_PATTERN.test(id) && SECRET_PATTERN.test(secret);
  const row = wellFormed ? await store.findKeyWithPerson(db, id) : undefined;
  const storedHash = row?.key_hash ?? keyedHash(hashKey, 'no-such-api-key');
  const matches = matchesKeyedHash(hashKey, wellFormed ? secret : presented, storedHash);
  const now = clock();
  if (!row || !matches || !isLive(row, now) || row.disabled === 1) return { ok: false, reason: 'invalid' };
  const limit = await countAndCheck(db, clock, `api-key:${id}`, API_KEY_REQUESTS);
  if (!limit.allowed) return { ok: false, reason: 'rate_limited', retryAt: limit.retryAt };
  await store.touchKey(db, id, now, now - TOUCH_EVERY_MS);
  return { ok: true, id, sub: row.sub };
}
