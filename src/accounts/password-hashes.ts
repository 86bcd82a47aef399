// Password hashes brought from elsewhere (issue 35): bcrypt, argon2 (i, d, id), scrypt and PBKDF2 with
// SHA-1, SHA-256 or SHA-512. Each is read from the forms other systems write and kept in one encoded
// form (PHC-style strings), so a hash reads the same in the database, in Signet's own export and in a
// CSV file. Checking is done by the algorithm's library (bcrypt, argon2) or node:crypto (PBKDF2,
// scrypt, compared with timingSafeEqual), always off the event loop.
import { pbkdf2, scrypt, timingSafeEqual, type BinaryLike, type ScryptOptions } from 'node:crypto';
import { verify as argon2Verify } from '@node-rs/argon2';
import { verify as bcryptVerify } from '@node-rs/bcrypt';

export type ForeignAlgorithm = 'bcrypt' | 'argon2' | 'scrypt' | 'pbkdf2-sha1' | 'pbkdf2-sha256' | 'pbkdf2-sha512';

/**
 * A hash as kept: `encoded` is what is stored and exported; `scheme` is the algorithm with its
 * parameters and no salt or hash (what a check costs); `native` when it is Signet's own argon2id.
 */
export type ParsedHash = { algorithm: ForeignAlgorithm | 'signet'; encoded: string; scheme: string; native: boolean };

export class PasswordHashError extends Error {
  override name = 'PasswordHashError';
}

// Parameters past these would let one sign-in occupy the machine (a file is the operator's, but a
// typo of a zero should not become a ten-second sign-in).
export const LIMITS = { bcryptCost: 15, pbkdf2Iterations: 5_000_000, argon2MemoryKib: 262_144, argon2Time: 64, argon2Parallelism: 16, scryptMemoryBytes: 256 * 1024 * 1024, scryptParallelism: 16 } as const;

/** Signet's own argon2id parameters (passwords.ts): such a hash needs no replacing. */
const NATIVE = { type: 'argon2id', version: 19, m: 19456, t: 2, p: 1 } as const;

const B64 = /^[A-Za-z0-9+/.]+={0,2}$/;

/** Standard base64 with or without padding; passlib's "adapted" base64 writes `.` for `+`. */
export function decodeB64(text: string, what: string): Buffer {
  if (!B64.test(text)) throw new PasswordHashError(`the ${what} is not base64`);
  return Buffer.from(text.replaceAll('.', '+'), 'base64');
}

/** PHC strings write base64 without padding. */
export function phcB64(bytes: Buffer): string {
  return bytes.toString('base64').replace(/=+$/, '');
}

function wholeNumber(text: string | undefined, what: string, min: number, max: number): number {
  if (text === undefined || !/^\d{1,10}$/.test(text)) throw new PasswordHashError(`${what} is missing or not a whole number`);
  const n = Number(text);
  if (n < min || n > max) throw new PasswordHashError(`${what} ${n} is outside ${min} to ${max}`);
  return n;
}

/** `m=19456,t=2,p=1` → { m: '19456', t: '2', p: '1' } */
function params(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text.split(',')) {
    const [key, value] = part.split('=', 2);
    if (key && value !== undefined) out[key] = value;
  }
  return out;
}

export type Pbkdf2Parts = { digest: 'sha1' | 'sha256' | 'sha512'; iterations: number; salt: Buffer; hash: Buffer };

export function encodePbkdf2(parts: Pbkdf2Parts): ParsedHash {
  const iterations = wholeNumber(String(parts.iterations), 'the PBKDF2 iteration count', 1, LIMITS.pbkdf2Iterations);
  if (parts.hash.length < 16 || parts.hash.length > 128) throw new PasswordHashError(`a PBKDF2 hash of ${parts.hash.length} bytes is not one (16 to 128 bytes)`);
  if (parts.salt.length === 0 || parts.salt.length > 1024) throw new PasswordHashError('the PBKDF2 salt is empty or too long');
  const algorithm = `pbkdf2-${parts.digest}` as const;
  const scheme = `${algorithm}$i=${iterations},l=${parts.hash.length}`;
  return { algorithm, scheme, native: false, encoded: `$${scheme}$${phcB64(parts.salt)}$${phcB64(parts.hash)}` };
}

export type ScryptParts = { n: number; r: number; p: number; salt: Buffer; hash: Buffer };

export function encodeScrypt(parts: ScryptParts): ParsedHash {
  const { n, r, p } = parts;
  if (!Number.isInteger(n) || n < 2 || (n & (n - 1)) !== 0) throw new PasswordHashError(`the scrypt cost N=${n} is not a power of two`);
  if (!Number.isInteger(r) || r < 1 || !Number.isInteger(p) || p < 1 || p > LIMITS.scryptParallelism) throw new PasswordHashError('the scrypt block size or parallelization is out of range');
  if (128 * n * r > LIMITS.scryptMemoryBytes) throw new PasswordHashError(`scrypt with N=${n}, r=${r} needs more than ${LIMITS.scryptMemoryBytes / 1048576} MiB`);
  if (parts.hash.length < 16 || parts.hash.length > 128) throw new PasswordHashError(`a scrypt hash of ${parts.hash.length} bytes is not one (16 to 128 bytes)`);
  const scheme = `scrypt$n=${n},r=${r},p=${p},l=${parts.hash.length}`;
  return { algorithm: 'scrypt', scheme, native: false, encoded: `$scrypt$n=${n},r=${r},p=${p}$${phcB64(parts.salt)}$${phcB64(parts.hash)}` };
}

export type Argon2Parts = { type: 'argon2i' | 'argon2d' | 'argon2id'; version: 16 | 19; m: number; t: number; p: number; salt: Buffer; hash: Buffer };

export function encodeArgon2(parts: Argon2Parts): ParsedHash {
  const m = wholeNumber(String(parts.m), 'the argon2 memory', 8, LIMITS.argon2MemoryKib);
  const t = wholeNumber(String(parts.t), 'the argon2 time cost', 1, LIMITS.argon2Time);
  const p = wholeNumber(String(parts.p), 'the argon2 parallelism', 1, LIMITS.argon2Parallelism);
  if (parts.salt.length < 8 || parts.salt.length > 64) throw new PasswordHashError('the argon2 salt must have 8 to 64 bytes');
  if (parts.hash.length < 4 || parts.hash.length > 128) throw new PasswordHashError('the argon2 hash must have 4 to 128 bytes');
  const encoded = `$${parts.type}$v=${parts.version}$m=${m},t=${t},p=${p}$${phcB64(parts.salt)}$${phcB64(parts.hash)}`;
  const native = parts.type === NATIVE.type && parts.version === NATIVE.version && m === NATIVE.m && t === NATIVE.t && p === NATIVE.p;
  const scheme = `${parts.type}$v=${parts.version},m=${m},t=${t},p=${p},l=${parts.hash.length}`;
  return { algorithm: native ? 'signet' : 'argon2', scheme: native ? 'signet' : scheme, native, encoded };
}

const BCRYPT = /^\$2[abxy]?\$(\d\d)\$[./A-Za-z0-9]{53}$/;

/**
 * Reads a password hash in any form this file knows: bcrypt (`$2a$`, `$2b$`, `$2y$`), argon2 PHC
 * strings, `$scrypt$ln=…|n=…,r=…,p=…$salt$hash`, PBKDF2 as PHC (`$pbkdf2-sha256$i=…[,l=…]$salt$hash`),
 * passlib (`$pbkdf2-sha256$29000$salt$hash`) or Django (`pbkdf2_sha256$260000$salt$hash`).
 */
export function parsePasswordHash(text: string): ParsedHash {
  const value = text.trim();
  const bcrypt = BCRYPT.exec(value);
  if (bcrypt) {
    const cost = wholeNumber(bcrypt[1], 'the bcrypt cost', 4, LIMITS.bcryptCost);
    return { algorithm: 'bcrypt', scheme: `bcrypt$${cost}`, native: false, encoded: value };
  }
  const argon2 = /^\$(argon2id|argon2i|argon2d)\$(?:v=(\d+)\$)?([^$]+)\$([^$]+)\$([^$]+)$/.exec(value);
  if (argon2) {
    const version = argon2[2] === undefined ? 16 : Number(argon2[2]);
    if (version !== 16 && version !== 19) throw new PasswordHashError(`argon2 version ${argon2[2]} is not one (16 or 19)`);
    const given = params(argon2[3]!);
    return encodeArgon2({
      type: argon2[1] as Argon2Parts['type'],
      version,
      m: wholeNumber(given['m'], 'the argon2 memory (m)', 8, LIMITS.argon2MemoryKib),
      t: wholeNumber(given['t'], 'the argon2 time cost (t)', 1, LIMITS.argon2Time),
      p: wholeNumber(given['p'], 'the argon2 parallelism (p)', 1, LIMITS.argon2Parallelism),
      salt: decodeB64(argon2[4]!, 'argon2 salt'),
      hash: decodeB64(argon2[5]!, 'argon2 hash'),
    });
  }
  const scryptHash = /^\$scrypt\$([^$]+)\$([^$]+)\$([^$]+)$/.exec(value);
  if (scryptHash) {
    const given = params(scryptHash[1]!);
    const n = given['ln'] !== undefined ? 2 ** wholeNumber(given['ln'], 'the scrypt cost (ln)', 1, 30) : wholeNumber(given['n'], 'the scrypt cost (n)', 2, 2 ** 30);
    return encodeScrypt({ n, r: wholeNumber(given['r'], 'the scrypt block size (r)', 1, 64), p: wholeNumber(given['p'], 'the scrypt parallelization (p)', 1, LIMITS.scryptParallelism), salt: decodeB64(scryptHash[2]!, 'scrypt salt'), hash: decodeB64(scryptHash[3]!, 'scrypt hash') });
  }
  const pbkdf2Phc = /^\$pbkdf2-(sha1|sha256|sha512)\$([^$]+)\$([^$]+)\$([^$]+)$/.exec(value);
  if (pbkdf2Phc) {
    const digest = pbkdf2Phc[1] as Pbkdf2Parts['digest'];
    const spec = pbkdf2Phc[2]!;
    // PHC (`i=27500,l=64`) or passlib (the bare iteration count)
    const iterations = /^\d+$/.test(spec) ? wholeNumber(spec, 'the PBKDF2 iteration count', 1, LIMITS.pbkdf2Iterations) : wholeNumber(params(spec)['i'], 'the PBKDF2 iteration count (i)', 1, LIMITS.pbkdf2Iterations);
    const hash = decodeB64(pbkdf2Phc[4]!, 'PBKDF2 hash');
    const length = params(spec)['l'];
    if (length !== undefined && Number(length) !== hash.length) throw new PasswordHashError(`the PBKDF2 hash has ${hash.length} bytes, not l=${length}`);
    return encodePbkdf2({ digest, iterations, salt: decodeB64(pbkdf2Phc[3]!, 'PBKDF2 salt'), hash });
  }
  // Django: the salt is text, used as its UTF-8 bytes
  const django = /^pbkdf2_(sha1|sha256)\$(\d+)\$([^$]+)\$([^$]+)$/.exec(value);
  if (django) {
    const iterations = wholeNumber(django[2], 'the PBKDF2 iteration count', 1, LIMITS.pbkdf2Iterations);
    return encodePbkdf2({ digest: django[1] as 'sha1' | 'sha256', iterations, salt: Buffer.from(django[3]!, 'utf8'), hash: decodeB64(django[4]!, 'PBKDF2 hash') });
  }
  throw new PasswordHashError('the password hash is none of bcrypt ($2a$/$2b$/$2y$), argon2 ($argon2id$…), scrypt ($scrypt$…) or PBKDF2 ($pbkdf2-sha256$…, pbkdf2_sha256$…)');
}

function pbkdf2Async(password: BinaryLike, salt: Buffer, iterations: number, length: number, digest: string): Promise<Buffer> {
  return new Promise((resolve, reject) => pbkdf2(password, salt, iterations, length, digest, (error, key) => (error ? reject(error) : resolve(key))));
}

function scryptAsync(password: BinaryLike, salt: Buffer, length: number, options: ScryptOptions): Promise<Buffer> {
  return new Promise((resolve, reject) => scrypt(password, salt, length, options, (error, key) => (error ? reject(error) : resolve(key))));
}

/** The parts of an encoded PBKDF2 or scrypt hash (as encodePbkdf2 / encodeScrypt write them). */
function splitEncoded(encoded: string): { spec: Record<string, string>; salt: Buffer; hash: Buffer } {
  const [, , spec = '', salt = '', hash = ''] = encoded.split('$');
  return { spec: params(spec), salt: decodeB64(salt, 'salt'), hash: decodeB64(hash, 'hash') };
}

/**
 * Whether the password matches an encoded foreign hash (as parsePasswordHash returns it). Compared in
 * constant time by each library (bcrypt, argon2) or with timingSafeEqual. False for anything unreadable.
 */
export async function verifyForeignHash(encoded: string, password: string): Promise<boolean> {
  try {
    if (encoded.startsWith('$2')) return await bcryptVerify(password, encoded);
    if (encoded.startsWith('$argon2')) return await argon2Verify(encoded, password);
    const digest = /^\$pbkdf2-(sha1|sha256|sha512)\$/.exec(encoded)?.[1];
    if (digest !== undefined) {
      const { spec, salt, hash } = splitEncoded(encoded);
      const derived = await pbkdf2Async(password, salt, Number(spec['i']), hash.length, digest);
      return timingSafeEqual(derived, hash);
    }
    if (encoded.startsWith('$scrypt$')) {
      const { spec, salt, hash } = splitEncoded(encoded);
      const [n, r, p] = [Number(spec['n']), Number(spec['r']), Number(spec['p'])];
      const derived = await scryptAsync(password, salt, hash.length, { N: n, r, p, maxmem: 128 * n * r * 2 + 1024 * 1024 });
      return timingSafeEqual(derived, hash);
    }
    return false;
  } catch {
    return false;
  }
}

/** A hash of the scheme with a random salt and hash: what a check of that scheme costs, without any account. */
export function sampleHashOf(scheme: string): string | undefined {
  const salt = phcB64(Buffer.alloc(16, 7));
  const bcrypt = /^bcrypt\$(\d+)$/.exec(scheme);
  if (bcrypt) return `$2b$${bcrypt[1]!.padStart(2, '0')}$${'C'.repeat(53)}`;
  const spec = scheme.slice(scheme.indexOf('$') + 1);
  const given = params(spec);
  const hash = phcB64(Buffer.alloc(Number(given['l'] ?? 32), 9));
  if (scheme.startsWith('pbkdf2-')) return `$${scheme.slice(0, scheme.indexOf('$'))}$i=${given['i']},l=${given['l']}$${salt}$${hash}`;
  if (scheme.startsWith('scrypt$')) return `$scrypt$n=${given['n']},r=${given['r']},p=${given['p']}$${salt}$${hash}`;
  if (scheme.startsWith('argon2')) return `$${scheme.slice(0, scheme.indexOf('$'))}$v=${given['v']}$m=${given['m']},t=${given['t']},p=${given['p']}$${salt}$${hash}`;
  return undefined;
}
