// People: creating accounts, their profile, and checking a password.
import { randomUUID } from 'node:crypto';
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { isUniqueViolation } from '../db/errors.ts';
import * as store from './accounts.store.ts';
import { normalizeEmail, normalizePhone, parseLoginIdentifier } from './identifiers.ts';
import * as imported from './imported-passwords.store.ts';
import { checkStoredPassword, replaceImportedHash } from './password-check.ts';
import { hashPassword, passwordProblem } from './passwords.ts';
import * as sessionStore from './sessions.store.ts';
import { unlockAccount } from './throttle.ts';

export type AccountErrorCode =
  | 'invalid_email'
  | 'invalid_phone'
  | 'invalid_password'
  | 'email_taken'
  | 'phone_taken'
  | 'invalid_picture'
  | 'invalid_name'
  | 'no_identifier'
  | 'invalid_address'
  | 'invalid_role'
  | 'invalid_sub'
  | 'service_account'
  | 'not_found';

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
export const MAX_NAME_LENGTH = 200;

function notFound(sub: string): AccountError {
  return new AccountError('not_found', `no account with sub ${sub}`);
}

export function checkedEmail(value: string): string {
  const email = normalizeEmail(value);
  if (email === undefined) throw new AccountError('invalid_email', `"${value}" is not an e-mail address`);
  return email;
}

export function checkedPhone(value: string): string {
  const phone = normalizePhone(value);
  if (phone === undefined) throw new AccountError('invalid_phone', `"${value}" is not a valid phone number; write it with its country code, e.g. +4915112345678`);
  return phone;
}

/** A picture is an https URL; empty means none. */
export function checkedPicture(value: string): string | null {
  if (value === '') return null;
  let url: URL | undefined;
  try {
    url = new URL(value);
  } catch {
    url = undefined;
  }
  // Stored as given, so only as a URL is written: no spaces or control characters (the URL parser would
  // quietly encode or drop them; PostgreSQL cannot store a NUL at all).
  if (url?.protocol !== 'https:' || /[\u0000-\u0020\u007f]/.test(value)) throw new AccountError('invalid_picture', 'the picture must be an https URL (or empty for none)');
  return value;
}

/**
 * A display name without control characters: nobody types them into a form, they would reach
 * applications through userinfo, and PostgreSQL cannot store a NUL. They are dropped, as from the
 * user agent shown for a session.
 */
export function checkedName(value: string): string | null {
  const name = value.replace(/[\u0000-\u001f\u007f]/g, '');
  if (name.length > MAX_NAME_LENGTH) throw new AccountError('invalid_name', `the name must have at most ${MAX_NAME_LENGTH} characters`);
  return name || null;
}

/** After a unique violation: which identifier another account holds already. */
async function takenIdentifier(db: Db, sub: string | undefined, email: string | null, phone: string | null): Promise<AccountError | undefined> {
  const byEmail = email === null ? undefined : await store.findUserByEmail(db, email);
  if (byEmail && byEmail.sub !== sub) return new AccountError('email_taken', `an account with the e-mail ${email} exists already`);
  const byPhone = phone === null ? undefined : await store.findUserByPhone(db, phone);
  if (byPhone && byPhone.sub !== sub) return new AccountError('phone_taken', `an account with the phone number ${phone} exists already`);
  return undefined;
}

export async function createAccount(db: Db, clock: Clock, input: NewAccount): Promise<Profile> {
  const email = input.email === undefined ? null : checkedEmail(input.email);
  const phone = input.phone === undefined ? null : checkedPhone(input.phone);
  const picture = input.picture === undefined ? null : checkedPicture(input.picture);
  const name = input.name === undefined ? null : checkedName(input.name);
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
      name,
      picture,
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
      const taken = await takenIdentifier(db, undefined, email, phone);
      if (taken) throw taken;
      // Two legacy imports raced for the same number: take the next one.
      if (attempt >= 5) throw error;
    }
  }
}

/**
 * The password hash of an account made by an upstream sign-in (issue 33): no password matches it (it is
 * not an argon2 hash, so verifyPassword answers false), until the person sets one ("Forgot password?").
 */
export const NO_PASSWORD = '!none';

/**
 * An account made by a first sign-in through an upstream identity provider: no password, the e-mail
 * verified only when the upstream said so. Values are checked as for any account.
 */
export async function createAccountWithoutPassword(db: Db, clock: Clock, input: { email?: string | undefined; name?: string | undefined; emailVerified: boolean }): Promise<Profile> {
  const email = input.email === undefined ? null : checkedEmail(input.email);
  const name = input.name === undefined ? null : checkedName(input.name.slice(0, MAX_NAME_LENGTH));
  const now = clock();
  const row: store.UserRow = { sub: randomUUID(), email, email_verified: email && input.emailVerified ? 1 : 0, phone_number: null, phone_number_verified: 0, name, picture: null, password_hash: NO_PASSWORD, disabled: 0, created_at: now, updated_at: now };
  try {
    await store.insertUser(db, row);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw (await takenIdentifier(db, undefined, email, null)) ?? error;
  }
  return toProfile(row);
}

/** Whether the account has a password it can sign in with. */
export async function hasPassword(db: Db, sub: string): Promise<boolean> {
  const row = await store.findUserBySub(db, sub);
  return row !== undefined && row.password_hash !== NO_PASSWORD;
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

/** The account with this e-mail address (compared as sign-in compares it), if any. */
export async function findAccountByEmail(db: Db, email: string): Promise<Profile | undefined> {
  const normalized = normalizeEmail(email);
  const row = normalized === undefined ? undefined : await store.findUserByEmail(db, normalized);
  return row && toProfile(row);
}

/** The account with this phone number (compared in E.164), if any. */
export async function findAccountByPhone(db: Db, phone: string): Promise<Profile | undefined> {
  const normalized = normalizePhone(phone);
  const row = normalized === undefined ? undefined : await store.findUserByPhone(db, normalized);
  return row && toProfile(row);
}

/** Stops the account from signing in and ends every session it has. */
export async function disableAccount(db: Db, clock: Clock, sub: string): Promise<Profile> {
  await db.transaction().execute(async (trx) => {
    if (!(await store.updateUser(trx, sub, { disabled: 1, updated_at: clock() }))) throw notFound(sub);
    await sessionStore.deleteSessionsOf(trx, sub);
  });
  return (await findAccount(db, sub))!;
}

/** Undoes disableAccount: the person can sign in again (their old sessions stay ended). */
export async function enableAccount(db: Db, clock: Clock, sub: string): Promise<Profile> {
  if (!(await store.updateUser(db, sub, { disabled: 0, updated_at: clock() }))) throw notFound(sub);
  return (await findAccount(db, sub))!;
}

/** spec: "`set-password` and `delete` end the person's sessions" — a new password signs everyone out. */
export async function setPassword(db: Db, clock: Clock, sub: string, password: string): Promise<void> {
  const problem = passwordProblem(password);
  if (problem) throw new AccountError('invalid_password', problem);
  const passwordHash = await hashPassword(password);
  await db.transaction().execute(async (trx) => {
    if (!(await store.updateUser(trx, sub, { password_hash: passwordHash, updated_at: clock() }))) throw notFound(sub);
    await imported.markReplaced(trx, sub, clock());
    await sessionStore.deleteSessionsOf(trx, sub);
  });
}

/**
 * Replaces the password hash and ends every session of the person (the caller starts a new one when the
 * person stays signed in). Runs inside the caller's transaction when given one.
 */
export async function replacePasswordHash(db: Db, clock: Clock, sub: string, passwordHash: string): Promise<void> {
  if (!(await store.updateUser(db, sub, { password_hash: passwordHash, updated_at: clock() }))) throw notFound(sub);
  await imported.markReplaced(db, sub, clock());
  await sessionStore.deleteSessionsOf(db, sub);
}

/** Checks the person's own password (for changing it); the same cost whether or not it matches. */
export async function passwordMatches(db: Db, sub: string, password: string): Promise<boolean> {
  const row = await store.findUserBySub(db, sub);
  const { ok } = await checkStoredPassword(db, row, password);
  return row !== undefined && ok;
}

/** Sets `email_verified` when the account still has this address. False when it has another one now. */
export function markEmailVerified(db: Db, clock: Clock, sub: string, email: string): Promise<boolean> {
  return store.setEmailVerified(db, sub, email, clock());
}

/**
 * Profile changes; a field left undefined stays as it is, an empty string clears it. Values are
 * checked as at creation. A changed e-mail (phone) is unverified again unless `emailVerified`
 * (`phoneVerified`) says otherwise.
 */
export type AccountChanges = {
  email?: string | undefined;
  phone?: string | undefined;
  name?: string | undefined;
  picture?: string | undefined;
  emailVerified?: boolean | undefined;
  phoneVerified?: boolean | undefined;
};

export async function updateAccount(db: Db, clock: Clock, sub: string, changes: AccountChanges): Promise<Profile> {
  const row = await store.findUserBySub(db, sub);
  if (!row) throw notFound(sub);
  const email = changes.email === undefined ? row.email : changes.email === '' ? null : checkedEmail(changes.email);
  const phone = changes.phone === undefined ? row.phone_number : changes.phone === '' ? null : checkedPhone(changes.phone);
  if (email === null && phone === null) throw new AccountError('no_identifier', 'an account needs an e-mail or a phone number to sign in with; keep one of them');
  const emailVerified = email !== null && (changes.emailVerified ?? (email === row.email && row.email_verified === 1));
  const phoneVerified = phone !== null && (changes.phoneVerified ?? (phone === row.phone_number && row.phone_number_verified === 1));
  // Only the profile columns: a password or disable set meanwhile must not be written back.
  const fields = {
    email,
    email_verified: emailVerified ? 1 : 0,
    phone_number: phone,
    phone_number_verified: phoneVerified ? 1 : 0,
    name: changes.name === undefined ? row.name : checkedName(changes.name),
    picture: changes.picture === undefined ? row.picture : checkedPicture(changes.picture),
    updated_at: clock(),
  } as const;
  try {
    if (!(await store.updateUser(db, sub, fields))) throw notFound(sub);
  } catch (error) {
    if (!isUniqueViolation(error)) throw error;
    throw (await takenIdentifier(db, sub, email, phone)) ?? error;
  }
  const updated = await findAccount(db, sub);
  if (!updated) throw notFound(sub);
  return updated;
}

/**
 * Deletes the account. Its grants, codes, access and refresh tokens, sessions, tasks and
 * notifications go with it (foreign keys cascade from users.sub); its sign-in lockout too.
 * Files of its tasks in object storage are not removed here (the operator's delete removes them first).
 */
export async function deleteAccount(db: Db, sub: string): Promise<void> {
  await db.transaction().execute(async (trx) => {
    if (!(await store.deleteUser(trx, sub))) throw notFound(sub);
    await unlockAccount(trx, sub);
  });
}

/**
 * Checks an e-mail-or-phone and password. Returns the account's sub, or undefined.
 * The password is always checked against some argon2 hash, and a failure waits out the slowest
 * imported scheme in use (password-check.ts), so the time taken does not reveal whether the account
 * exists. An imported foreign hash that matches is replaced by Signet's own right away.
 */
export async function checkCredentials(db: Db, identifier: string, password: string, clock: Clock = Date.now): Promise<{ sub: string } | undefined> {
  const parsed = parseLoginIdentifier(identifier);
  const row = parsed === undefined ? undefined : 'email' in parsed ? await store.findUserByEmail(db, parsed.email) : await store.findUserByPhone(db, parsed.phone);
  const { ok, foreign } = await checkStoredPassword(db, row, password);
  if (!row || !ok || row.disabled === 1) return undefined;
  if (foreign) await replaceImportedHash(db, clock, row.sub, password);
  return { sub: row.sub };
}

/** Finds the account a sign-in identifier names, without checking a password (for throttling keys). */
export async function findAccountByIdentifier(db: Db, identifier: string): Promise<{ sub: string } | undefined> {
  const parsed = parseLoginIdentifier(identifier);
  if (!parsed) return undefined;
  const row = 'email' in parsed ? await store.findUserByEmail(db, parsed.email) : await store.findUserByPhone(db, parsed.phone);
  return row && { sub: row.sub };
}
