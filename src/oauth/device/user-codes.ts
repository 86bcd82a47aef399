// RFC 8628 §6.1 user codes: what a person reads off a TV or a terminal and types at /device.
// 8 characters from 20 consonants with no look-alikes (no vowels, so no words; no 0/O, 1/I/L, 5/S
// ambiguity in the mix): 20^8 ≈ 2.6·10^10 codes (34.5 bits), against at most a few dozen wrong entries
// per address and per browser (device-authorizations.ts) during a code's 15 minutes. Shown `XXXX-XXXX`;
// entry ignores case, dashes and spaces.
import { randomInt } from 'node:crypto';

/** RFC 8628 §6.1's example alphabet: "BCDFGHJKLMNPQRSTVWXZ". */
export const USER_CODE_ALPHABET = 'BCDFGHJKLMNPQRSTVWXZ';
export const USER_CODE_LENGTH = 8;

/** A new user code, normalized (8 letters, no dash). */
export function newUserCode(): string {
  let code = '';
  for (let i = 0; i < USER_CODE_LENGTH; i++) code += USER_CODE_ALPHABET[randomInt(USER_CODE_ALPHABET.length)];
  return code;
}

/** How a user code is shown: `XXXX-XXXX`. */
export function displayUserCode(normalized: string): string {
  return `${normalized.slice(0, 4)}-${normalized.slice(4)}`;
}

/**
 * What a person typed, normalized: upper case, without dashes and white space (RFC 8628 §6.1: "the
 * authorization server should … ignore characters like dashes"). Undefined when it cannot be a code.
 */
export function normalizeUserCode(typed: string): string | undefined {
  if (typed.length > 40) return undefined;
  const letters = typed.toUpperCase().replace(/[\s\-‐‑–—]/g, '');
  if (letters.length !== USER_CODE_LENGTH) return undefined;
  for (const ch of letters) if (!USER_CODE_ALPHABET.includes(ch)) return undefined;
  return letters;
}
