// Secrets at rest: AES-256-GCM under one of the subkeys of config/keys.ts, with a label bound as
// associated data (a sealed value moved to another row or purpose does not open). Used for the TOTP
// secrets (accounts/factors/totp.ts) and the id_token signing keys (oauth/oidc/keys.ts).
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

/** Encrypts `plain`: "v1.<iv>.<ciphertext>.<tag>" (base64url), a fresh 12-byte IV each time; `label` is bound as associated data. */
export function seal(key: Buffer, label: string, plain: Buffer): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  cipher.setAAD(Buffer.from(label));
  const body = Buffer.concat([cipher.update(plain), cipher.final()]);
  return ['v1', iv.toString('base64url'), body.toString('base64url'), cipher.getAuthTag().toString('base64url')].join('.');
}

/** Decrypts a sealed value; throws when it was changed, or sealed with another label or under another key. */
export function unseal(key: Buffer, label: string, sealed: string): Buffer {
  const [version, iv, body, tag] = sealed.split('.');
  if (version !== 'v1' || !iv || body === undefined || !tag) throw new Error('unreadable sealed value');
  const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
  decipher.setAAD(Buffer.from(label));
  decipher.setAuthTag(Buffer.from(tag, 'base64url'));
  return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]);
}
