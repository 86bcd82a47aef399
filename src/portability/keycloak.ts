// A Keycloak realm export (`kc.sh export --realm R --file realm.json`, or the admin console's partial
// export with users): the "users" array, each user with its password credential. Keycloak keeps
// passwords as PBKDF2 (`pbkdf2-sha256` with 27,500 iterations and a 64-byte key by default,
// `pbkdf2-sha512`, `pbkdf2` = SHA-1) or argon2 (Keycloak 24+); its other credentials (OTP, WebAuthn)
// are not brought: people set those up again.
import { isImportableSub, type ImportedPerson } from '../accounts/account-import.ts';
import { decodeB64, encodeArgon2, encodePbkdf2, PasswordHashError, type Argon2Parts, type Pbkdf2Parts } from '../accounts/password-hashes.ts';
import { jsonArrayElements, userItems } from './json-array.ts';
import { FormatError, isObject, optionalString, type ImportItem, type JsonObject, type TextChunks } from './records.ts';

const PBKDF2_DIGESTS: Record<string, Pbkdf2Parts['digest']> = { 'pbkdf2-sha256': 'sha256', 'pbkdf2-sha512': 'sha512', pbkdf2: 'sha1' };
const ARGON2_TYPES: Record<string, Argon2Parts['type']> = { id: 'argon2id', i: 'argon2i', d: 'argon2d' };

/** Keycloak's credential fields are JSON held in strings (secretData, credentialData). */
function jsonField(credential: JsonObject, key: string): JsonObject {
  const text = credential[key];
  if (typeof text !== 'string') throw new FormatError(`the password credential has no ${key}`);
  try {
    const value: unknown = JSON.parse(text);
    if (isObject(value)) return value;
  } catch {
    // reported below
  }
  throw new FormatError(`the password credential's ${key} is not a JSON object`);
}

/** additionalParameters hold lists of strings: {"memory": ["7168"]} */
function parameter(parameters: unknown, name: string, fallback: string): string {
  const value = isObject(parameters) ? parameters[name] : undefined;
  return Array.isArray(value) && typeof value[0] === 'string' ? value[0] : fallback;
}

function passwordOf(user: JsonObject): string | undefined {
  const credentials = Array.isArray(user['credentials']) ? user['credentials'].filter(isObject) : [];
  const password = credentials.find((c) => c['type'] === 'password');
  if (!password) return undefined;
  // Keycloak before 11 kept the fields on the credential itself
  const legacy = typeof password['hashedSaltedValue'] === 'string';
  const secret = legacy ? { value: password['hashedSaltedValue'], salt: password['salt'] } : jsonField(password, 'secretData');
  const data = legacy ? { algorithm: password['algorithm'], hashIterations: password['hashIterations'], additionalParameters: {} } : jsonField(password, 'credentialData');
  const algorithm = String(data['algorithm'] ?? '');
  if (typeof secret['value'] !== 'string' || typeof secret['salt'] !== 'string') throw new FormatError('the password credential has no value or salt');
  const salt = decodeB64(secret['salt'], 'salt');
  const hash = decodeB64(secret['value'], 'hash');
  const iterations = Number(data['hashIterations']);
  const digest = PBKDF2_DIGESTS[algorithm];
  if (digest !== undefined) return encodePbkdf2({ digest, iterations, salt, hash }).encoded;
  if (algorithm === 'argon2') {
    const extra = data['additionalParameters'];
    const type = ARGON2_TYPES[parameter(extra, 'type', 'id')];
    if (type === undefined) throw new FormatError(`unknown argon2 type ${parameter(extra, 'type', '')}`);
    const version = parameter(extra, 'version', '1.3') === '1.0' ? 16 : 19;
    return encodeArgon2({ type, version, m: Number(parameter(extra, 'memory', '7168')), t: iterations, p: Number(parameter(extra, 'parallelism', '1')), salt, hash }).encoded;
  }
  throw new FormatError(`Keycloak's password algorithm ${JSON.stringify(algorithm.slice(0, 40))} is not one Signet reads (pbkdf2-sha256, pbkdf2-sha512, pbkdf2, argon2)`);
}

/** The first value of a user attribute (Keycloak keeps attributes as lists of strings). */
function attribute(user: JsonObject, ...names: string[]): string | undefined {
  const attributes = user['attributes'];
  if (!isObject(attributes)) return undefined;
  for (const name of names) {
    const value = attributes[name];
    if (Array.isArray(value) && typeof value[0] === 'string' && value[0] !== '') return value[0];
  }
  return undefined;
}

export function keycloakPerson(user: JsonObject): ImportedPerson | 'service_account' {
  const username = optionalString(user, 'username');
  if (typeof user['serviceAccountClientId'] === 'string' || username?.startsWith('service-account-')) return 'service_account';
  const id = optionalString(user, 'id')?.toLowerCase();
  const email = optionalString(user, 'email') ?? (username?.includes('@') ? username : undefined);
  const name = [optionalString(user, 'firstName'), optionalString(user, 'lastName')].filter((part) => part).join(' ');
  let passwordHash: string | undefined;
  try {
    passwordHash = passwordOf(user);
  } catch (error) {
    if (error instanceof PasswordHashError) throw new FormatError(error.message);
    throw error;
  }
  return {
    sub: id !== undefined && isImportableSub(id) ? id : undefined,
    email,
    emailVerified: user['emailVerified'] === true,
    phone: attribute(user, 'phoneNumber', 'phone_number', 'phone'),
    phoneVerified: attribute(user, 'phoneNumberVerified', 'phone_number_verified') === 'true',
    name: name || undefined,
    disabled: user['enabled'] === false,
    createdAt: typeof user['createdTimestamp'] === 'number' ? user['createdTimestamp'] : undefined,
    passwordHash,
  };
}

export function readKeycloak(chunks: TextChunks): AsyncGenerator<ImportItem> {
  return userItems(jsonArrayElements(chunks, { key: 'users' }), (user, line) => {
    const person = keycloakPerson(user);
    return person === 'service_account' ? { line, kind: 'skip', reason: 'a Keycloak service account, not a person' } : { line, kind: 'account', person };
  });
}
