// Single-use links for resetting a password and verifying an e-mail address. spec (issue): "reset and
// verification tokens are 32 random bytes, stored only as keyed hashes, single use, reset valid 30
// minutes". The link carries the 43-character base64url encoding; the database holds its HMAC under a
// key derived for nothing else (Keys.accountToken), so a leaked table opens no account.
import { randomBytes } from 'node:crypto';
import { DAY, HOUR, MINUTE, type Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { keyedHash } from '../oauth/secrets.ts';
import * as store from './account-tokens.store.ts';

export type TokenPurpose = 'password_reset' | 'email_verification';

/** How long a link works after it was asked for. */
export const TOKEN_LIFETIME_MS: Record<TokenPurpose, number> = {
  password_reset: 30 * MINUTE,
  email_verification: 24 * HOUR,
};

const TOKEN_SHAPE = /^[A-Za-z0-9_-]{43}$/;

function hashOf(key: Buffer, token: string): string {
  return keyedHash(key, token);
}

/** Mints a link token for `sub` and `email`; returns it (the only time it exists outside the e-mail). */
export async function issueAccountToken(db: Db, key: Buffer, input: { purpose: TokenPurpose; sub: string; email: string; now: number; expiresAt: number }): Promise<string> {
  const token = randomBytes(32).toString('base64url');
  await store.insertToken(db, { token_hash: hashOf(key, token), purpose: input.purpose, sub: input.sub, email: input.email, created_at: input.now, expires_at: input.expiresAt, used_at: null });
  return token;
}

export type TokenHolder = { sub: string; email: string };

/** Whom an unused, unexpired token belongs to, without using it (the reset page shows its form only then). */
export async function peekAccountToken(db: Db, key: Buffer, purpose: TokenPurpose, token: string, now: number): Promise<TokenHolder | undefined> {
  if (!TOKEN_SHAPE.test(token)) return undefined;
  const row = await store.findUsableToken(db, hashOf(key, token), purpose, now);
  return row && { sub: row.sub, email: row.email };
}

/** Uses the token up (single use): its holder, or undefined when it is unknown, used or expired. */
export async function useAccountToken(db: Db, key: Buffer, purpose: TokenPurpose, token: string, now: number): Promise<TokenHolder | undefined> {
  if (!TOKEN_SHAPE.test(token)) return undefined;
  const row = await store.useToken(db, hashOf(key, token), purpose, now);
  return row && { sub: row.sub, email: row.email };
}

/** A token that was used already (not merely unknown or expired): its holder, for a kinder message. */
export async function usedAccountToken(db: Db, key: Buffer, purpose: TokenPurpose, token: string): Promise<TokenHolder | undefined> {
  if (!TOKEN_SHAPE.test(token)) return undefined;
  const row = await store.findToken(db, hashOf(key, token), purpose);
  return row && row.used_at !== null ? { sub: row.sub, email: row.email } : undefined;
}

/** Ends every outstanding link of that purpose of the person (after a reset, the other reset links). */
export function forgetAccountTokens(db: Db, sub: string, purpose: TokenPurpose): Promise<number> {
  return store.deleteTokensOf(db, sub, purpose);
}

/** Removes tokens a day after they expired (for the periodic sweep; an expired token is never honoured). */
export function forgetExpiredAccountTokens(db: Db, now: number): Promise<number> {
  return store.deleteExpiredTokens(db, now - DAY);
}

/** What the flows that send or accept account links need. */
export type AccountLinkContext = {
  db: Db;
  clock: Clock;
  /** Keys.tokenHash: stand-in keys for e-mail addresses in the request counters */
  hashKey: Buffer;
  /** Keys.accountToken: the keyed hash of link tokens */
  tokenKey: Buffer;
};
