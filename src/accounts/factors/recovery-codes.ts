// Recovery codes (issue 19 item 2): turning a factor on shows ten single-use codes once; they are
// stored only as keyed hashes (bound to the account), each used at most once (one conditional
// UPDATE), and a new set replaces the old one entirely.
import { randomInt } from 'node:crypto';
import type { Clock } from '../../config/clock.ts';
import type { Db } from '../../db/database.ts';
import { keyedHash } from '../../oauth/secrets.ts';
import * as store from './factors.store.ts';

export const RECOVERY_CODE_COUNT = 10;

/** Without 0/o, 1/l/i: easy to read back from paper. 10 characters of 31 ≈ 49.5 bits each. */
const ALPHABET = 'abcdefghjkmnpqrstuvwxyz23456789';
const GROUP = 5;

/** A code as people write it back: case, spaces and dashes do not matter. */
export function normalizeRecoveryCode(input: string): string {
  return input.toLowerCase().replace(/[\s-]/g, '');
}

/** Whether an input has the shape of a recovery code (so it is not taken for a 6-digit code). */
export function looksLikeRecoveryCode(input: string): boolean {
  return new RegExp(`^[${ALPHABET}]{${GROUP * 2}}$`).test(normalizeRecoveryCode(input));
}

function codeHash(key: Buffer, sub: string, code: string): string {
  return keyedHash(key, `recovery\n${sub}\n${normalizeRecoveryCode(code)}`);
}

function newCode(): string {
  const chars = Array.from({ length: GROUP * 2 }, () => ALPHABET[randomInt(ALPHABET.length)]);
  return `${chars.slice(0, GROUP).join('')}-${chars.slice(GROUP).join('')}`;
}

/** Makes a new set of ten codes; the old set stops working. Returns the codes — the only time they exist in the clear. */
export async function newRecoveryCodes(db: Db, key: Buffer, clock: Clock, sub: string): Promise<string[]> {
  const codes = new Set<string>();
  while (codes.size < RECOVERY_CODE_COUNT) codes.add(newCode());
  const now = clock();
  await store.replaceRecoveryCodes(
    db,
    sub,
    [...codes].map((code) => ({ code_hash: codeHash(key, sub, code), sub, created_at: now, used_at: null })),
  );
  return [...codes];
}

/** Uses a recovery code: true once for each of the person's codes, false for anything else or a second use. */
export async function useRecoveryCode(db: Db, key: Buffer, clock: Clock, sub: string, input: string): Promise<boolean> {
  if (!looksLikeRecoveryCode(input)) return false;
  return store.useRecoveryCode(db, sub, codeHash(key, sub, input), clock());
}

export function unusedRecoveryCodes(db: Db, sub: string): Promise<number> {
  return store.countUnusedRecoveryCodes(db, sub);
}

/** The codes as a text file, for the Download action. */
export function recoveryCodesText(productName: string, label: string, codes: readonly string[]): string {
  return [`${productName} recovery codes for ${label}`, 'Each code works once, in place of a code from your authenticator app.', '', ...codes, ''].join('\n');
}
