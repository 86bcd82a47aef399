// People: creating accounts, their profile, and checking a password.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import * as store from './accounts.store.ts';
import { normalizeEmail, normalizePhone, parseLoginIdentifier } from './identifiers.ts';
import { decoyPasswordHash, hashPassword, passwordProblem, verifyPassword } from './passwords.ts';

export type AccountErrorCode = 'invalid_email' | 'invalid_phone' | 'invalid_password' | 'email_taken' | 'phone_taken' | 'invalid_picture' | 'invalid_name' | 'not_found';

export class AccountError extends Error {
  readonly code: AccountErrorCode;
  constructor(code: AccountErrorCode, message: string) {
    super(message);
    this.code = code;
    this.name = 'AccountError';
  }
}

/** What an account shows of itself (never the password hash). */
export type Profile = {
  sub: string;
  email: string | null;
  email_verified: boolean;
  phone_number: string | null;
  phone_number_verified: boolean;
  name: string | null;
  picture: string | null;
  disabled: boolean;
  created_at: string;
};

export function toProfile(row: store.UserRow): Profile {
  return {
    sub: row.sub,
    email: row.email,
    email_verified: row.email_verified === 1,
    phone_number: row.phone_number,
    phone_number_verified: row.phone_number_verified === 1,
    name: row.name,
    picture: row.picture,
    disabled: row.disabled === 1,
    created_at: new Date(row.created_at).toISOString(),
  };
}

export type NewAccount = {
  email?: string | undefined;
  phone?: string | undefined;
  name?: string | undefined;
  picture?: string | undefined;
  emailVerified?: boolean | undefined;
  phoneVerified?: boolean | undefined;
  /** spec: sub "is a UUID for recent accounts and a numeric string for accounts that predate a schema migration" */
  legacyNumericId?: boolean | undefined;
  password: string;
};

const FIRST_LEGACY_ID = 100000;

export async function createAccount(db: Db, clock: Clock, input: NewAccount): Promise<Profile> {
  const email = input.email === undefined ? null : normalizeEmail(input.email);
  if (email === undefined) throw new AccountError('invalid_email', `"${input.email}" is not an e-mail address`);
  const phone = input.phone === undefined ? null : normalizePhone(input.phone);
  if (phone === undefined) throw new AccountError('invalid_phone', `"${input.phone}" is not a valid phone number; write it with its country code, e.g. +4915112345678`);
  if (input.picture !== undefined && input.picture !== '' && !/^https?:\/\//.test(input.picture)) {
    throw new AccountError('invalid_picture', 'the picture must be an http(s) URL');
  }
  if (input.name !== undefined && input.name.length > 200) throw new AccountError('invalid_name', 'the name must have at most 200 characters');
  const problem = passwordProblem(input.password);
  if (problem) throw new AccountError('invalid_password', problem);

  const now = clock();
  const passwordHash = await hashPassword(input.password);
  for (let attempt = 0; ; attempt++) {
    const sub = input.legacyNumericId ? await nextLegacySub(db) : randomUUID();
    const row: store.UserRow = {
      sub,
      email,
      email_verified: email && input.emailVerified ? 1 : 0,
      phone_number: phone,
      phone_number_verified: phone && input.phoneVerified ? 1 : 0,
      name: input.name || null,
      picture: input.picture || null,
      password_hash: passwordHash,
      disabled: 0,
      created_at: now,
      updated_at: now,
    };
    try {
      await store.insertUser(db, row);
      return toProfile(row);
    } catch (error) {
      if (!isUniqueViolation(error)) throw error;
      if (email && (await store.findUserByEmail(db, email))) throw new AccountError('email_taken', `an account with the e-mail ${email} exists already`);
      if (phone && (await store.findUserByPhone(db, phone))) throw new AccountError('phone_taken', `an account with the phone number ${phone} exists already`);
      // Two legacy imports raced for the same number: take the next one.
      if (attempt >= 5) throw error;
    }
  }
}

async function nextLegacySub(db: Db): Promise<string> {
  const subs = await store.legacyNumericSubs(db);
  const highest = subs.reduce((max, s) => (BigInt(s) > max ? BigInt(s) : max), BigInt(FIRST_LEGACY_ID - 1));
  return String(highest + 1n);
}

export async function findAccount(db: Db, sub: string): Promise<Profile | undefined> {
  const row = await store.findUserBySub(db, sub);
  return row && toProfile(row);
}

export async function listAccounts(db: Db): Promise<Profile[]> {
  return (await store.listUsers(db)).map(toProfile);
}

export async function disableAccount(db: Db, clock: Clock, sub: string): Promise<Profile> {
  if (!(await store.updateUser(db, sub, { disabled: 1, updated_at: clock() }))) throw new AccountError('not_found', `no account with sub ${sub}`);
  return (await findAccount(db, sub))!;
}

export async function setPassword(db: Db, clock: Clock, sub: string, password: string): Promise<void> {
  const problem = passwordProblem(password);
  if (problem) throw new AccountError('invalid_password', problem);
  if (!(await store.updateUser(db, sub, { password_hash: await hashPassword(password), updated_at: clock() }))) {
    throw new AccountError('not_found', `no account with sub ${sub}`);
  }
}

/**
 * Checks an e-mail-or-phone and password. Returns the account's sub, or undefined.
 * The password is always checked against some argon2 hash, so the time taken does not reveal whether the account exists.
 */
export async function checkCredentials(db: Db, identifier: string, password: string): Promise<{ sub: string } | undefined> {
  const parsed = parseLoginIdentifier(identifier);
  const row = parsed === undefined ? undefined : 'email' in parsed ? await store.findUserByEmail(db, parsed.email) : await store.findUserByPhone(db, parsed.phone);
  const hashToCheck = row ? row.password_hash : await decoyPasswordHash();
  const ok = await verifyPassword(hashToCheck, password.slice(0, 1024));
  if (!row || !ok || row.disabled === 1) return undefined;
  return { sub: row.sub };
}

/** Finds the account a sign-in identifier names, without checking a password (for throttling keys). */
export async function findAccountByIdentifier(db: Db, identifier: string): Promise<{ sub: string } | undefined> {
  const parsed = parseLoginIdentifier(identifier);
  if (!parsed) return undefined;
  const row = 'email' in parsed ? await store.findUserByEmail(db, parsed.email) : await store.findUserByPhone(db, parsed.phone);
  return row && { sub: row.sub };
}
