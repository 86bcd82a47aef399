// Key material. SIGNET_SECRET, or a secret generated once into the data dir, is the root; every use
// gets its own subkey (HKDF), so a cookie key can never be used to forge a token hash and vice versa.
import { randomBytes, hkdfSync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Settings } from './settings.ts';

export type Keys = {
  /** HMAC-SHA-256 key for codes, tokens, client secrets, session and request ids at rest. */
  tokenHash: Buffer;
  /** Key for signing cookies (CSRF secret cookie, language choice). */
  cookie: Buffer;
  /** HMAC key of the one-click unsubscribe tokens in notification e-mail (good for nothing else). */
  unsubscribe: Buffer;
  /** HMAC key of the password-reset and e-mail-verification links at rest (good for nothing else). */
  accountToken: Buffer;
  /**
   * HMAC key of the device cookies, a browser's proof that it signed in to an account before (the
   * per-account sign-in ceiling does not apply to it; good for nothing else).
   */
  deviceCookie: Buffer;
  /** AES-256-GCM key of the authenticator-app (TOTP) secrets at rest (accounts/factors/totp.ts; good for nothing else). */
  factorSecret: Buffer;
  /**
   * HMAC key of the remembered-browser cookies: a browser whose owner ticked "Remember this browser for
   * 30 days" at the second step skips it for that account (accounts/factors/remembered-browser.ts).
   */
  rememberedBrowser: Buffer;
  /** AES-256-GCM key of the id_token signing keys' private halves at rest (oauth/oidc/keys.ts; good for nothing else). */
  signingKey: Buffer;
  /** AES-256-GCM key of upstream identity providers' client secrets and sign-in states at rest (accounts/upstream/; good for nothing else). */
  upstreamSecret: Buffer;
};

const SECRET_FILE = 'secret.key';

/** The data dir holds the database, the secret and stored files: only the service's own user may enter it. */
export const DATA_DIR_MODE = 0o700;
/** The secret file: only the service's own user may read it. */
export const SECRET_FILE_MODE = 0o600;

/** Returns the root secret: SIGNET_SECRET when set, else the one in the data dir, generated on first use. */
export function loadRootSecret(settings: Settings): string {
  tightenDataDir(settings.dataDir);
  if (settings.secret) return settings.secret;
  mkdirSync(settings.dataDir, { recursive: true, mode: DATA_DIR_MODE });
  const file = path.join(settings.dataDir, SECRET_FILE);
  if (!existsSync(file)) {
    try {
      // 'wx' fails if another process created it first; then we read theirs.
      writeFileSync(file, randomBytes(32).toString('base64url') + '\n', { flag: 'wx', mode: SECRET_FILE_MODE });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  // A secret file that others may read (copied in, or made by an older version) is tightened.
  if ((statSync(file).mode & 0o077) !== 0) chmodSync(file, SECRET_FILE_MODE);
  return readFileSync(file, 'utf8').trim();
}

/**
 * A data dir that others may enter (made by an older version, or by hand) is tightened to 0700 —
 * the files in it are tightened where they are opened. One Signet cannot change (not its owner) is
 * left as it is.
 */
function tightenDataDir(dataDir: string): void {
  try {
    if ((statSync(dataDir).mode & 0o077) !== 0) chmodSync(dataDir, DATA_DIR_MODE);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code !== 'ENOENT' && code !== 'EPERM') throw error;
  }
}

export function deriveKeys(rootSecret: string): Keys {
  const derive = (purpose: string) => Buffer.from(hkdfSync('sha256', rootSecret, 'signet', purpose, 32));
  return { tokenHash: derive('token-hash'), cookie: derive('cookie'), unsubscribe: derive('unsubscribe-token'), accountToken: derive('account-token'), deviceCookie: derive('device-cookie'), factorSecret: derive('factor-secret'), rememberedBrowser: derive('remembered-browser'), signingKey: derive('signing-key'), upstreamSecret: derive('upstream-secret') };
}
