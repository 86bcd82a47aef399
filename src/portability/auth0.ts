// An Auth0 bulk-import file (the JSON array Auth0's "Import Users" job takes, and what its export
// extension writes): each user with `password_hash` (bcrypt) or `custom_password_hash` — bcrypt,
// argon2, pbkdf2 (PHC strings in hash.value) or scrypt (hash, salt and cost parameters). Auth0's
// MD/SHA/HMAC/LDAP hashes are refused: those people would need a reset, and the line says so.
import type { ImportedPerson } from '../accounts/account-import.ts';
import { encodeScrypt, parsePasswordHash, PasswordHashError } from '../accounts/password-hashes.ts';
import { createInterface } from 'node:readline';
import { Readable } from 'node:stream';
import { firstCharacter, jsonArrayElements, userItems, type ArrayElement } from './json-array.ts';
import { FormatError, isObject, optionalBoolean, optionalString, type ImportItem, type JsonObject, type TextChunks } from './records.ts';

/** hash.value / salt.value in Auth0's `encoding` (base64, hex or utf8). */
function decode(part: unknown, what: string, fallback: BufferEncoding): Buffer {
  if (!isObject(part) || typeof part['value'] !== 'string') throw new FormatError(`custom_password_hash.${what}.value is missing`);
  const encoding = part['encoding'] ?? fallback;
  if (encoding !== 'base64' && encoding !== 'hex' && encoding !== 'utf8') throw new FormatError(`custom_password_hash.${what}.encoding must be base64, hex or utf8`);
  return Buffer.from(part['value'], encoding);
}

function customHash(custom: JsonObject): string {
  const algorithm = custom['algorithm'];
  const password = custom['password'];
  if (isObject(password) && password['encoding'] !== undefined && password['encoding'] !== 'utf8') throw new FormatError('custom_password_hash.password.encoding must be utf8 (Signet checks passwords as UTF-8)');
  const hash = custom['hash'];
  if (algorithm === 'bcrypt' || algorithm === 'argon2' || algorithm === 'pbkdf2') {
    if (!isObject(hash) || typeof hash['value'] !== 'string') throw new FormatError('custom_password_hash.hash.value is missing');
    const parsed = parsePasswordHash(hash['value']);
    const family = parsed.algorithm === 'signet' ? 'argon2' : parsed.algorithm.replace(/-sha\d+$/, '');
    if (family !== algorithm) throw new FormatError(`custom_password_hash.hash.value is a ${parsed.algorithm} hash, not ${algorithm}`);
    return parsed.encoded;
  }
  if (algorithm === 'scrypt') {
    const number = (key: string, fallback: number) => (typeof custom[key] === 'number' ? (custom[key] as number) : fallback);
    return encodeScrypt({ n: number('cost', 16384), r: number('blockSize', 8), p: number('parallelization', 1), salt: decode(custom['salt'], 'salt', 'utf8'), hash: decode(hash, 'hash', 'hex') }).encoded;
  }
  throw new FormatError(`Auth0's ${JSON.stringify(String(algorithm).slice(0, 20))} hashes are not read (bcrypt, argon2, pbkdf2 and scrypt are); import these people without custom_password_hash and they set a password with "Forgot password"`);
}

export function auth0Person(user: JsonObject): ImportedPerson {
  const plain = optionalString(user, 'password_hash');
  const custom = user['custom_password_hash'];
  if (plain !== undefined && custom !== undefined) throw new FormatError('a user has both password_hash and custom_password_hash; keep one');
  let passwordHash: string | undefined;
  try {
    if (plain !== undefined) {
      const parsed = parsePasswordHash(plain);
      if (parsed.algorithm !== 'bcrypt') throw new FormatError('password_hash must be a bcrypt hash ($2a$ or $2b$); other algorithms go in custom_password_hash');
      passwordHash = parsed.encoded;
    } else if (custom !== undefined) {
      if (!isObject(custom)) throw new FormatError('custom_password_hash must be an object');
      passwordHash = customHash(custom);
    }
  } catch (error) {
    if (error instanceof PasswordHashError) throw new FormatError(error.message);
    throw error;
  }
  const given = [optionalString(user, 'given_name'), optionalString(user, 'family_name')].filter((part) => part).join(' ');
  return {
    email: optionalString(user, 'email'),
    emailVerified: optionalBoolean(user, 'email_verified'),
    phone: optionalString(user, 'phone_number'),
    phoneVerified: optionalBoolean(user, 'phone_verified'),
    name: optionalString(user, 'name') ?? (given || optionalString(user, 'nickname')),
    picture: optionalString(user, 'picture'),
    disabled: optionalBoolean(user, 'blocked'),
    passwordHash,
  };
}

/**
 * Auth0's user export job writes one user per line (JSON Lines) instead of an array: read it line by line.
 */
async function* jsonLines(chunks: TextChunks): AsyncGenerator<ArrayElement> {
  let line = 0;
  for await (const text of createInterface({ input: Readable.from(chunks), crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    try {
      yield { line, value: JSON.parse(text) as unknown };
    } catch {
      yield { line, error: 'not valid JSON' };
    }
  }
}

/** An Auth0 file: the bulk-import array, or the export job's JSON Lines (told apart by the first character). */
export async function* readAuth0(chunks: TextChunks): AsyncGenerator<ImportItem> {
  const { head, all } = await firstCharacter(chunks);
  const elements = head === '[' ? jsonArrayElements(all, { topLevel: true }) : jsonLines(all);
  yield* userItems(elements, (user, line) => ({ line, kind: 'account', person: auth0Person(user) }));
}
