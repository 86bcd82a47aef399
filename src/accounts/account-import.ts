// People brought in by `signet import` and written out by `signet export` (issue 35). The rules of
// an account stay those of accounts.ts (the same checks of e-mail, phone, name and picture); what is
// new is that an import keeps a sub it is given, keeps the password hash it is given (Signet's own,
// or a foreign one checked at the next sign-in: password-check.ts), and that importing the same
// person again updates them instead of making a second account.
import { createHash } from 'node:crypto';
import type { Clock } from '../config/clock.ts';
import type { Db } from '../db/database.ts';
import { AccountError, checkedEmail, checkedName, checkedPhone, checkedPicture, NO_PASSWORD, toProfile, type Profile } from './accounts.ts';
import * as store from './accounts.store.ts';
import * as imported from './imported-passwords.store.ts';
import { IMPORTED_HASH_MARKER } from './password-check.ts';
import { parsePasswordHash, PasswordHashError, type ParsedHash } from './password-hashes.ts';
import { isRole } from './roles.ts';
import * as roleStore from './roles.store.ts';
import * as sessionStore from './sessions.store.ts';

/** A person as an import file describes them; a field left undefined is not in the file (an update keeps it). */
export type ImportedPerson = {
  /** kept when given: Signet's own export, Keycloak's user ids (a UUID or a numeric legacy id) */
  sub?: string | undefined;
  email?: string | undefined;
  emailVerified?: boolean | undefined;
  phone?: string | undefined;
  phoneVerified?: boolean | undefined;
  name?: string | undefined;
  picture?: string | undefined;
  disabled?: boolean | undefined;
  createdAt?: number | undefined;
  /** any form parsePasswordHash reads; undefined: the file has no password for them */
  passwordHash?: string | undefined;
  roles?: string[] | undefined;
};

export type ImportOutcome = { outcome: 'created' | 'updated'; sub: string };

const SUB = /^([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|\d{1,19})$/;

/** A sub an import may keep: a UUID (lower case) or a numeric legacy id. */
export function isImportableSub(value: string): boolean {
  return SUB.test(value);
}

type Checked = {
  sub: string | undefined;
  email: string | null;
  phone: string | null;
  name: string | null | undefined;
  picture: string | null | undefined;
  password: (ParsedHash & { fingerprint: string }) | undefined;
  roles: string[];
};

/** Every check before anything is written: a refused person leaves nothing behind. */
function check(person: ImportedPerson): Checked {
  if (person.sub !== undefined && !isImportableSub(person.sub)) throw new AccountError('invalid_sub', `the sub ${JSON.stringify(person.sub.slice(0, 60))} is neither a UUID nor a numeric id`);
  const email = person.email === undefined || person.email === '' ? null : checkedEmail(person.email);
  const phone = person.phone === undefined || person.phone === '' ? null : checkedPhone(person.phone);
  if (email === null && phone === null) throw new AccountError('no_identifier', 'the person has neither an e-mail address nor a phone number to sign in with');
  let password: Checked['password'];
  if (person.passwordHash !== undefined && person.passwordHash !== '') {
    try {
      const parsed = parsePasswordHash(person.passwordHash);
      password = { ...parsed, fingerprint: createHash('sha256').update(person.passwordHash.trim()).digest('base64url') };
    } catch (error) {
      if (error instanceof PasswordHashError) throw new AccountError('invalid_password', error.message);
      throw error;
    }
  }
  const roles = person.roles ?? [];
  const unknown = roles.find((r) => !isRole(r));
  if (unknown !== undefined) throw new AccountError('invalid_role', `unknown role ${JSON.stringify(unknown.slice(0, 40))}`);
  return {
    sub: person.sub,
    email,
    phone,
    name: person.name === undefined ? undefined : checkedName(person.name),
    picture: person.picture === undefined ? undefined : checkedPicture(person.picture),
    password,
    roles,
  };
}

/** The account this person is: by sub, else by e-mail, else by phone — refused when they name two different accounts. */
async function existingFor(db: Db, c: Checked): Promise<store.UserRow | undefined> {
  const bySub = c.sub === undefined ? undefined : await store.findUserBySub(db, c.sub);
  const byEmail = c.email === null ? undefined : await store.findUserByEmail(db, c.email);
  const byPhone = c.phone === null ? undefined : await store.findUserByPhone(db, c.phone);
  const target = bySub ?? byEmail ?? byPhone;
  if (target && byEmail && byEmail.sub !== target.sub) throw new AccountError('email_taken', `the e-mail ${c.email} belongs to another account (${byEmail.sub})`);
  if (target && byPhone && byPhone.sub !== target.sub) throw new AccountError('phone_taken', `the phone number ${c.phone} belongs to another account (${byPhone.sub})`);
  return target;
}

/** What users.password_hash holds for an imported password: Signet's own hash in place, else the marker of a foreign one waiting. */
function storedHashOf(password: NonNullable<Checked['password']>): string {
  return password.native ? password.encoded : IMPORTED_HASH_MARKER;
}

/** Records the imported password beside the account (the foreign hash itself, or only its fingerprint for Signet's own). */
async function recordImportedPassword(db: Db, sub: string, password: NonNullable<Checked['password']>, now: number): Promise<void> {
  await imported.upsertImported(db, {
    sub,
    algorithm: password.algorithm,
    scheme: password.scheme,
    foreign_hash: password.native ? null : password.encoded,
    source_fingerprint: password.fingerprint,
    imported_at: now,
    replaced_at: null,
  });
}

/**
 * Creates the person, or updates the account they already have (by sub, e-mail or phone). A password
 * from the file is set when it differs from the one imported last time: importing the same file again
 * leaves a password the person has changed since alone. Run it inside a transaction.
 */
export async function importAccount(db: Db, clock: Clock, person: ImportedPerson): Promise<ImportOutcome> {
  const c = check(person);
  const existing = await existingFor(db, c);
  const now = clock();
  let sub: string;
  if (existing === undefined) {
    sub = c.sub ?? crypto.randomUUID();
    await store.insertUser(db, {
      sub,
      email: c.email,
      email_verified: c.email !== null && person.emailVerified ? 1 : 0,
      phone_number: c.phone,
      phone_number_verified: c.phone !== null && person.phoneVerified ? 1 : 0,
      name: c.name ?? null,
      picture: c.picture ?? null,
      // no password in the file: none matches until the person sets one ("Forgot password?"), as for an upstream sign-up
      password_hash: c.password ? storedHashOf(c.password) : NO_PASSWORD,
      disabled: person.disabled ? 1 : 0,
      created_at: person.createdAt ?? now,
      updated_at: now,
    });
    if (c.password) await recordImportedPassword(db, sub, c.password, now);
  } else {
    sub = existing.sub;
    // An identifier the file leaves out stays as it is, verified or not; one the file gives is verified
    // when the file says so, or when it is the same address that was verified already.
    const emailVerified = c.email === null ? existing.email_verified === 1 : (person.emailVerified ?? (c.email === existing.email && existing.email_verified === 1));
    const phoneVerified = c.phone === null ? existing.phone_number_verified === 1 : (person.phoneVerified ?? (c.phone === existing.phone_number && existing.phone_number_verified === 1));
    const password = c.password;
    const passwordChanged = password !== undefined && (await imported.findImported(db, sub))?.source_fingerprint !== password.fingerprint;
    await store.updateUser(db, sub, {
      email: c.email ?? existing.email,
      email_verified: emailVerified ? 1 : 0,
      phone_number: c.phone ?? existing.phone_number,
      phone_number_verified: phoneVerified ? 1 : 0,
      ...(c.name === undefined ? {} : { name: c.name }),
      ...(c.picture === undefined ? {} : { picture: c.picture }),
      ...(person.disabled === undefined ? {} : { disabled: person.disabled ? 1 : 0 }),
      ...(passwordChanged ? { password_hash: storedHashOf(password) } : {}),
      updated_at: now,
    });
    if (passwordChanged) await recordImportedPassword(db, sub, password, now);
    // A new password or a disabled account signs every session out, as set-password and disable do.
    if (passwordChanged || (person.disabled === true && existing.disabled === 0)) await sessionStore.deleteSessionsOf(db, sub);
  }
  for (const role of c.roles) await roleStore.insertRole(db, sub, role, now);
  return { outcome: existing === undefined ? 'created' : 'updated', sub };
}

/** An account as Signet's export writes it: its profile, roles, and `password_hash` only when secrets are included. */
export type ExportedAccount = Profile & { roles: string[]; password_hash?: string };

const EXPORT_PAGE = 500;

/**
 * Every account, a page at a time. With `includeSecrets`, each one's password hash: Signet's own, or
 * the imported foreign hash still waiting for its sign-in (an instance importing the export checks it
 * the same way). Never sessions, tokens or second factors.
 */
export async function* exportAccounts(db: Db, options: { includeSecrets: boolean }): AsyncGenerator<ExportedAccount> {
  let after: string | undefined;
  for (;;) {
    const rows = await store.pageUsers(db, after, EXPORT_PAGE);
    if (rows.length === 0) return;
    const subs = rows.map((r) => r.sub);
    const roles = await roleStore.rolesOfMany(db, subs);
    const foreign = options.includeSecrets ? await imported.foreignHashesOf(db, subs) : new Map<string, string>();
    for (const row of rows) {
      const hash = row.password_hash === IMPORTED_HASH_MARKER ? foreign.get(row.sub) : row.password_hash.startsWith('$argon2') ? row.password_hash : undefined;
      yield { ...toProfile(row), roles: roles.get(row.sub) ?? [], ...(options.includeSecrets && hash !== undefined ? { password_hash: hash } : {}) };
    }
    after = rows.at(-1)!.sub;
  }
}
