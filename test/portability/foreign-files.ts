// Import files as Keycloak, Auth0 and a CSV-writing application make them, with each password hashed
// by the algorithm's own library or node:crypto at the parameters those systems use.
import { pbkdf2Sync, randomBytes, randomUUID, scryptSync } from 'node:crypto';
import { hash as argon2Hash, hashRaw as argon2Raw } from '@node-rs/argon2';
import { hash as bcryptHash } from '@node-rs/bcrypt';

export type KeycloakAlgorithm = 'pbkdf2-sha256' | 'pbkdf2-sha512' | 'argon2';

/** Keycloak's defaults: pbkdf2-sha256 27,500 iterations, pbkdf2-sha512 210,000, both a 512-bit key; argon2id 1.3, 7 MiB, 5 iterations, 32 bytes. */
export async function keycloakCredential(password: string, algorithm: KeycloakAlgorithm): Promise<Record<string, unknown>> {
  const salt = randomBytes(16);
  let value: Buffer;
  let credentialData: Record<string, unknown>;
  if (algorithm === 'argon2') {
    value = await argon2Raw(password, { algorithm: 2, version: 1, memoryCost: 7168, timeCost: 5, parallelism: 1, outputLen: 32, salt });
    credentialData = { hashIterations: 5, algorithm: 'argon2', additionalParameters: { hashLength: ['32'], memory: ['7168'], type: ['id'], version: ['1.3'], parallelism: ['1'] } };
  } else {
    const iterations = algorithm === 'pbkdf2-sha256' ? 27_500 : 210_000;
    value = pbkdf2Sync(password, salt, iterations, 64, algorithm === 'pbkdf2-sha256' ? 'sha256' : 'sha512');
    credentialData = { hashIterations: iterations, algorithm, additionalParameters: {} };
  }
  return {
    id: randomUUID(),
    type: 'password',
    userLabel: 'My password',
    createdDate: 1700000000000,
    secretData: JSON.stringify({ value: value.toString('base64'), salt: salt.toString('base64'), additionalParameters: {} }),
    credentialData: JSON.stringify(credentialData),
  };
}

export type KeycloakPerson = { id?: string; email: string; password: string; algorithm: KeycloakAlgorithm; firstName?: string; enabled?: boolean };

/** A realm export as `kc.sh export` writes it: realm settings around the users array, pretty-printed. */
export async function keycloakRealm(people: KeycloakPerson[], extraUsers: Record<string, unknown>[] = []): Promise<string> {
  const users = [];
  for (const p of people) {
    users.push({
      id: p.id ?? randomUUID(),
      createdTimestamp: 1700000000000,
      username: p.email.split('@')[0],
      enabled: p.enabled ?? true,
      totp: false,
      emailVerified: true,
      firstName: p.firstName ?? 'Kay',
      lastName: 'Cloak',
      email: p.email,
      attributes: { locale: ['en'] },
      credentials: [await keycloakCredential(p.password, p.algorithm), { id: randomUUID(), type: 'otp', secretData: '{"value":"JBSWY3DPEHPK3PXP"}', credentialData: '{"subType":"totp","digits":6,"period":30,"algorithm":"HmacSHA1"}' }],
      disableableCredentialTypes: [],
      requiredActions: [],
      realmRoles: ['default-roles-acme'],
      notBefore: 0,
      groups: [],
    });
  }
  return JSON.stringify(
    {
      id: 'acme',
      realm: 'acme',
      enabled: true,
      passwordPolicy: 'hashAlgorithm(pbkdf2-sha256)',
      roles: { realm: [{ id: randomUUID(), name: 'default-roles-acme', composite: true }] },
      clients: [{ clientId: 'account', redirectUris: ['/realms/acme/account/*'], attributes: { 'users.note': '"users": [' } }],
      users: [...users, ...extraUsers],
      smtpServer: {},
      components: { 'org.keycloak.keys.KeyProvider': [{ name: 'rsa-generated', config: { priority: ['100'] } }] },
    },
    null,
    2,
  );
}

export type Auth0Person = { email: string; password: string; kind: 'bcrypt' | 'custom-bcrypt' | 'argon2' | 'pbkdf2' | 'scrypt' };

/** An Auth0 bulk-import file: password_hash (bcrypt) or custom_password_hash per Auth0's documented shapes. */
export async function auth0File(people: Auth0Person[], extra: Record<string, unknown>[] = []): Promise<string> {
  const users: Record<string, unknown>[] = [];
  for (const p of people) {
    const base = { email: p.email, email_verified: true, name: `Zero ${p.kind}`, user_id: `auth0|${randomBytes(8).toString('hex')}`, app_metadata: { plan: 'pro' } };
    if (p.kind === 'bcrypt') users.push({ ...base, password_hash: await bcryptHash(p.password, 10) });
    else if (p.kind === 'custom-bcrypt') users.push({ ...base, custom_password_hash: { algorithm: 'bcrypt', hash: { value: await bcryptHash(p.password, 10) } } });
    else if (p.kind === 'argon2') users.push({ ...base, custom_password_hash: { algorithm: 'argon2', hash: { value: await argon2Hash(p.password, { algorithm: 2, memoryCost: 4096, timeCost: 3, parallelism: 1 }) } } });
    else if (p.kind === 'pbkdf2') {
      const salt = randomBytes(16);
      const derived = pbkdf2Sync(p.password, salt, 10_000, 64, 'sha512');
      const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '');
      users.push({ ...base, custom_password_hash: { algorithm: 'pbkdf2', hash: { value: `$pbkdf2-sha512$i=10000,l=64$${b64(salt)}$${b64(derived)}`, encoding: 'utf8' } } });
    } else {
      const salt = randomBytes(12).toString('hex');
      const derived = scryptSync(p.password, salt, 64, { N: 16384, r: 8, p: 1 });
      users.push({ ...base, custom_password_hash: { algorithm: 'scrypt', hash: { value: derived.toString('hex'), encoding: 'hex' }, salt: { value: salt, encoding: 'utf8' }, keylen: 64, cost: 16384, blockSize: 8, parallelization: 1 } });
    }
  }
  return JSON.stringify([...users, ...extra], null, 2);
}

/** One CSV cell, quoted when it holds a comma or a quote. */
export function csvCell(value: string): string {
  return /[",\n]/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

export async function bcryptOf(password: string, cost = 10): Promise<string> {
  return bcryptHash(password, cost);
}

/** Django's default hasher: pbkdf2_sha256$iterations$salt$base64(hash), the salt used as text. */
export function djangoPbkdf2(password: string, iterations = 100_000): string {
  const salt = randomBytes(9).toString('base64url');
  return `pbkdf2_sha256$${iterations}$${salt}$${pbkdf2Sync(password, salt, iterations, 32, 'sha256').toString('base64')}`;
}

/** passlib's scrypt: $scrypt$ln=…,r=…,p=…$salt$hash in passlib's base64 (no padding). */
export function passlibScrypt(password: string): string {
  const salt = randomBytes(16);
  const b64 = (b: Buffer) => b.toString('base64').replace(/=+$/, '').replaceAll('+', '.');
  return `$scrypt$ln=14,r=8,p=1$${b64(salt)}$${b64(scryptSync(password, salt, 32, { N: 16384, r: 8, p: 1 }))}`;
}

export async function argon2iOf(password: string): Promise<string> {
  return argon2Hash(password, { algorithm: 1, memoryCost: 4096, timeCost: 3, parallelism: 1 });
}
